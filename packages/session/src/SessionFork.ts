import { Effect } from "effect"
import { Ids, type Message, type Part, type Session } from "@reins/domain"
import { SessionStore, StoreError } from "@reins/storage"

/**
 * A copy of `source`'s conversation up to and including message `at` (all of it without one) in a
 * new session made by `create`, under new ids; a compaction's summary names the copied messages.
 * Fails with "not-found" (and makes nothing) when the session has no message `at`.
 */
export const forkConversation = Effect.fnUntraced(function* <E>(source: Session, at: string | undefined, create: Effect.Effect<Session, E>) {
  const store = yield* SessionStore
  const ids = yield* Ids
  const history = yield* store.messages(source.id)
  const end = at === undefined ? history.length : history.findIndex((m) => m.info.id === at) + 1
  if (end === 0)
    return yield* new StoreError({
      reason: "not-found",
      message: `Session ${source.id} has no message ${at}: give the id of one of its messages (reins sessions show ${source.id}).`
    })
  const copy = yield* create
  const renamed = new Map<string, string>()
  for (const { info: m } of history.slice(0, end)) renamed.set(m.id, yield* ids.next("msg"))
  const rename = (messageID: string) => renamed.get(messageID) ?? messageID
  for (const { info: m, parts } of history.slice(0, end)) {
    const id = rename(m.id)
    const summary =
      m.role === "assistant" && m.summary !== undefined
        ? {
            ...m.summary,
            summarised: m.summary.summarised.map(rename),
            pinned: m.summary.pinned.map(rename),
            ...(m.summary.tailStart !== undefined ? { tailStart: rename(m.summary.tailStart) } : {})
          }
        : undefined
    const message: Message =
      m.role === "assistant"
        ? { ...m, id, sessionID: copy.id, parentID: rename(m.parentID), ...(summary !== undefined ? { summary } : {}) }
        : { ...m, id, sessionID: copy.id }
    yield* store.putMessage(message)
    const moved: Array<Part> = []
    for (const part of parts) moved.push({ ...part, id: yield* ids.next("prt"), sessionID: copy.id, messageID: id })
    yield* store.putParts(moved)
  }
  return copy
})
