import { describe, expect, test } from "bun:test"
import type { ModelRef, ProviderConfig } from "@reins/domain"
import { answerTokens, builtInVariants, callOptions, mergeProviderOptions, thinkingBudget, thinkingOn, variantNames } from "../src/Variants.ts"

const ref = (providerID: string, modelID: string, variant?: string): ModelRef => ({ providerID, modelID, ...(variant ? { variant } : {}) })
const options = (r: ModelRef, config: ProviderConfig, fallback?: string) => {
  const out = callOptions(r, config, fallback)
  if (out._tag !== "Options") throw new Error(out.message)
  return out.options
}

describe("built-in variants", () => {
  test.each<[string, ProviderConfig["type"], string, string, unknown]>([
    [
      "openai effort",
      "openai",
      "gpt-5",
      "high",
      { openai: { store: false, reasoningEffort: "high", reasoningSummary: "auto", include: ["reasoning.encrypted_content"] } }
    ],
    [
      "openai minimal",
      "openai",
      "gpt-5-mini",
      "minimal",
      { openai: { store: false, reasoningEffort: "minimal", reasoningSummary: "auto", include: ["reasoning.encrypted_content"] } }
    ],
    ["anthropic budget", "anthropic", "claude-sonnet-4-5", "high", { anthropic: { thinking: { type: "enabled", budgetTokens: 16_000 } } }],
    ["anthropic max", "anthropic", "claude-opus-4-1", "max", { anthropic: { thinking: { type: "enabled", budgetTokens: 31_999 } } }],
    ["gemini 2.5 budget", "google", "gemini-2.5-pro", "low", { google: { thinkingConfig: { thinkingBudget: 2_048, includeThoughts: true } } }],
    ["gemini 3 level", "google", "gemini-3-pro-preview", "high", { google: { thinkingConfig: { thinkingLevel: "high", includeThoughts: true } } }],
    [
      "bedrock claude",
      "amazon-bedrock",
      "us.anthropic.claude-sonnet-4-5-v1:0",
      "medium",
      { bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 10_000 } } }
    ],
    [
      "azure both keys",
      "azure",
      "gpt-5",
      "low",
      {
        azure: { store: false, reasoningEffort: "low", reasoningSummary: "auto", include: ["reasoning.encrypted_content"] },
        openai: { store: false, reasoningEffort: "low", reasoningSummary: "auto", include: ["reasoning.encrypted_content"] }
      }
    ],
    ["openai-compatible under its id", "openai-compatible", "qwen3", "medium", { local: { reasoningEffort: "medium" } }]
  ])("%s", (_, type, modelID, variant, expected) => {
    const providerID = type === "openai-compatible" ? "local" : type
    expect(options(ref(providerID, modelID, variant), { type })).toEqual(expected as never)
  })

  test("models that do not reason have no built-in variants", () => {
    expect(builtInVariants("openai", "gpt-4o")).toEqual({})
    expect(builtInVariants("openai", "gpt-5-chat-latest")).toEqual({})
    expect(builtInVariants("google", "gemini-2.0-flash")).toEqual({})
    expect(builtInVariants("mistral", "mistral-large-latest")).toEqual({})
  })
})

describe("config options and variants", () => {
  const config: ProviderConfig = {
    type: "anthropic",
    models: {
      "claude-sonnet-4-5": {
        options: { metadata: { userId: "u" }, thinking: { type: "enabled", budgetTokens: 2_000 } },
        variants: { deep: { thinking: { type: "enabled", budgetTokens: 30_000 } }, high: { thinking: { type: "enabled", budgetTokens: 20_000 } } },
        variant: "deep"
      }
    }
  }

  test("the model's options alone, under the provider's key", () => {
    expect(options(ref("anthropic", "claude-sonnet-4-5"), { ...config, models: { "claude-sonnet-4-5": { options: { metadata: { userId: "u" } } } } })).toEqual({
      anthropic: { metadata: { userId: "u" } }
    })
  })

  test("the model's own variant is its default; --variant wins over it; a custom variant replaces a built-in of the same name", () => {
    expect(options(ref("anthropic", "claude-sonnet-4-5"), config)).toEqual({
      anthropic: { metadata: { userId: "u" }, thinking: { type: "enabled", budgetTokens: 30_000 } }
    })
    expect(options(ref("anthropic", "claude-sonnet-4-5", "high"), config)?.anthropic?.thinking).toEqual({ type: "enabled", budgetTokens: 20_000 })
    expect(options(ref("anthropic", "claude-sonnet-4-5", "low"), config)?.anthropic?.thinking).toEqual({ type: "enabled", budgetTokens: 4_000 })
  })

  test("the config's top-level variant applies when neither the call nor the model names one", () => {
    expect(options(ref("anthropic", "claude-haiku-4-5"), { type: "anthropic" }, "medium")).toEqual({
      anthropic: { thinking: { type: "enabled", budgetTokens: 10_000 } }
    })
    expect(options(ref("anthropic", "claude-sonnet-4-5"), config, "medium")?.anthropic?.thinking).toEqual({ type: "enabled", budgetTokens: 30_000 })
  })

  test("no options and no variant: nothing", () => {
    expect(options(ref("anthropic", "claude-sonnet-4-5"), { type: "anthropic" })).toBeUndefined()
  })

  test.each<[string, ModelRef, ProviderConfig, string | undefined, string]>([
    [
      "a typo",
      ref("anthropic", "claude-sonnet-4-5", "hgih"),
      config,
      undefined,
      'Unknown variant "hgih" for anthropic/claude-sonnet-4-5: use one of minimal, low, medium, high, max, deep'
    ],
    [
      "a model with none",
      ref("openai", "gpt-4o", "high"),
      { type: "openai" },
      undefined,
      'Unknown variant "high" for openai/gpt-4o: the model has no variants.'
    ],
    [
      "the config's default",
      ref("mistral", "mistral-large-latest"),
      { type: "mistral" },
      "high",
      'Unknown variant "high" for mistral/mistral-large-latest: the model has no variants.'
    ]
  ])("an unknown variant (%s) names the known ones", (_, r, c, fallback, message) => {
    const out = callOptions(r, c, fallback)
    expect(out._tag).toBe("UnknownVariant")
    expect(out._tag === "UnknownVariant" && out.message).toStartWith(message)
  })

  test("variant names: built-in then the model's own", () => {
    expect(variantNames("anthropic", "claude-sonnet-4-5", config.models!["claude-sonnet-4-5"])).toEqual(["minimal", "low", "medium", "high", "max", "deep"])
  })
})

describe("merging with the cache's options", () => {
  test("per provider key: neither side clobbers the other", () => {
    expect(mergeProviderOptions({ openai: { promptCacheKey: "ses_1" } }, { openai: { store: false, reasoningEffort: "high" }, other: { x: 1 } })).toEqual({
      openai: { promptCacheKey: "ses_1", store: false, reasoningEffort: "high" },
      other: { x: 1 }
    })
    expect(mergeProviderOptions(undefined, { a: {} })).toEqual({ a: {} })
    expect(mergeProviderOptions({ a: {} }, undefined)).toEqual({ a: {} })
  })
})

describe("output tokens beside a thinking budget", () => {
  test("the budget is taken from the output asked for (the SDK adds it back), leaving at least 1024 for the answer", () => {
    const thinking = { anthropic: { thinking: { type: "enabled", budgetTokens: 16_000 } } }
    expect(thinkingBudget(thinking)).toBe(16_000)
    expect(answerTokens(64_000, thinking)).toBe(48_000)
    expect(answerTokens(10_000, thinking)).toBe(1_024)
    expect(answerTokens(64_000, { bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 4_000 } } })).toBe(60_000)
    expect(answerTokens(64_000, { anthropic: { thinking: { type: "disabled" } } })).toBe(64_000)
    expect(answerTokens(64_000, undefined)).toBe(64_000)
  })

  test("thinking is on for an enabled or adaptive thinking config, on Anthropic or Bedrock", () => {
    expect(thinkingOn({ anthropic: { thinking: { type: "enabled", budgetTokens: 1_024 } } })).toBe(true)
    expect(thinkingOn({ anthropic: { thinking: { type: "adaptive" } } })).toBe(true)
    expect(thinkingOn({ bedrock: { reasoningConfig: { type: "enabled", budgetTokens: 1_024 } } })).toBe(true)
    expect(thinkingOn({ anthropic: { thinking: { type: "disabled" } } })).toBe(false)
    expect(thinkingOn({ openai: { reasoningEffort: "high" } })).toBe(false)
    expect(thinkingOn(undefined)).toBe(false)
  })
})
