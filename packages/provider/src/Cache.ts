import type { ModelMessage, SystemModelMessage } from "ai"

/**
 * Prompt caching (T10). Anthropic-style providers cache a prompt's prefix up to a marked block:
 * reins marks the first 2 system parts (the static header, then the dynamic rest) and the last 2
 * messages, as opencode does, so each step reads what the step before wrote. OpenAI caches
 * prefixes by itself; a `promptCacheKey` (the session id) routes a session's calls to the same cache.
 */
export type CacheStyle =
  /** Breakpoints: these provider options on each marked message. */
  | { readonly kind: "markers"; readonly options: ProviderOptions }
  /** OpenAI's `prompt_cache_key`, under these provider options keys. */
  | { readonly kind: "key"; readonly keys: ReadonlyArray<string> }
  | { readonly kind: "none" }

type ProviderOptions = NonNullable<ModelMessage["providerOptions"]>

const EPHEMERAL = { type: "ephemeral" } as const

/** Claude (and Amazon Nova on Bedrock) take cache breakpoints; other models behind the same gateway do not. */
const claudeLike = (modelID: string) => /claude|anthropic/i.test(modelID)

/** How the provider of this type caches this model's prompts. */
export const cacheStyle = (type: string, modelID: string): CacheStyle => {
  switch (type) {
    case "anthropic":
      return { kind: "markers", options: { anthropic: { cacheControl: EPHEMERAL } } }
    case "bedrock":
    case "amazon-bedrock":
      return claudeLike(modelID) || /nova/i.test(modelID) ? { kind: "markers", options: { bedrock: { cachePoint: { type: "default" } } } } : { kind: "none" }
    case "openrouter":
      return claudeLike(modelID) ? { kind: "markers", options: { openrouter: { cacheControl: EPHEMERAL } } } : { kind: "none" }
    case "openai":
      return { kind: "key", keys: ["openai"] }
    case "azure":
      return { kind: "key", keys: ["azure", "openai"] }
    default:
      return { kind: "none" }
  }
}

/** How many system parts and how many of the last messages are marked. */
export const MARKED_SYSTEM = 2
export const MARKED_MESSAGES = 2

const mark = <M extends ModelMessage>(message: M, options: ProviderOptions): M => {
  const merged: ProviderOptions = { ...message.providerOptions }
  for (const [key, value] of Object.entries(options)) merged[key] = { ...merged[key], ...value }
  // a copy: the converted messages are shared across steps (Transform keeps them per stored message)
  return { ...message, providerOptions: merged }
}

/** The request's system parts and messages, marked for the provider's cache. */
export interface CachedPrompt {
  readonly system: string | Array<SystemModelMessage> | undefined
  readonly messages: Array<ModelMessage>
}

/**
 * With breakpoints, each system part is its own system block (the first 2 marked) and the last 2
 * messages are marked; otherwise the system parts are one text, as before, and messages unchanged.
 */
export const withCacheMarkers = (system: ReadonlyArray<string>, messages: Array<ModelMessage>, style: CacheStyle): CachedPrompt => {
  if (style.kind !== "markers") return { system: system.join("\n\n"), messages }
  // Anthropic refuses an empty text block
  const parts = system.filter((s) => s !== "")
  const blocks = parts.map((content, i): SystemModelMessage => {
    const block: SystemModelMessage = { role: "system", content }
    return i < MARKED_SYSTEM ? mark(block, style.options) : block
  })
  const from = Math.max(0, messages.length - MARKED_MESSAGES)
  return { system: blocks.length === 0 ? undefined : blocks, messages: messages.map((m, i) => (i >= from ? mark(m, style.options) : m)) }
}

/** The call's provider options for caching: the session's cache key where the provider takes one. */
export const cacheCallOptions = (style: CacheStyle, sessionID: string | undefined): ProviderOptions | undefined => {
  if (style.kind !== "key" || sessionID === undefined) return undefined
  return Object.fromEntries(style.keys.map((key) => [key, { promptCacheKey: sessionID }]))
}
