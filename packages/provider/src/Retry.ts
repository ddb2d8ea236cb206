import { Context } from "effect"
import type { ProviderError } from "./ProviderError.ts"

/** How provider calls are retried; `attempts` counts the first try. */
export interface RetryPolicy {
  readonly attempts: number
  readonly initialDelayMs: number
  readonly maxDelayMs: number
}

export const RetryPolicy = Context.Reference<RetryPolicy>("reins/provider/RetryPolicy", {
  defaultValue: () => ({ attempts: 5, initialDelayMs: 2_000, maxDelayMs: 30_000 })
})

/**
 * Delay before retry number `attempt` (1-based): the provider's own hint when given, else
 * initial × 2^(attempt−1) capped, with ±20% jitter drawn from `random` (in [0, 1)).
 */
export const retryDelay = (error: ProviderError, attempt: number, policy: RetryPolicy, random: () => number) => {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, policy.maxDelayMs * 4)
  const base = Math.min(policy.initialDelayMs * 2 ** (attempt - 1), policy.maxDelayMs)
  return Math.round(base * (0.8 + random() * 0.4))
}
