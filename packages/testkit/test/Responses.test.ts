import { afterEach, expect, test } from "bun:test"
import { jsonSchema, streamText, tool } from "ai"
import { createOpenAI } from "@ai-sdk/openai"
import { startScriptedServer, type ScriptedServer } from "../src/index.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

test("the Responses API route streams text and tool calls to @ai-sdk/openai and records the body", async () => {
  server = await startScriptedServer([
    {
      text: "Running it.",
      toolCalls: [{ name: "bash", arguments: { command: "ls" }, id: "call_1" }],
      usage: { prompt_tokens: 50, completion_tokens: 7, cached_tokens: 20 }
    }
  ])
  const model = createOpenAI({ apiKey: "x", baseURL: server.url })("gpt-5")
  const tools = {
    bash: tool({ description: "Run", inputSchema: jsonSchema<{ command: string }>({ type: "object", properties: { command: { type: "string" } } }) })
  }
  const result = streamText({ model, prompt: "go", tools, maxRetries: 0, providerOptions: { openai: { promptCacheKey: "ses_1" } } })
  const calls: Array<unknown> = []
  for await (const part of result.fullStream) if (part.type === "tool-call") calls.push(part)
  expect(await result.text).toBe("Running it.")
  expect(calls).toMatchObject([{ toolCallId: "call_1", toolName: "bash", input: { command: "ls" } }])
  const usage = await result.usage
  expect(usage.inputTokens).toBe(50)
  expect(usage.inputTokenDetails.cacheReadTokens).toBe(20)
  expect(server.requests[0]!.body.prompt_cache_key).toBe("ses_1")
})
