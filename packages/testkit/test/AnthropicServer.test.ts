import { afterEach, describe, expect, test } from "bun:test"
import { APICallError, jsonSchema, streamText, tool, type SystemModelMessage } from "ai"
import { createAnthropic } from "@ai-sdk/anthropic"
import { approxTokens, PromptCache, requestBlocks, startAnthropicServer, thinkingSignature, type AnthropicServer, type ScriptedStep } from "../src/index.ts"

let server: AnthropicServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const setup = async (steps: ReadonlyArray<ScriptedStep>) => {
  server = await startAnthropicServer(steps)
  return { server, model: createAnthropic({ apiKey: "test", baseURL: server.url })("claude-sonnet-4-5") }
}

const tools = {
  bash: tool({
    description: "Run a shell command",
    inputSchema: jsonSchema<{ command: string }>({ type: "object", properties: { command: { type: "string" } }, required: ["command"] })
  })
}

const cached = { anthropic: { cacheControl: { type: "ephemeral" } } } as const

describe("scripted Anthropic server with @ai-sdk/anthropic", () => {
  test("text, thinking with its signature and tool calls arrive through the SDK; usage carries the cache figures", async () => {
    const { model, server } = await setup([
      { reasoning: "I should list the files.", text: "Listing them.", toolCalls: [{ name: "bash", arguments: { command: "ls -la" }, id: "toolu_1" }] }
    ])
    const result = streamText({ model, prompt: "list", tools, maxRetries: 0 })
    const parts: Array<{ type: string; [k: string]: unknown }> = []
    for await (const part of result.fullStream) parts.push(part)
    expect(await result.text).toBe("Listing them.")
    expect(await result.reasoningText).toBe("I should list the files.")
    // the SDK carries the signature_delta as a reasoning delta's provider metadata
    const signatures = parts.flatMap((p) => {
      const signature = (p as { providerMetadata?: { anthropic?: { signature?: string } } }).providerMetadata?.anthropic?.signature
      return p.type === "reasoning-delta" && signature !== undefined ? [signature] : []
    })
    expect(signatures).toEqual([thinkingSignature("I should list the files.")])
    expect(parts.find((p) => p.type === "tool-call")).toMatchObject({ toolCallId: "toolu_1", toolName: "bash", input: { command: "ls -la" } })
    expect(await result.finishReason).toBe("tool-calls")
    const usage = await result.usage
    const billed = server.requests[0]!.usage!
    // nothing marked: all of it is uncached input
    expect(billed).toEqual({
      input_tokens: approxTokens(
        requestBlocks(server.requests[0]!.body)
          .map((b) => b.text)
          .join("").length
      ),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0
    })
    expect(usage.inputTokens).toBe(billed.input_tokens)
    expect(usage.outputTokens).toBeGreaterThan(0)
  })

  test("a marked system prompt is written once and read by the next request; the SDK reports both", async () => {
    const { model, server } = await setup([{ text: "one" }, { text: "two" }])
    const system: Array<SystemModelMessage> = [
      { role: "system", content: "S".repeat(4000), providerOptions: cached },
      { role: "system", content: "dynamic 1" }
    ]
    const first = streamText({ model, system, prompt: "hi", maxRetries: 0 })
    const u1 = await first.usage
    const second = streamText({ model, system: [system[0]!, { role: "system", content: "dynamic 2" }], prompt: "hi again", maxRetries: 0 })
    const u2 = await second.usage
    const [r1, r2] = server.requests
    expect(r1!.body.system[0].cache_control).toEqual({ type: "ephemeral" })
    expect(r1!.usage!.cache_creation_input_tokens).toBeGreaterThan(1000)
    expect(r1!.usage!.cache_read_input_tokens).toBe(0)
    expect(r2!.usage!.cache_read_input_tokens).toBe(r1!.usage!.cache_creation_input_tokens)
    expect(r2!.usage!.cache_creation_input_tokens).toBe(0)
    expect(u1.inputTokenDetails.cacheWriteTokens).toBe(r1!.usage!.cache_creation_input_tokens)
    expect(u2.inputTokenDetails.cacheReadTokens).toBe(r2!.usage!.cache_read_input_tokens)
    expect(u2.inputTokens).toBe(r2!.usage!.input_tokens + r2!.usage!.cache_read_input_tokens)
  })

  test("an error step is an Anthropic error body with its status", async () => {
    const { model } = await setup([{ error: { status: 529, message: "Overloaded", type: "overloaded_error" } }])
    const result = streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} })
    let error: unknown
    for await (const part of result.fullStream) if (part.type === "error") error = part.error
    expect(APICallError.isInstance(error)).toBe(true)
    expect((error as APICallError).statusCode).toBe(529)
    expect((error as APICallError).message).toBe("Overloaded")
  })
})

/** A request body with these messages (each a user or assistant text) and markers on the given message indexes. */
const body = (system: string, texts: ReadonlyArray<string>, marked: ReadonlyArray<number>, markSystem = true) => ({
  system: [{ type: "text", text: system, ...(markSystem ? { cache_control: { type: "ephemeral" } } : {}) }],
  messages: texts.map((text, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: [{ type: "text", text, ...(marked.includes(i) ? { cache_control: { type: "ephemeral" } } : {}) }]
  }))
})

const prefixTokens = (b: unknown, blocks: number) =>
  approxTokens(
    requestBlocks(b)
      .slice(0, blocks)
      .map((x) => x.text)
      .join("").length
  )

describe("PromptCache accounting", () => {
  test("nothing marked: every token is uncached input, and nothing is cached", () => {
    const cache = new PromptCache()
    const b = body("system", ["a".repeat(400)], [], false)
    const total = prefixTokens(b, 2)
    expect(cache.bill(b)).toEqual({ input_tokens: total, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
    expect(cache.bill(b)).toEqual({ input_tokens: total, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
  })

  test("first request writes up to its last marker; the rest is input; the same request again reads it all", () => {
    const cache = new PromptCache()
    const b = body("s".repeat(800), ["u1".repeat(100), "a1".repeat(100), "u2".repeat(100)], [1])
    const total = prefixTokens(b, 4)
    const marked = prefixTokens(b, 3)
    expect(cache.bill(b)).toEqual({ input_tokens: total - marked, cache_read_input_tokens: 0, cache_creation_input_tokens: marked })
    expect(cache.bill(b)).toEqual({ input_tokens: total - marked, cache_read_input_tokens: marked, cache_creation_input_tokens: 0 })
  })

  test("markers moving to the last messages: the previous request's marked prefix is read, the new part written", () => {
    const cache = new PromptCache()
    const texts = ["u1", "a1", "u2"].map((t) => t.repeat(200))
    const step1 = body("s".repeat(800), texts, [1, 2])
    cache.bill(step1)
    const step2 = body("s".repeat(800), [...texts, "a2".repeat(200), "u3".repeat(200)], [3, 4])
    const usage = cache.bill(step2)
    // the old last marker (system + 3 messages) is found by the lookback from the new markers
    expect(usage.cache_read_input_tokens).toBe(prefixTokens(step2, 4))
    expect(usage.cache_creation_input_tokens).toBe(prefixTokens(step2, 6) - prefixTokens(step2, 4))
    expect(usage.input_tokens).toBe(0)
  })

  test("a changed byte before a marker misses: the system block must be identical to be read", () => {
    const cache = new PromptCache()
    cache.bill(body("static header v1", ["u1".repeat(300)], [0]))
    const changed = body("static header v2", ["u1".repeat(300)], [0])
    expect(cache.bill(changed)).toEqual({ input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: prefixTokens(changed, 2) })
  })

  test("cache_control itself is not part of the cached bytes; a prefix further back than the lookback is not found", () => {
    const cache = new PromptCache()
    const texts = Array.from({ length: 30 }, (_, i) => `message ${i} `.repeat(20))
    cache.bill(body("sys", texts.slice(0, 5), [4], false))
    // same bytes, the marker now 25 blocks later: the cached prefix (5 messages) is outside the 20-block lookback
    const far = body("sys", texts, [29], false)
    expect(cache.bill(far).cache_read_input_tokens).toBe(0)
    // a marker within 20 blocks of it finds it again
    const near = body("sys", texts.slice(0, 20), [19], false)
    expect(cache.bill(near).cache_read_input_tokens).toBe(prefixTokens(near, 6))
  })

  test("tools come first in the prefix: a changed tool invalidates the system block's cache", () => {
    const cache = new PromptCache()
    const withTools = (description: string) => ({
      tools: [{ name: "bash", description, input_schema: { type: "object" } }],
      ...body("s".repeat(400), ["hi"], [])
    })
    cache.bill(withTools("Run a command"))
    expect(cache.bill(withTools("Run a command")).cache_read_input_tokens).toBeGreaterThan(0)
    expect(cache.bill(withTools("Run a shell command")).cache_read_input_tokens).toBe(0)
  })
})
