import { describe, expect, test } from "bun:test"
import type { ModelMessage } from "ai"
import { cacheCallOptions, cacheStyle, withCacheMarkers } from "../src/Cache.ts"

const messages = (): Array<ModelMessage> => [
  { role: "user", content: [{ type: "text", text: "one" }] },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: {} }], providerOptions: { anthropic: { signature: "kept" } } },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: "ok" } }] },
  { role: "user", content: [{ type: "text", text: "two" }] }
]

const ANTHROPIC = { anthropic: { cacheControl: { type: "ephemeral" } } }

describe("cacheStyle", () => {
  test.each([
    ["anthropic", "claude-sonnet-4-5", { kind: "markers", options: ANTHROPIC }],
    ["bedrock", "us.anthropic.claude-sonnet-4-5-v1:0", { kind: "markers", options: { bedrock: { cachePoint: { type: "default" } } } }],
    ["amazon-bedrock", "amazon.nova-pro-v1:0", { kind: "markers", options: { bedrock: { cachePoint: { type: "default" } } } }],
    ["bedrock", "meta.llama3-70b", { kind: "none" }],
    ["openrouter", "anthropic/claude-sonnet-4.5", { kind: "markers", options: { openrouter: { cacheControl: { type: "ephemeral" } } } }],
    ["openrouter", "openai/gpt-5", { kind: "none" }],
    ["openai", "gpt-5", { kind: "key", keys: ["openai"] }],
    ["azure", "gpt-5", { kind: "key", keys: ["azure", "openai"] }],
    ["openai-compatible", "claude-sonnet-4-5", { kind: "none" }]
  ] as const)("%s %s", (type, model, expected) => {
    expect(cacheStyle(type, model)).toEqual(expected)
  })
})

describe("withCacheMarkers", () => {
  test("anthropic: each system part its own block, the first 2 marked; the last 2 messages marked; nothing else", () => {
    const input = messages()
    const before = structuredClone(input)
    const { system, messages: out } = withCacheMarkers(["header", "env", "note"], input, cacheStyle("anthropic", "claude-sonnet-4-5"))
    expect(system).toEqual([
      { role: "system", content: "header", providerOptions: ANTHROPIC },
      { role: "system", content: "env", providerOptions: ANTHROPIC },
      { role: "system", content: "note" }
    ])
    expect(out.map((m) => m.providerOptions)).toEqual([undefined, { anthropic: { signature: "kept" } }, ANTHROPIC, ANTHROPIC])
    // the caller's messages are left as they were: Transform shares them across steps
    expect(input).toEqual(before)
  })

  test("options already on a marked message are kept beside the marker", () => {
    const input = messages().slice(0, 2)
    const { messages: out } = withCacheMarkers(["h"], input, cacheStyle("anthropic", "claude-sonnet-4-5"))
    expect(out[1]!.providerOptions).toEqual({ anthropic: { signature: "kept", cacheControl: { type: "ephemeral" } } })
  })

  test("one message and one system part: both marked; empty system parts are left out", () => {
    const { system, messages: out } = withCacheMarkers(["", "env"], messages().slice(0, 1), cacheStyle("anthropic", "claude-sonnet-4-5"))
    expect(system).toEqual([{ role: "system", content: "env", providerOptions: ANTHROPIC }])
    expect(out[0]!.providerOptions).toEqual(ANTHROPIC)
  })

  test("providers without markers get one system text and the messages untouched", () => {
    const input = messages()
    const { system, messages: out } = withCacheMarkers(["header", "env"], input, cacheStyle("openai", "gpt-5"))
    expect(system).toBe("header\n\nenv")
    expect(out).toBe(input)
  })
})

describe("cacheCallOptions", () => {
  test("OpenAI gets the session id as promptCacheKey; marker providers and calls without a session get nothing", () => {
    expect(cacheCallOptions(cacheStyle("openai", "gpt-5"), "ses_1")).toEqual({ openai: { promptCacheKey: "ses_1" } })
    expect(cacheCallOptions(cacheStyle("azure", "gpt-5"), "ses_1")).toEqual({ azure: { promptCacheKey: "ses_1" }, openai: { promptCacheKey: "ses_1" } })
    expect(cacheCallOptions(cacheStyle("openai", "gpt-5"), undefined)).toBeUndefined()
    expect(cacheCallOptions(cacheStyle("anthropic", "claude-sonnet-4-5"), "ses_1")).toBeUndefined()
  })
})
