import type { MessageWithParts } from "@reins/storage"
import { estimateMessage } from "./Estimate.ts"
import { lastTurnsStart } from "./Turns.ts"

/** Bounds of the tail budget in tokens (T8). */
export const TAIL_BUDGET_MIN = 2_000
export const TAIL_BUDGET_MAX = 8_000

/** Messages the tail keeps however large they are (all of them when there are fewer). */
export const TAIL_MIN_MESSAGES = 2

/** How the verbatim tail is chosen. */
export interface TailOptions {
  /** User turns kept verbatim (default 2); 0 keeps no tail. */
  readonly tailTurns?: number
  /** Tokens the tail may hold. */
  readonly budget: number
}

/** T8: the tail's token budget, a quarter of the usable context clamped to 2_000–8_000. */
export const tailBudget = (usable: number): number => Math.min(TAIL_BUDGET_MAX, Math.max(TAIL_BUDGET_MIN, Math.floor(usable * 0.25)))

/**
 * T8: index of the first message kept verbatim after a summary (`messages.length` for no tail).
 * The tail is the last `tailTurns` user turns, shrunk from the front while its estimate exceeds
 * `budget`, but never below the last 2 messages.
 *
 * Cutting at a message boundary never splits a tool call from its result: reins stores a call and
 * its outcome in the same tool part of one assistant message, and the model view emits the result
 * right after the message that made the call. A tail may therefore start at an assistant message.
 */
export const selectTail = (messages: ReadonlyArray<MessageWithParts>, options: TailOptions): number => {
  const turns = options.tailTurns ?? 2
  if (turns <= 0) return messages.length
  const floor = Math.max(0, messages.length - TAIL_MIN_MESSAGES)
  let start = Math.min(lastTurnsStart(messages, turns), floor)
  let size = messages.slice(start).reduce((sum, m) => sum + estimateMessage(m), 0)
  while (start < floor && size > options.budget) {
    size -= estimateMessage(messages[start]!)
    start++
  }
  return start
}
