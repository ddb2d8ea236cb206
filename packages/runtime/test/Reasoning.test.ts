// Provider options and reasoning (T22) end to end: the runtime over the real @ai-sdk/anthropic and
// @ai-sdk/openai talking HTTP to the testkit's scripted servers; assertions on the request bodies.
import { afterEach, describe, expect, test } from "bun:test"
import type { ModelRef, Part } from "@reins/domain"
import { Storage } from "@reins/storage"
import { encryptedReasoning, startAnthropicServer, startScriptedServer, thinkingSignature, type ScriptedStep } from "@reins/testkit"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { runIn, sessionTurns, tmp } from "./support.ts"

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

const runtime = (config: Record<string, unknown>) =>
  makeRuntime({ cwd: tmp(), dataDir: tmp(), env: {}, config: config as RuntimeOptions["config"], store: Storage.layerMemory, permission: { yolo: true } })

/** One prompt per model given, on one session: the stored messages and the session id. */
const turns = (layer: ReturnType<typeof runtime>, models: ReadonlyArray<ModelRef>) =>
  runIn(layer, sessionTurns(models.map((model, i) => ({ text: `request ${i + 1}`, model }))))

const SONNET: ModelRef = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
const anthropicConfig = (url: string, models?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  provider: { anthropic: { type: "anthropic", baseURL: url, apiKey: "test-key", ...(models ? { models } : {}) } },
  ...extra
})

type Block = { type: string; [k: string]: unknown }
type AnthropicBody = {
  model: string
  max_tokens: number
  thinking?: { type: string; budget_tokens?: number }
  metadata?: unknown
  messages: Array<{ role: string; content: Array<Block> }>
  system: Array<Block>
}
const blocks = (body: AnthropicBody, type: string) => body.messages.flatMap((m) => m.content.filter((b) => b.type === type))

// a call id Anthropic would refuse: only [a-zA-Z0-9_-] is allowed
const ODD_ID = "call:1.read/x"
const bash = (command: string, id?: string) => ({ name: "bash", arguments: { command, description: command }, ...(id ? { id } : {}) })

describe("Anthropic: thinking with --variant, signatures replayed, dropped for another model", () => {
  test("--variant high asks for a thinking budget of 16000 under a larger max_tokens; thinking blocks are replayed with their signatures on the next step and the next turn; tool-call ids are sanitised in the call and its result", async () => {
    const server = await startAnthropicServer([
      { reasoning: "First I list the files.", toolCalls: [bash("echo one", ODD_ID)] },
      { reasoning: "The listing is enough.", text: "Listed." },
      { text: "Again." }
    ])
    stops.push(() => server.stop())
    const high = { ...SONNET, variant: "high" }
    const { messages } = await turns(runtime(anthropicConfig(server.url)), [high, high])
    const bodies = server.requests.map((r) => r.body as AnthropicBody)
    expect(bodies).toHaveLength(3)
    for (const body of bodies) {
      expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 16_000 })
      // thinking and answer within the model's 64k output: the budget plus the rest for the answer
      expect(body.max_tokens).toBe(64_000)
    }
    // step 2: the first thinking block, signed, before the tool use; the id sanitised in both places
    expect(blocks(bodies[1]!, "thinking")).toEqual([
      { type: "thinking", thinking: "First I list the files.", signature: thinkingSignature("First I list the files.") }
    ])
    const assistant = bodies[1]!.messages.find((m) => m.role === "assistant")!
    expect(assistant.content.map((b) => b.type)).toEqual(["thinking", "tool_use"])
    expect(blocks(bodies[1]!, "tool_use")[0]!.id).toBe("call_1_read_x")
    expect(blocks(bodies[1]!, "tool_result")[0]!.tool_use_id).toBe("call_1_read_x")
    expect(JSON.stringify(bodies[1])).not.toContain(ODD_ID)
    // turn 2: both thinking blocks of turn 1, each with its signature
    expect(blocks(bodies[2]!, "thinking").map((b) => [b.thinking, b.signature])).toEqual([
      ["First I list the files.", thinkingSignature("First I list the files.")],
      ["The listing is enough.", thinkingSignature("The listing is enough.")]
    ])
    // stored: the reasoning parts keep the signature; the assistant messages the variant
    const reasoning = messages.flatMap((m) => m.parts).filter((p): p is Extract<Part, { type: "reasoning" }> => p.type === "reasoning")
    expect(reasoning.map((p) => p.providerMetadata)).toEqual([
      { anthropic: { signature: thinkingSignature("First I list the files.") } },
      { anthropic: { signature: thinkingSignature("The listing is enough.") } }
    ])
    expect(messages.flatMap((m) => (m.info.role === "assistant" ? [m.info.model.variant] : []))).toEqual(["high", "high", "high"])
  })

  test("after a switch to another model the thinking blocks are not sent; the text and tool calls are", async () => {
    const server = await startAnthropicServer([
      { reasoning: "Thinking as Sonnet.", toolCalls: [bash("echo one", "toolu_a")] },
      { reasoning: "Still Sonnet.", text: "Done as Sonnet." },
      { text: "Done as Opus." },
      { text: "Back to Sonnet." }
    ])
    stops.push(() => server.stop())
    const opus: ModelRef = { providerID: "anthropic", modelID: "claude-opus-4-1" }
    await turns(runtime(anthropicConfig(server.url)), [{ ...SONNET, variant: "low" }, opus, SONNET])
    const bodies = server.requests.map((r) => r.body as AnthropicBody)
    expect(bodies).toHaveLength(4)
    expect(bodies[0]!.thinking).toEqual({ type: "enabled", budget_tokens: 4_000 })
    expect(blocks(bodies[1]!, "thinking")).toHaveLength(1)
    // Opus sees Sonnet's work but not its thinking
    expect(bodies[2]!.model).toBe("claude-opus-4-1")
    expect(bodies[2]!.thinking).toBeUndefined()
    expect(blocks(bodies[2]!, "thinking")).toEqual([])
    expect(blocks(bodies[2]!, "tool_use").map((b) => b.id)).toEqual(["toolu_a"])
    expect(blocks(bodies[2]!, "text").map((b) => b.text)).toContain("Done as Sonnet.")
    // back on Sonnet, its own thinking is replayed again
    expect(blocks(bodies[3]!, "thinking").map((b) => b.thinking)).toEqual(["Thinking as Sonnet.", "Still Sonnet."])
  })

  test("config options, a custom variant and the config's default variant reach the request, beside the cache markers", async () => {
    const server = await startAnthropicServer([{ text: "one" }, { text: "two" }, { text: "three" }])
    stops.push(() => server.stop())
    const models = {
      "claude-sonnet-4-5": {
        options: { metadata: { userId: "user-7" }, thinking: { type: "enabled", budgetTokens: 2_048 } },
        variants: { deep: { thinking: { type: "enabled", budgetTokens: 30_000 } } }
      }
    }
    // the model's options; then its custom variant; then the config's top-level variant (built-in "medium")
    await turns(runtime(anthropicConfig(server.url, models)), [SONNET, { ...SONNET, variant: "deep" }])
    const noVariant = await startAnthropicServer([{ text: "four" }])
    stops.push(() => noVariant.stop())
    await turns(runtime(anthropicConfig(noVariant.url, undefined, { variant: "medium" })), [SONNET])
    const bodies = [...server.requests, ...noVariant.requests].map((r) => r.body as AnthropicBody)
    expect(bodies.map((b) => b.thinking?.budget_tokens)).toEqual([2_048, 30_000, 10_000])
    expect(bodies[0]!.metadata).toEqual({ user_id: "user-7" })
    expect(bodies[1]!.metadata).toEqual({ user_id: "user-7" })
    for (const body of bodies) expect(body.system[0]!.cache_control).toEqual({ type: "ephemeral" })
  })

  test("an unknown variant is an error naming the known ones, before any request", async () => {
    const server = await startAnthropicServer([{ text: "never" }])
    stops.push(() => server.stop())
    const models = { "claude-sonnet-4-5": { variants: { deep: { thinking: { type: "enabled", budgetTokens: 30_000 } } } } }
    const error = await turns(runtime(anthropicConfig(server.url, models)), [{ ...SONNET, variant: "hgih" }]).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toMatchObject({ _tag: "ProviderError", reason: "invalid" })
    expect((error as Error).message).toBe(
      'Unknown variant "hgih" for anthropic/claude-sonnet-4-5: use one of minimal, low, medium, high, max, deep (or define it under provider.anthropic.models.claude-sonnet-4-5.variants in reins.json).'
    )
    expect(server.requests).toHaveLength(0)
  })
})

type ResponsesBody = {
  reasoning?: { effort?: string; summary?: string }
  include?: Array<string>
  store?: boolean
  prompt_cache_key?: string
  text?: { verbosity?: string }
  input: Array<{ type?: string; role?: string; [k: string]: unknown }>
}

describe("OpenAI Responses: reasoning effort and encrypted reasoning replayed", () => {
  const script: ReadonlyArray<ScriptedStep> = [
    { reasoning: "Plan: run one command.", toolCalls: [bash("echo one", "call_1")] },
    { text: "Ran it." },
    { text: "Still here." }
  ]

  test("--variant high sends reasoning.effort high with a summary, store false and include encrypted_content; the reasoning item is replayed with its encrypted content on the next step and turn", async () => {
    const server = await startScriptedServer(script)
    stops.push(() => server.stop())
    const model: ModelRef = { providerID: "openai", modelID: "gpt-5", variant: "high" }
    const { sessionID, messages } = await turns(runtime({ provider: { openai: { type: "openai", baseURL: server.url, apiKey: "test-key" } } }), [model, model])
    const bodies = server.requests.map((r) => r.body as ResponsesBody)
    expect(bodies).toHaveLength(3)
    for (const body of bodies) {
      expect(body.reasoning).toEqual({ effort: "high", summary: "auto" })
      expect(body.include).toContain("reasoning.encrypted_content")
      expect(body.store).toBe(false)
      // the cache key is still there beside the variant's options
      expect(body.prompt_cache_key).toBe(sessionID)
    }
    const stored = messages.flatMap((m) => m.parts).find((p): p is Extract<Part, { type: "reasoning" }> => p.type === "reasoning")!
    expect(stored.text).toBe("Plan: run one command.")
    expect(stored.providerMetadata?.openai).toMatchObject({ reasoningEncryptedContent: encryptedReasoning("Plan: run one command.") })
    for (const body of bodies.slice(1)) {
      const replayed = body.input.filter((i) => i.type === "reasoning")
      expect(replayed).toEqual([
        {
          type: "reasoning",
          id: (stored.providerMetadata!.openai as { itemId: string }).itemId,
          encrypted_content: encryptedReasoning("Plan: run one command."),
          summary: [{ type: "summary_text", text: "Plan: run one command." }]
        }
      ])
      // before its function call, as it came
      const at = body.input.findIndex((i) => i.type === "reasoning")
      expect(body.input[at + 1]!.type).toBe("function_call")
    }
  })

  test("config options reach the body; without a variant no effort is sent", async () => {
    const server = await startScriptedServer([{ text: "ok" }])
    stops.push(() => server.stop())
    const config = {
      provider: {
        openai: {
          type: "openai",
          baseURL: server.url,
          apiKey: "test-key",
          models: { "gpt-5": { options: { textVerbosity: "low", reasoningSummary: "detailed" } } }
        }
      }
    }
    await turns(runtime(config), [{ providerID: "openai", modelID: "gpt-5" }])
    const body = server.requests[0]!.body as ResponsesBody
    expect(body.text?.verbosity).toBe("low")
    expect(body.reasoning).toEqual({ summary: "detailed" })
    expect(body.store).toBe(false)
  })
})
