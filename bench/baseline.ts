// Baseline for bash40: a bare AI SDK loop — streamText plus the same bash tool run through a
// child process — with no persistence, permissions or events. Usage: bun bench/baseline.ts URL
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { jsonSchema, streamText, tool, type ModelMessage } from "ai"
import { spawn } from "node:child_process"

const url = process.argv[2]!
const model = createOpenAICompatible({ name: "local", baseURL: url, includeUsage: true })("scripted")
const bash = (command: string) =>
  new Promise<string>((resolve) => {
    const child = spawn("/bin/bash", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (b) => (out += b))
    child.stderr.on("data", (b) => (out += b))
    child.on("close", (code) => resolve(`${out}\n(exit code ${code})`))
  })

const messages: Array<ModelMessage> = [{ role: "user", content: "run the commands" }]
const tools = {
  bash: tool({
    description: "Run a shell command",
    inputSchema: jsonSchema<{ command: string }>({ type: "object", properties: { command: { type: "string" } }, required: ["command"] })
  })
}
while (true) {
  const result = streamText({ model, system: "You are a test agent.", messages, tools, maxRetries: 0 })
  const calls: Array<{ toolCallId: string; toolName: string; input: { command: string } }> = []
  let text = ""
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text
    if (part.type === "tool-call") calls.push(part as never)
  }
  if (calls.length === 0) {
    process.stdout.write(`${text}\n`)
    break
  }
  messages.push({
    role: "assistant",
    content: [
      ...(text ? [{ type: "text" as const, text }] : []),
      ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.toolCallId, toolName: c.toolName, input: c.input }))
    ]
  })
  const outputs = await Promise.all(calls.map((c) => bash(c.input.command)))
  messages.push({
    role: "tool",
    content: calls.map((c, i) => ({
      type: "tool-result" as const,
      toolCallId: c.toolCallId,
      toolName: c.toolName,
      output: { type: "text" as const, value: outputs[i]! }
    }))
  })
}
