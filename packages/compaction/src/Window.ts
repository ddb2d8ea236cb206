import { Effect } from "effect"
import type { SessionStore } from "@reins/storage"

/**
 * The part of a session a loop needs to read each step: with a complete summary, the pinned
 * messages before its tail and everything from the tail on; without one, the whole session.
 * `modelView` of it equals `modelView` of the whole session, and it stays about as large as the
 * model's context however long the session grows (two indexed queries, no full read).
 */
export const readWindow = Effect.fnUntraced(function* (store: SessionStore["Service"], sessionID: string) {
  const latest = yield* store.latestSummary(sessionID)
  if (latest?.summary === undefined) return yield* store.messages(sessionID)
  const tail = latest.summary.tailStart
  // A tail starts before its summary; the smaller id guards against a clock that stepped back.
  const from = tail !== undefined && tail < latest.id ? tail : latest.id
  return yield* store.messages(sessionID, { from, include: latest.summary.pinned })
})
