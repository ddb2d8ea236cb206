import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Logger, Stream } from "effect"
import { startScriptedServer, type ScriptedServer } from "@reins/testkit"
import { CATALOGUE_SOURCE, catalogue, cost, lookupModel, modelInfo, UNKNOWN_MODEL } from "../src/Models.ts"
import { Provider, toUsage, type ProviderSettings } from "../src/Provider.ts"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { hi, withProvider } from "./support.ts"

const models = () => Object.values(catalogue()).reduce((n, table) => n + Object.keys(table).length, 0)

describe("the shipped catalogue", () => {
  test("says where it comes from and covers the providers reins builds in", () => {
    expect(CATALOGUE_SOURCE.models).toContain("models.dev")
    expect(CATALOGUE_SOURCE.prices).toContain("genai-prices")
    expect(Object.keys(catalogue()).sort()).toEqual([
      "amazon-bedrock",
      "anthropic",
      "azure",
      "deepseek",
      "google",
      "groq",
      "mistral",
      "openai",
      "openrouter",
      "xai"
    ])
    expect(models()).toBeGreaterThan(300)
  })

  test("a model has limits, prices and capabilities", () => {
    expect(modelInfo({ type: "anthropic" }, "claude-sonnet-4-5", "anthropic")).toMatchObject({
      context: 200_000,
      output: 64_000,
      price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      tools: true,
      reasoning: true,
      images: true
    })
    expect(modelInfo({ type: "openai" }, "gpt-5", "openai")).toMatchObject({
      context: 400_000,
      input: 272_000,
      output: 128_000,
      price: { input: 1.25, output: 10, cacheRead: 0.125 },
      tools: true
    })
    expect(modelInfo({ type: "google" }, "gemini-2.5-pro", "google")).toMatchObject({ context: 1_048_576, tools: true, images: true })
  })

  test.each([
    ["anthropic", "claude-sonnet-4-5-20250929", "anthropic", "claude-sonnet-4-5"],
    ["anthropic", "claude-sonnet-4-0", "anthropic", "claude-sonnet-4-20250514"],
    ["anthropic", "claude-sonnet-4", "anthropic", "claude-sonnet-4-20250514"],
    ["openai", "gpt-5-2025-08-07", "openai", "gpt-5"],
    ["openai", "gpt-5-mini-2025-08-07", "openai", "gpt-5-mini"],
    ["amazon-bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0", "amazon-bedrock", "anthropic.claude-sonnet-4-20250514-v1:0"],
    ["openrouter", "anthropic/claude-sonnet-4", "openrouter", "anthropic/claude-sonnet-4"],
    // OpenRouter's table lacks it: found under Anthropic by its bare id, dots as dashes
    ["openrouter", "anthropic/claude-haiku-4.5", "anthropic", "claude-haiku-4-5"],
    // a self-hosted proxy serving a known model (openai-compatible): found in any table
    ["my-proxy", "claude-opus-4-1", "anthropic", "claude-opus-4-1-20250805"]
  ])("%s/%s is the catalogue's %s/%s", (providerID, modelID, provider, id) => {
    const type = providerID === "my-proxy" ? "openai-compatible" : providerID
    expect(lookupModel({ type: type as "openai" }, modelID, providerID).source).toEqual({ from: "catalogue", provider, id })
  })

  test("config overrides a known model field by field and adds unknown ones", () => {
    const config = {
      type: "anthropic" as const,
      models: {
        "claude-sonnet-4-5": { output: 16_000, price: { input: 2, output: 10, cache_read: 0.2 } },
        "claude-next": { context: 500_000, output: 50_000, price: { input: 1, output: 2 }, images: false }
      }
    }
    const known = lookupModel(config, "claude-sonnet-4-5", "anthropic")
    expect(known.info).toMatchObject({ context: 200_000, output: 16_000, price: { input: 2, output: 10, cacheRead: 0.2 }, tools: true })
    // a configured price replaces the catalogue's whole: no cache write price left from it
    expect(known.info.price?.cacheWrite).toBeUndefined()
    const added = lookupModel(config, "claude-next", "anthropic")
    expect(added).toEqual({ info: { context: 500_000, output: 50_000, price: { input: 1, output: 2 }, images: false }, source: { from: "config" } })
    // limits alone, as reins.json had them before prices
    expect(modelInfo({ type: "openai-compatible", models: { x: { context: 8000, output: 1000 } } }, "x", "local")).toEqual({ context: 8000, output: 1000 })
  })

  test("an unknown model gets safe defaults: 128k context, 8k output, no price (cost 0)", () => {
    const unknown = lookupModel({ type: "openai-compatible", baseURL: "http://x" }, "my-local-model", "local")
    expect(unknown).toEqual({ info: UNKNOWN_MODEL, source: { from: "default" } })
    expect(cost(unknown.info, { input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite: 0 })).toBe(0)
  })
})

describe("cost", () => {
  // Anthropic reports input_tokens without the cached ones; OpenAI's prompt_tokens include them.
  // toUsage makes `input` the uncached part for both, so each token is priced once.
  test("Anthropic usage (input excludes cache reads and writes)", () => {
    const usage = toUsage({
      inputTokens: 44_200,
      outputTokens: 800,
      inputTokenDetails: { noCacheTokens: 1_200, cacheReadTokens: 40_000, cacheWriteTokens: 3_000 }
    })
    expect(usage).toMatchObject({ input: 1_200, cacheRead: 40_000, cacheWrite: 3_000, output: 800 })
    // 1200 × $3 + 40000 × $0.30 + 3000 × $3.75 + 800 × $15, per million
    expect(cost(modelInfo({ type: "anthropic" }, "claude-sonnet-4-5", "anthropic"), usage)).toBeCloseTo(0.03885, 10)
  })
  test("OpenAI usage (prompt tokens include the cached ones)", () => {
    const usage = toUsage({ inputTokens: 10_000, outputTokens: 500, inputTokenDetails: { cacheReadTokens: 8_000 } })
    expect(usage).toMatchObject({ input: 2_000, cacheRead: 8_000, cacheWrite: 0 })
    // 2000 × $1.25 + 8000 × $0.125 + 500 × $10, per million
    expect(cost(modelInfo({ type: "openai" }, "gpt-5", "openai"), usage)).toBeCloseTo(0.0085, 10)
  })
  test("a cache price the model lacks is the input price", () => {
    expect(cost({ context: 1, output: 1, price: { input: 2, output: 4 } }, { input: 0, output: 0, cacheRead: 1_000_000, cacheWrite: 1_000_000 })).toBe(4)
  })
})

let server: ScriptedServer | undefined
let anthropic: ReturnType<typeof Bun.serve> | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
  await anthropic?.stop(true)
  anthropic = undefined
})

/** Runs calls through one Provider layer and collects the events and the warnings logged. */
const calls = async (settings: ProviderSettings, refs: ReadonlyArray<{ providerID: string; modelID: string }>) => {
  const warnings: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel === "Warn") warnings.push(String(Array.isArray(message) ? message[0] : message))
  })
  const events = await Effect.runPromise(
    Effect.gen(function* () {
      const provider = yield* Provider
      const out: Array<ReadonlyArray<ModelEvent>> = []
      for (const model of refs) out.push(yield* provider.stream({ model, system: ["test"], messages: hi, tools: [] }).pipe(Stream.runCollect))
      return out
    }).pipe(withProvider(settings), Effect.provide(Logger.layer([logger])))
  )
  return { events, warnings }
}

const finish = (events: ReadonlyArray<ModelEvent>) => events.find((e) => e.type === "finish-step") as Extract<ModelEvent, { type: "finish-step" }>

/** A recorded Anthropic Messages stream of one step that read 40k tokens from the cache and wrote 3k. */
const RECORDED_ANTHROPIC = [
  [
    "message_start",
    {
      type: "message_start",
      message: {
        id: "msg_01",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1200, cache_creation_input_tokens: 3000, cache_read_input_tokens: 40000, output_tokens: 1 }
      }
    }
  ],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 800 } }],
  ["message_stop", { type: "message_stop" }]
] as const

describe("cost of a recorded step, over HTTP", () => {
  test("Anthropic: the finish event's cost is the hand-computed one, with cache reads and writes", async () => {
    anthropic = Bun.serve({
      port: 0,
      fetch: () =>
        new Response(RECORDED_ANTHROPIC.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(""), {
          headers: { "content-type": "text/event-stream" }
        })
    })
    const settings: ProviderSettings = {
      providers: { anthropic: { type: "anthropic", baseURL: `http://127.0.0.1:${anthropic.port}/v1` } },
      env: { ANTHROPIC_API_KEY: "k" }
    }
    const { events, warnings } = await calls(settings, [{ providerID: "anthropic", modelID: "claude-sonnet-4-5-20250929" }])
    const step = finish(events[0]!)
    expect(step.usage).toMatchObject({ input: 1200, cacheRead: 40_000, cacheWrite: 3000, output: 800 })
    expect(step.cost).toBeCloseTo((1200 * 3 + 40_000 * 0.3 + 3000 * 3.75 + 800 * 15) / 1e6, 10)
    expect(warnings).toEqual([])
  })

  test("OpenAI (Responses API): cached tokens are inside input_tokens and priced once, at the cache price", async () => {
    server = await startScriptedServer([{ text: "ok", usage: { prompt_tokens: 10_000, completion_tokens: 500, cached_tokens: 8_000 } }])
    const settings: ProviderSettings = { providers: { openai: { type: "openai", baseURL: server.url } }, env: { OPENAI_API_KEY: "k" } }
    const { events } = await calls(settings, [{ providerID: "openai", modelID: "gpt-5" }])
    const step = finish(events[0]!)
    expect(step.usage).toMatchObject({ input: 2_000, cacheRead: 8_000, output: 500 })
    expect(step.cost).toBeCloseTo((2_000 * 1.25 + 8_000 * 0.125 + 500 * 10) / 1e6, 10)
  })

  test("a price set in config is the one charged (OpenAI-compatible chat completions: cached tokens inside prompt_tokens)", async () => {
    server = await startScriptedServer([{ text: "ok", usage: { prompt_tokens: 1_000_000, completion_tokens: 100_000, cached_tokens: 600_000 } }])
    const settings: ProviderSettings = {
      providers: {
        local: { type: "openai-compatible", baseURL: server.url, models: { "deepseek-chat": { price: { input: 0.5, output: 2, cache_read: 0.05 } } } }
      },
      env: {}
    }
    const { events } = await calls(settings, [{ providerID: "local", modelID: "deepseek-chat" }])
    expect(finish(events[0]!).cost).toBeCloseTo((400_000 * 0.5 + 600_000 * 0.05 + 100_000 * 2) / 1e6, 10)
  })
})

describe("an unknown model", () => {
  test("is warned about once per model, naming the config to set; a configured or known one is not", async () => {
    server = await startScriptedServer([{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }])
    const settings: ProviderSettings = {
      providers: { local: { type: "openai-compatible", baseURL: server.url, models: { configured: { context: 32_000, output: 4_000 } } } },
      env: {}
    }
    const { warnings } = await calls(settings, [
      { providerID: "local", modelID: "mystery-7b" },
      { providerID: "local", modelID: "mystery-7b" },
      { providerID: "local", modelID: "configured" },
      { providerID: "local", modelID: "other-13b" }
    ])
    expect(warnings).toEqual([
      'Model local/mystery-7b is not in reins\'s catalogue: assuming a 128000-token context, 8192-token output and no price. Set provider.local.models["mystery-7b"] (context, output, price) in reins.json to change that.',
      'Model local/other-13b is not in reins\'s catalogue: assuming a 128000-token context, 8192-token output and no price. Set provider.local.models["other-13b"] (context, output, price) in reins.json to change that.'
    ])
  })
})
