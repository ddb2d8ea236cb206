import { Effect } from "effect"
import type { SessionStore } from "@reins/storage"

/**
 * The part of a session a loop needs to read each step: with a complete summary, the pinned
 * messages before its tail and everything from the tail on; without one, the whole session.
 * `modelView` of it equals `modelView` of the whole session, and it stays about as large as the
 * model's context however long the session grows (two indexed queries, no full read).
 */
export const readWindow = Effect.fnUntraced(function* (store: SessionStore["Service"], sessionID: string) {
  const summaries = yield* store.summaries(sessionID)
  const latest = summaries.find((m) => m.time.completed !== undefined && m.error === undefined)
  if (latest?.summary === undefined) return yield* store.messages(sessionID)
  return yield* store.messages(sessionID, { from: latest.summary.tailStart ?? latest.id, include: latest.summary.pinned })
})
