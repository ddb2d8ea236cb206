import { afterEach, describe, expect, test } from "bun:test"
import { APICallError, generateText, jsonSchema, streamText, tool, type TextStreamPart, type ToolSet } from "ai"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { tmpdir } from "node:os"
import { startScriptedServer, waitFor, type ScriptedServer, type ScriptedServerOptions, type ScriptedStep } from "../src/index.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

async function setup(steps: ScriptedStep[], options?: ScriptedServerOptions) {
  server = await startScriptedServer(steps, options)
  const provider = createOpenAICompatible({ name: "scripted", baseURL: server.url, apiKey: "x", includeUsage: true })
  return { server, model: provider.chatModel("test-model") }
}

const tools = {
  bash: tool({
    description: "Run a shell command",
    inputSchema: jsonSchema<{ command: string }>({
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"]
    })
  })
}

async function collect<T extends ToolSet>(stream: AsyncIterable<TextStreamPart<T>>) {
  const parts: TextStreamPart<T>[] = []
  for await (const part of stream) parts.push(part)
  return parts
}

describe("ScriptedServer with the AI SDK", () => {
  test("streams text and reasoning completely, in several deltas", async () => {
    const { model } = await setup([{ reasoning: "Let me think.", text: "Hello there, this is a scripted reply." }])
    const result = streamText({ model, prompt: "hi", maxRetries: 0 })
    const parts = await collect(result.fullStream)
    expect(await result.text).toBe("Hello there, this is a scripted reply.")
    expect(await result.reasoningText).toBe("Let me think.")
    expect(parts.filter((p) => p.type === "text-delta").length).toBeGreaterThan(1)
    expect(await result.finishReason).toBe("stop")
  })

  test("tool calls arrive as tool-call parts with parsed input", async () => {
    const { model } = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "ls -la /tmp" }, id: "call_1" }] }])
    const result = streamText({ model, prompt: "list", tools, maxRetries: 0 })
    const parts = await collect(result.fullStream)
    const call = parts.find((p) => p.type === "tool-call")
    expect(call).toMatchObject({ type: "tool-call", toolCallId: "call_1", toolName: "bash", input: { command: "ls -la /tmp" } })
    const finishStep = parts.find((p) => p.type === "finish-step")
    expect(finishStep).toMatchObject({ finishReason: "tool-calls", rawFinishReason: "tool_calls" })
    expect(await result.finishReason).toBe("tool-calls")
  })

  test("usage numbers come through finish-step", async () => {
    const { model } = await setup([{ text: "ok", usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 40 } }, { text: "default usage" }])
    const parts = await collect(streamText({ model, prompt: "hi", maxRetries: 0 }).fullStream)
    const step = parts.find((p) => p.type === "finish-step")
    if (step?.type !== "finish-step") throw new Error("no finish-step")
    expect(step.usage).toMatchObject({ inputTokens: 100, outputTokens: 20, totalTokens: 120 })
    expect(step.usage.inputTokenDetails).toMatchObject({ cacheReadTokens: 40, noCacheTokens: 60 })
    const second = await streamText({ model, prompt: "hi", maxRetries: 0 }).usage
    expect(second.inputTokens).toBeGreaterThan(0)
    expect(second.outputTokens).toBe(Math.ceil("default usage".length / 4))
  })

  test("error steps surface as APICallError error parts", async () => {
    const { server, model } = await setup([
      { error: { status: 429, message: "slow down", type: "rate_limit", code: "rate_limited", headers: { "retry-after-ms": "1500" } } },
      { text: "after" }
    ])
    const parts = await collect(streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} }).fullStream)
    const err = parts.find((p) => p.type === "error")
    if (err?.type !== "error") throw new Error("no error part")
    expect(APICallError.isInstance(err.error)).toBe(true)
    const apiError = err.error as APICallError
    expect(apiError.statusCode).toBe(429)
    expect(apiError.message).toBe("slow down")
    expect(apiError.isRetryable).toBe(true)
    expect(apiError.responseHeaders?.["retry-after-ms"]).toBe("1500")
    expect(server.remaining()).toBe(1)
  })

  test("records request bodies and headers", async () => {
    const { server, model } = await setup([{ text: "ok" }])
    await streamText({ model, system: "be brief", prompt: "list files", tools, maxRetries: 0 }).consumeStream()
    expect(server.requests).toHaveLength(1)
    const { body, headers } = server.requests[0]!
    expect(body.model).toBe("test-model")
    expect(body.stream).toBe(true)
    expect(body.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "list files" }
    ])
    expect(body.tools[0].function.name).toBe("bash")
    expect(body.tools[0].function.parameters.required).toEqual(["command"])
    expect(headers.authorization).toBe("Bearer x")
  })

  test("respond answers a request without using the script; times and sizes are recorded; keepBodies: false drops bodies", async () => {
    const responded: number[] = []
    const { server, model } = await setup([{ text: "from the script" }], {
      respond: (body) => (body.tools === undefined ? { text: "answered by respond" } : undefined),
      onResponded: (index) => void responded.push(index),
      keepBodies: false
    })
    const first = await streamText({ model, prompt: "no tools", maxRetries: 0 }).text
    const second = await streamText({ model, prompt: "with tools", tools, maxRetries: 0 }).text
    expect([first, second]).toEqual(["answered by respond", "from the script"])
    expect(server.remaining()).toBe(0)
    expect(responded).toEqual([0, 1])
    for (const r of server.requests) {
      expect(r.body).toBeUndefined()
      expect(r.bodyLength).toBeGreaterThan(0)
      expect(r.respondedAt).toBeGreaterThanOrEqual(r.receivedAt)
    }
    expect(server.requests[1]!.receivedAt).toBeGreaterThanOrEqual(server.requests[0]!.respondedAt!)
  })

  test("non-stream requests get a chat.completion", async () => {
    const { model } = await setup([{ text: "plain", toolCalls: [{ name: "bash", arguments: { command: "pwd" } }] }])
    const result = await generateText({ model, prompt: "hi", tools, maxRetries: 0 })
    expect(result.text).toBe("plain")
    expect(result.toolCalls[0]).toMatchObject({ toolName: "bash", input: { command: "pwd" } })
    expect(result.finishReason).toBe("tool-calls")
  })

  test("runs out loudly, or repeats the last step", async () => {
    const { model } = await setup([{ text: "one" }])
    await streamText({ model, prompt: "hi", maxRetries: 0 }).consumeStream()
    const parts = await collect(streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} }).fullStream)
    const err = parts.find((p) => p.type === "error")
    expect(err?.type === "error" && (err.error as APICallError).statusCode).toBe(500)
    await server?.stop()
    const again = await setup([{ text: "first" }, { text: "last" }], { repeatLast: true })
    const texts: string[] = []
    for (let i = 0; i < 3; i++) texts.push(await streamText({ model: again.model, prompt: "hi", maxRetries: 0 }).text)
    expect(texts).toEqual(["first", "last", "last"])
  })

  test("hang steps keep the stream open until aborted", async () => {
    const { server, model } = await setup([{ hang: true }])
    const controller = new AbortController()
    const parts = collect(streamText({ model, prompt: "hi", maxRetries: 0, abortSignal: controller.signal }).fullStream)
    await waitFor(() => server.requests[0]?.stalledAt, "the server to hold the stream open")
    // wall time: the stream stays open for a while after that (it is a wait for nothing)
    await Bun.sleep(100)
    controller.abort()
    expect((await parts).map((p) => p.type)).toEqual(["start", "abort"])
  })

  test("holdUntil: nothing of the answer is sent until the test releases it", async () => {
    const released = Promise.withResolvers<void>()
    const { server, model } = await setup([{ text: "held back", holdUntil: released.promise }])
    let answered = false
    const text = Promise.resolve(streamText({ model, prompt: "hi", maxRetries: 0 }).text).then((t) => {
      answered = true
      return t
    })
    await waitFor(() => server.requests.length === 1, "the request to reach the server")
    expect(answered).toBe(false)
    expect(server.requests[0]!.respondedAt).toBeUndefined()
    released.resolve()
    expect(await text).toBe("held back")
    expect(server.requests[0]!.respondedAt).toBeNumber()
  })
})

test("cli prints the URL and serves the script", async () => {
  const script = `${tmpdir()}/reins-testkit-${crypto.randomUUID()}.json`
  await Bun.write(script, JSON.stringify([{ text: "from cli" }]))
  const proc = Bun.spawn(["bun", `${import.meta.dir}/../src/cli.ts`, script], { stdout: "pipe" })
  try {
    const reader = proc.stdout.getReader()
    let out = ""
    while (!out.includes("\n")) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    const url = out.split("\n")[0]!
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    const models = (await (await fetch(`${url}/models`)).json()) as { data: unknown[] }
    expect(models.data).toHaveLength(1)
    const provider = createOpenAICompatible({ name: "scripted", baseURL: url, apiKey: "x" })
    expect(await streamText({ model: provider.chatModel("m"), prompt: "hi", maxRetries: 0 }).text).toBe("from cli")
  } finally {
    proc.kill()
    await proc.exited
    await Bun.file(script).delete()
  }
})

describe("ScriptedServer: providers that hang or misbehave", () => {
  const post = (url: string, signal?: AbortSignal) =>
    fetch(`${url}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", stream: true, messages: [] }), ...(signal ? { signal } : {}) })

  test("stall headers: no response until the client gives up, which the server records", async () => {
    server = await startScriptedServer([{ stall: "headers" }])
    const controller = new AbortController()
    const answer = post(server.url, controller.signal).then(
      () => "answered",
      (e: Error) => e.name
    )
    await waitFor(() => server!.requests[0]?.stalledAt, "the server to hold the request")
    // wall time: no answer comes for a while after that (it is a wait for nothing)
    await Bun.sleep(100)
    controller.abort()
    expect(await answer).toBe("AbortError")
    expect(await waitFor(() => server!.requests[0]!.abortedAt, "the server to see the client go")).toBeNumber()
    expect(server.requests[0]!.respondedAt).toBeUndefined()
  })

  test("stall body: event-stream headers arrive, then not one byte", async () => {
    server = await startScriptedServer([{ stall: "body" }, { text: "after" }])
    const response = await post(server.url)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(server.requests[0]!.stalledAt).toBeNumber()
    const reader = response.body!.getReader()
    // wall time: no byte comes for a while after the headers (it is a wait for nothing)
    const first = await Promise.race([reader.read().then(() => "bytes"), Bun.sleep(200).then(() => "nothing")])
    expect(first).toBe("nothing")
    await reader.cancel()
    const model = createOpenAICompatible({ name: "s", baseURL: server.url }).chatModel("m")
    expect(await streamText({ model, prompt: "hi", maxRetries: 0 }).text).toBe("after")
  })

  test("stallAfterChunks streams part of the answer and holds the connection open", async () => {
    const { model } = await setup([{ text: "one two three four five six", stallAfterChunks: 2 }])
    const controller = new AbortController()
    const parts: string[] = []
    const done = (async () => {
      for await (const part of streamText({ model, prompt: "hi", maxRetries: 0, abortSignal: controller.signal }).fullStream) {
        parts.push(part.type)
        // wall time: after its first chunks the stream stays open for a while (it is a wait for nothing)
        if (part.type === "text-delta") setTimeout(() => controller.abort(), 150)
      }
    })()
    await done
    expect(parts).toContain("text-delta")
    expect(parts).not.toContain("finish-step")
    expect(parts.at(-1)).toBe("abort")
    expect(server!.requests[0]!.stalledAt).toBeNumber()
    expect(await waitFor(() => server!.requests[0]!.abortedAt, "the server to see the client go")).toBeNumber()
  })

  test("closeAfterChunks ends the stream without a finish reason", async () => {
    const { model } = await setup([
      { text: "one two three four five six", closeAfterChunks: 2 },
      { text: "whole", closeAfterChunks: 0 }
    ])
    const parts = await collect(streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} }).fullStream)
    expect(parts.filter((p) => p.type === "text-delta").length).toBeGreaterThan(0)
    const err = parts.find((p) => p.type === "error")
    expect(err?.type === "error" && (err.error as Error).message).toContain("without a finish reason")
    const empty = await collect(streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} }).fullStream)
    expect(empty.filter((p) => p.type === "text-delta")).toHaveLength(0)
    expect(empty.some((p) => p.type === "error")).toBe(true)
  })

  test("raw answers with the given status, content type and body", async () => {
    server = await startScriptedServer([
      { raw: { body: "<html><title>Welcome to nginx!</title></html>" } },
      { raw: { status: 502, contentType: "text/plain", body: "bad gateway" } }
    ])
    const page = await post(server.url)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain("Welcome to nginx!")
    const gateway = await post(server.url)
    expect([gateway.status, await gateway.text()]).toEqual([502, "bad gateway"])
  })
})
