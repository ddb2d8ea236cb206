import { Effect } from "effect"
import { readWindow } from "@reins/compaction"
import type { MessageWithParts, RunClaims, SessionStore, StoreError } from "@reins/storage"

/**
 * A turn's window of its session (`readWindow`), kept in memory across its steps so that a step
 * at step 300 reads and converts as much as one at step 10: read whole at the start of the turn and
 * after a compaction (which prunes old outputs and summarises), then each step reads only the
 * messages from the previous step's assistant message on (that message and its parts as the step
 * left them, and anything newer). Unchanged messages keep their objects, so what is derived from
 * them (the model's view, the provider's messages) can be kept per message too.
 *
 * A message queued by another process (T5) may carry an older id than the step's, yet be stored
 * after the last read: the run's queue counter, counted in the same transaction that stored the
 * message, tells when more were queued than the turn has read, and the window is then read whole.
 */
export interface Transcript {
  /** The window as stored now; `seen(messages)` counts the queued messages the turn has read, after it took in `messages`. */
  read(seen: (messages: ReadonlyArray<MessageWithParts>) => number): Effect.Effect<ReadonlyArray<MessageWithParts>, StoreError>
  /** The next read starts from this message (the step's assistant message, just stored); older messages are kept as they are. */
  from(id: string): void
  /** Anything may have changed (a compaction pruned and summarised): the next read is whole. */
  reset(): void
}

/** Messages with an id below `from` kept, the rest replaced by `newer` (all ≥ `from`, ordered by id). */
const merge = (kept: ReadonlyArray<MessageWithParts>, from: string, newer: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  let cut = kept.length
  while (cut > 0 && kept[cut - 1]!.info.id >= from) cut--
  return newer.length === 0 && cut === kept.length ? kept : [...kept.slice(0, cut), ...newer]
}

export const makeTranscript = (store: SessionStore["Service"], claims: RunClaims["Service"], sessionID: string): Transcript => {
  let window: ReadonlyArray<MessageWithParts> | undefined
  let since: string | undefined

  const whole = Effect.map(
    Effect.suspend(() => readWindow(store, sessionID)),
    (messages) => (window = messages)
  )

  const read = (seen: (messages: ReadonlyArray<MessageWithParts>) => number) =>
    Effect.gen(function* () {
      if (window === undefined || since === undefined) {
        // the first read of the turn, or the first after a compaction
        const messages = yield* whole
        seen(messages)
        return messages
      }
      const messages = merge(window, since, yield* store.messages(sessionID, { from: since }))
      window = messages
      const counted = seen(messages)
      // Queued for this run but not in what was read: stored behind the step's id after the last read.
      const held = yield* claims.get(sessionID)
      if (held === undefined || held.queued <= counted) return messages
      const all = yield* whole
      seen(all)
      return all
    })

  return {
    read,
    from: (id: string) => {
      since = id
    },
    reset: () => {
      window = undefined
      since = undefined
    }
  }
}
