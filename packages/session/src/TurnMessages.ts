import { Clock, Effect } from "effect"
import type { Bus, Ids, ModelRef, Part, UserMessage } from "@reins/domain"
import { continuation, type Compaction, type CompactionError } from "@reins/compaction"
import type { MessageWithParts, SessionStore } from "@reins/storage"

/** What the turn's own messages need, resolved when the turn service is built. */
export interface MessageDeps {
  readonly store: SessionStore["Service"]
  readonly bus: Bus["Service"]
  readonly ids: Ids["Service"]
  readonly compaction: Compaction["Service"]
}

/** A user message (and its text part), not stored yet. */
export const newUserMessage = Effect.fnUntraced(function* (ids: Ids["Service"], sessionID: string, text: string, metadata?: UserMessage["metadata"]) {
  const now = yield* Clock.currentTimeMillis
  const message: UserMessage = { id: yield* ids.next("msg"), sessionID, role: "user", time: { created: now }, ...(metadata ? { metadata } : {}) }
  const part: Part = { id: yield* ids.next("prt"), sessionID, messageID: message.id, type: "text", text }
  return { message, part }
})

/** Tells the bus about a stored user message. */
export const announceUser = Effect.fnUntraced(function* (bus: Bus["Service"], message: UserMessage, parts: ReadonlyArray<Part>) {
  yield* bus.publish({ type: "message.updated", message })
  for (const part of parts) yield* bus.publish({ type: "part.updated", part })
})

/** A compaction a running turn asks for. */
export interface TurnCompaction {
  readonly sessionID: string
  readonly model: ModelRef
  readonly reason: "overflow" | "provider"
  readonly tokens: number
  /** The window the turn last read. */
  readonly window: ReadonlyArray<MessageWithParts>
  /** The turn's request, pinned. */
  readonly turnStart: MessageWithParts
  /** A step of the turn succeeded: continue the work instead of replaying the request. */
  readonly progressed: boolean
}

/**
 * T7–T11: compacts the session (the turn's request stays pinned), then writes the message the
 * loop goes on with, flagged so views hide it: a synthetic continue once the turn has made a
 * step (a replayed request makes a model start over and re-run its tool calls), else a replay
 * of the request (its attachments as notes). Gives the id of the message it wrote and the summary's cost.
 */
const compactAndContinue = Effect.fnUntraced(function* (deps: MessageDeps, input: TurnCompaction) {
  const { sessionID, window, turnStart } = input
  const compacted = yield* deps.compaction.compact({ sessionID, model: input.model, reason: input.reason, tokens: input.tokens, turn: turnStart.info.id })
  // Once an earlier compaction summarised the turn's own request, the window starts later:
  // continue from that request, not from an older pinned one.
  const before = window.some((m) => m.info.id === turnStart.info.id) ? window : [turnStart, ...window.filter((m) => m.info.id > turnStart.info.id)]
  const next = continuation(before, { progressed: input.progressed })
  const { message, part } = yield* newUserMessage(deps.ids, sessionID, next.text, { compaction_continue: true, continuation: next.kind })
  const synthetic: Part = { ...part, synthetic: true }
  yield* deps.store.putMessage(message)
  yield* deps.store.putPart(synthetic)
  yield* announceUser(deps.bus, message, [synthetic])
  return { wrote: message.id, cost: compacted.cost }
})

/** The one way the loop compacts: compacted and continued (the message it wrote, what the summary cost), or nothing to summarise (undefined). */
export const compactForTurn = (deps: MessageDeps, input: TurnCompaction) =>
  compactAndContinue(deps, input).pipe(
    // Noted on the span, not logged: a log line would land in the answer on stdout.
    Effect.catchIf(
      (e): e is CompactionError => e._tag === "CompactionError" && e.reason === "nothing-to-summarise",
      (e) => Effect.as(Effect.annotateCurrentSpan("compaction.skipped", e.message), undefined)
    )
  )
