import { cut, fits } from "@reins/truncate"
import type { Reducer } from "../Reducer.ts"

/**
 * The fallback for unknown oversized output: the first quarter of the budget from the head, the
 * rest from the tail, where errors and summaries usually are.
 */
export const headTail: Reducer = {
  name: "head_tail",
  matches: (input) => !fits(input.text, input.maxLines, input.maxBytes),
  reduce: (input) => {
    const r = cut(input.text, { direction: "head_tail", maxLines: input.maxLines, maxBytes: input.maxBytes })
    return r.truncated ? { text: r.text, reasons: ["middle_dropped"] } : undefined
  }
}
