import type { ModelMessage } from "ai"
import type { ModelConfig, ModelRef, ProviderConfig, ProviderType } from "@reins/domain"

/**
 * Per-model provider options and named variants (T22). A call's AI SDK `providerOptions` are, merged
 * in this order: reins's defaults for the provider, the model's `options` from config, then the
 * variant's options (a built-in one, or the model's own `variants.<name>` from config, which wins).
 * Config writes a provider's options without its key (`{ "reasoningEffort": "high" }`); reins puts
 * them under the key the provider's SDK reads (`openai`, `anthropic`, `google`, …).
 */
export type ProviderOptions = NonNullable<ModelMessage["providerOptions"]>

/** One provider's options (JSON, as config is). */
type Options = ProviderOptions[string]

/** The `providerOptions` keys the provider's SDK reads, the first being where config options go. */
export const optionKeys = (type: ProviderType, providerID: string): ReadonlyArray<string> => {
  switch (type) {
    case "openai-compatible":
      // @ai-sdk/openai-compatible reads the options under the provider's name (reins names it by its id)
      return [providerID]
    case "amazon-bedrock":
      return ["bedrock"]
    case "azure":
      return ["azure", "openai"]
    default:
      return [type]
  }
}

/** Anthropic's thinking budgets (tokens) per built-in variant; the SDK raises `max_tokens` by the budget. */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 1_024, low: 4_000, medium: 10_000, high: 16_000, max: 31_999 }

/** Gemini 2.5's thinking budgets per built-in variant. */
const GEMINI_BUDGETS: Readonly<Record<string, number>> = { minimal: 512, low: 2_048, medium: 8_192, high: 24_576, max: 32_768 }

const OPENAI_EFFORTS = ["minimal", "low", "medium", "high"] as const

const claude = (modelID: string) => /claude/i.test(modelID)
/** GPT-5, o-series and Codex models reason; GPT-4o, GPT-4.1 and the chat aliases do not take an effort. */
const openaiReasons = (modelID: string) => /(^|\/)(o\d|gpt-5|codex)/i.test(modelID) && !/gpt-5[^/]*-chat/i.test(modelID)

const byName = <K extends string>(names: ReadonlyArray<K>, make: (name: K) => Options): Record<string, Options> =>
  Object.fromEntries(names.map((name) => [name, make(name)]))

/**
 * The built-in variants of a model, by name, as the options of its provider (under its first key):
 * reasoning effort for OpenAI (with a summary, so the reasoning shows), a thinking budget for Claude,
 * a thinking config for Gemini. None for models or providers where they mean nothing.
 */
export const builtInVariants = (type: ProviderType, modelID: string): Readonly<Record<string, Options>> => {
  switch (type) {
    case "anthropic":
      return byName(Object.keys(THINKING_BUDGETS), (name) => ({ thinking: { type: "enabled", budgetTokens: THINKING_BUDGETS[name] } }))
    case "amazon-bedrock":
      return claude(modelID)
        ? byName(Object.keys(THINKING_BUDGETS), (name) => ({ reasoningConfig: { type: "enabled", budgetTokens: THINKING_BUDGETS[name] } }))
        : {}
    case "openai":
    case "azure":
      return openaiReasons(modelID)
        ? byName(OPENAI_EFFORTS, (effort) => ({ reasoningEffort: effort, reasoningSummary: "auto", include: ["reasoning.encrypted_content"] }))
        : {}
    case "openrouter":
      return byName(["low", "medium", "high"], (effort) => ({ reasoning: { effort } }))
    case "openai-compatible":
      return byName(["low", "medium", "high"], (effort) => ({ reasoningEffort: effort }))
    case "google":
      // Gemini 3 takes a thinking level, Gemini 2.5 a budget of tokens
      return /gemini-3/i.test(modelID)
        ? byName(["low", "high"], (level) => ({ thinkingConfig: { thinkingLevel: level, includeThoughts: true } }))
        : /gemini-2\.5/i.test(modelID)
          ? byName(Object.keys(GEMINI_BUDGETS), (name) => ({ thinkingConfig: { thinkingBudget: GEMINI_BUDGETS[name], includeThoughts: true } }))
          : {}
    default:
      return {}
  }
}

/**
 * reins's own options for a provider: OpenAI's Responses calls are not stored (`store: false`), so
 * reasoning is replayed from its encrypted content (which the SDK then asks for), as Codex does.
 */
const defaults = (type: ProviderType): Options => (type === "openai" || type === "azure" ? { store: false } : {})

/** Every variant name a model has: the built-in ones and its own from config. */
export const variantNames = (type: ProviderType, modelID: string, model: ModelConfig | undefined): ReadonlyArray<string> => [
  ...new Set([...Object.keys(builtInVariants(type, modelID)), ...Object.keys(model?.variants ?? {})])
]

/** The variant a call uses: asked for (`--variant`), else the model's own, else the config's top-level one. */
export const chosenVariant = (ref: ModelRef, model: ModelConfig | undefined, fallback: string | undefined): string | undefined =>
  ref.variant ?? model?.variant ?? fallback

/** The message for a variant the model does not have, naming those it has. */
export const unknownVariant = (ref: ModelRef, name: string, known: ReadonlyArray<string>): string =>
  known.length === 0
    ? `Unknown variant "${name}" for ${ref.providerID}/${ref.modelID}: the model has no variants. Define one under provider.${ref.providerID}.models.${ref.modelID}.variants in reins.json, or drop --variant.`
    : `Unknown variant "${name}" for ${ref.providerID}/${ref.modelID}: use one of ${known.join(", ")} (or define it under provider.${ref.providerID}.models.${ref.modelID}.variants in reins.json).`

/** Merges option objects a level deep per key: nested objects are merged, anything else replaced. */
const mergeOptions = (base: Options, over: Options): Options => {
  const out: Options = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key]
    out[key] = isRecord(prev) && isRecord(value) ? { ...prev, ...value } : value
  }
  return out
}

// config is parsed JSON: its option values are JSON values
const json = (options: Readonly<Record<string, unknown>> | undefined): Options => (options ?? {}) as Options

const isRecord = (v: unknown): v is Options => typeof v === "object" && v !== null && !Array.isArray(v)

/** Merges two `providerOptions`, provider key by provider key (the second wins). */
export const mergeProviderOptions = (a: ProviderOptions | undefined, b: ProviderOptions | undefined): ProviderOptions | undefined => {
  if (a === undefined) return b
  if (b === undefined) return a
  const out: ProviderOptions = { ...a }
  for (const [key, value] of Object.entries(b)) out[key] = mergeOptions(out[key] ?? {}, value)
  return out
}

/** A call's options, or why the variant asked for cannot be used. */
export type CallOptions =
  | { readonly _tag: "Options"; readonly options: ProviderOptions | undefined; readonly variant: string | undefined }
  | { readonly _tag: "UnknownVariant"; readonly message: string }

/**
 * The `providerOptions` of a call to `ref` on a provider of this config: defaults, the model's
 * options, then the chosen variant's. A variant the model does not know is an error naming those it has.
 */
export const callOptions = (ref: ModelRef, config: ProviderConfig, fallbackVariant?: string): CallOptions => {
  const model = config.models?.[ref.modelID]
  const variant = chosenVariant(ref, model, fallbackVariant)
  let options = mergeOptions(defaults(config.type), json(model?.options))
  if (variant !== undefined) {
    const builtIn = builtInVariants(config.type, ref.modelID)[variant]
    const own = model?.variants?.[variant]
    if (builtIn === undefined && own === undefined)
      return { _tag: "UnknownVariant", message: unknownVariant(ref, variant, variantNames(config.type, ref.modelID, model)) }
    // a variant defined in config replaces a built-in one of the same name
    options = mergeOptions(options, own !== undefined ? json(own) : (builtIn ?? {}))
  }
  if (Object.keys(options).length === 0) return { _tag: "Options", options: undefined, variant }
  return { _tag: "Options", options: Object.fromEntries(optionKeys(config.type, ref.providerID).map((key) => [key, options])), variant }
}

/** Tokens left for the answer beside a thinking budget, at least. */
export const MIN_ANSWER_TOKENS = 1_024

/**
 * The thinking budget of a call's options, where the SDK adds it to `max_tokens` (Anthropic, and
 * Claude on Bedrock): the call then asks for that much less, so thinking and answer together stay
 * within the output the window keeps free (and the model's own limit).
 */
export const thinkingBudget = (options: ProviderOptions | undefined): number | undefined => {
  const thinking = options?.anthropic?.thinking ?? options?.bedrock?.reasoningConfig
  if (!isRecord(thinking) || thinking.type !== "enabled") return undefined
  const budget = thinking.budgetTokens
  return typeof budget === "number" && budget > 0 ? budget : undefined
}

/** Whether the call has Claude think (`thinking` enabled or adaptive, on Anthropic or Bedrock). */
export const thinkingOn = (options: ProviderOptions | undefined): boolean => {
  const thinking = options?.anthropic?.thinking ?? options?.bedrock?.reasoningConfig
  return isRecord(thinking) && (thinking.type === "enabled" || thinking.type === "adaptive")
}

/** The output tokens to ask for: `max` in all, of which the thinking budget takes its share (Anthropic adds it back). */
export const answerTokens = (max: number, options: ProviderOptions | undefined): number => {
  const budget = thinkingBudget(options)
  return budget === undefined ? max : Math.max(MIN_ANSWER_TOKENS, max - budget)
}
