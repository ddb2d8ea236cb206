import type { MessageWithParts } from "@reins/storage"
import { estimateMessage } from "./Estimate.ts"
import { lastTurnsStart } from "./Turns.ts"

/** Most tokens the tail budget takes (T8). */
export const TAIL_BUDGET_MAX = 8_000
/** The budget's share of the usable context. */
export const TAIL_BUDGET_SHARE = 0.25
/** The tail keeps its newest messages up to this many even over the budget, while they fit in `limit` (T8: at least 2). */
export const TAIL_MIN_MESSAGES = 2

/** How the verbatim tail is chosen. */
export interface TailOptions {
  /** User turns kept verbatim (default 2); 0 keeps no tail. */
  readonly tailTurns?: number
  /** Tokens the tail may hold. */
  readonly budget: number
  /**
   * Tokens the tail may hold however few messages it has (default: no limit). Its last
   * `TAIL_MIN_MESSAGES` messages are kept over the budget only while they stay within this: a small
   * window summarises even its newest step rather than keep more than fits.
   */
  readonly limit?: number
}

/**
 * T8: the tail's token budget, a quarter of the usable context, at most 8_000. The SPEC's floor of
 * 2_000 gives way: on a small window (usable under 8_000) a quarter is what fits beside the summary.
 */
export const tailBudget = (usable: number): number => Math.max(0, Math.min(TAIL_BUDGET_MAX, Math.floor(usable * TAIL_BUDGET_SHARE)))

/**
 * T8: index of the first message kept verbatim after a summary (`messages.length` for no tail).
 * The tail is the last `tailTurns` user turns, shrunk from the front while its estimate exceeds
 * `budget`, but never below the last 2 messages unless those exceed `limit`. In one long turn the
 * turn's own older steps are thus summarised and its newest ones kept.
 *
 * Cutting at a message boundary never splits a tool call from its result: reins stores a call and
 * its outcome in the same tool part of one assistant message, and the model view emits the result
 * right after the message that made the call. A tail may therefore start at an assistant message.
 */
export const selectTail = (messages: ReadonlyArray<MessageWithParts>, options: TailOptions): number => {
  const turns = options.tailTurns ?? 2
  if (turns <= 0) return messages.length
  const limit = options.limit ?? Number.POSITIVE_INFINITY
  const floor = Math.max(0, messages.length - TAIL_MIN_MESSAGES)
  let start = Math.min(lastTurnsStart(messages, turns), floor)
  let size = messages.slice(start).reduce((sum, m) => sum + estimateMessage(m), 0)
  while (start < messages.length && size > options.budget && (start < floor || size > limit)) {
    size -= estimateMessage(messages[start]!)
    start++
  }
  return start
}
