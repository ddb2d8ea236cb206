import type { CompactionConfig, ModelLimits, Usage } from "@reins/domain"

/** The part of the compaction settings that decides when the context overflows. */
export interface OverflowConfig {
  readonly auto?: boolean | undefined
  readonly reserved?: number | undefined
}

/** Most tokens kept free for the answer when `reserved` is not configured (T7). */
export const RESERVED_CAP = 20_000

/** Tokens the context held at a step: the provider's total when given, else input + output + cache read + cache write. */
export const tokenCount = (usage: Usage): number => usage.total ?? usage.input + usage.output + usage.cacheRead + usage.cacheWrite

/** Tokens kept free for the model's answer: `config.reserved`, else min(20_000, the model's output limit). */
export const reservedTokens = (limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): number =>
  config.reserved ?? Math.min(RESERVED_CAP, limits.output)

/**
 * Tokens the conversation may fill before compaction: the input limit minus the reserve when the
 * model has a separate input limit, else the context minus the output limit.
 */
export const usableTokens = (limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): number =>
  limits.input ? limits.input - reservedTokens(limits, config) : limits.context - limits.output

/** T7: whether the last step's usage means the next call would overflow. Never with `auto: false` or an unknown (0) context. */
export const isOverflow = (usage: Usage, limits: ModelLimits, config: OverflowConfig | CompactionConfig = {}): boolean => {
  if (config.auto === false || limits.context === 0) return false
  return tokenCount(usage) >= usableTokens(limits, config)
}
