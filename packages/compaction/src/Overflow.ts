import type { CompactionConfig, ModelLimits, Usage } from "@reins/domain"

/** The part of the compaction settings that decides when the context overflows. */
export interface OverflowConfig {
  readonly auto?: boolean | undefined
  readonly reserved?: number | undefined
}

/** Most tokens kept free for the answer when `reserved` is not configured and the model has a separate input limit (T7). */
export const RESERVED_CAP = 20_000

/**
 * Most of the window the default reserve takes. A model whose `output` is as large as its context
 * (common for local 4k–8k models) would otherwise leave nothing for the conversation; a third keeps
 * the SPEC's figures for large models (100k/32k, 200k/64k) unchanged.
 */
export const RESERVED_SHARE = 1 / 3

const count = (n: number | undefined): number => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0)

/**
 * Tokens the context held at a step: input + output + cache read + cache write. A provider's total
 * is used only when it agrees with that sum or is all there is; a NaN, negative or conflicting
 * total (or NaN parts) falls back to the sum of the parts that are numbers.
 */
export const tokenCount = (usage: Usage): number => {
  const sum = count(usage.input) + count(usage.output) + count(usage.cacheRead) + count(usage.cacheWrite)
  const total = count(usage.total)
  return sum === 0 ? total : sum
}

/** The tokens a request may hold in all: the model's separate input limit, else its context. */
export const inputLimit = (limits: ModelLimits): number => (limits.input !== undefined && limits.input > 0 ? limits.input : limits.context)

/**
 * Tokens kept free for the model's answer: `config.reserved`, else the model's output limit capped
 * at 20_000 (with a separate input limit) and at a third of the window, so it always fits.
 */
export const reservedTokens = (limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): number => {
  if (config.reserved !== undefined) return config.reserved
  const cap = limits.input !== undefined && limits.input > 0 ? RESERVED_CAP : Number.POSITIVE_INFINITY
  return Math.max(0, Math.min(cap, limits.output, Math.floor(inputLimit(limits) * RESERVED_SHARE)))
}

/**
 * The most output a request may ask for. With a separate input limit the answer does not share
 * the conversation's room: the model's own output limit. Else the reserve, so that the
 * conversation and the answer together fit the context (a 4k model whose `output` is 8k).
 */
export const maxOutputTokens = (limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): number =>
  limits.input !== undefined && limits.input > 0 ? limits.output : Math.min(limits.output, Math.max(1, reservedTokens(limits, config)))

/** Tokens the conversation may fill before compaction: the input limit (else the context) minus the reserve. */
export const usableTokens = (limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): number => inputLimit(limits) - reservedTokens(limits, config)

/**
 * Why a configured reserve cannot work with this model (it leaves nothing for the conversation),
 * as one line saying what to change; undefined when it fits or the limits are unknown.
 */
export const reserveProblem = (limits: ModelLimits, config: OverflowConfig | CompactionConfig, model: string): string | undefined => {
  const limit = inputLimit(limits)
  if (config.reserved === undefined || limit <= 0 || config.reserved < limit) return undefined
  return (
    `"compaction.reserved" is ${config.reserved} tokens but ${model} takes at most ${limit} input tokens, so nothing would be left for the conversation: ` +
    `set "compaction.reserved" in reins.json below ${limit} (or remove it: the default keeps min(output, a third of the window) free).`
  )
}

/** T7: whether the last step's usage means the next call would overflow. Never with `auto: false` or an unknown (0) context. */
export const isOverflow = (usage: Usage, limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): boolean => {
  if (config.auto === false || limits.context === 0) return false
  return tokenCount(usage) >= usableTokens(limits, config)
}
