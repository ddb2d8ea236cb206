import { Bus, type FileChange, type MessageWithParts, type Session } from "@reins/domain"
import { SessionStore, type StoreError } from "@reins/storage"
import type { Checkpoints, RestoreConflict, RestoreReport } from "@reins/workspace"
import { Clock, Effect, Schema } from "effect"

/** What undo and redo are asked: the files, the conversation or both (the default); `force` overwrites paths changed since. */
export interface UndoInput {
  readonly sessionID: string
  /** Undo back to before this user message (default: the last one not undone yet). */
  readonly to?: string | undefined
  readonly files: boolean
  readonly conversation: boolean
  readonly force: boolean
}

/** What an undo or redo did. */
export interface Undone {
  readonly sessionID: string
  /** The first user message undone (redo: the one the undo had started at). */
  readonly messageID: string
  /** The user messages undone or redone (ids, oldest first). */
  readonly messages: ReadonlyArray<string>
  /** The paths restored (relative to the session's directory). */
  readonly files: ReadonlyArray<string>
  /** Paths left as they are, and why (over the size cap, a directory holding files not checkpointed). */
  readonly skipped: RestoreReport["skipped"]
}

/** Undo or redo refused: nothing to undo (or redo), a message that is not a user message of the session, no checkpoints. */
export class UndoError extends Schema.TaggedError<UndoError>()("UndoError", { message: Schema.String }) {}

const isUser = (m: MessageWithParts) => m.info.role === "user" && m.info.metadata?.compaction_continue !== true
const reverted = (m: MessageWithParts) => m.info.role === "user" && m.info.metadata?.reverted === true

/** The file changes the steps of `messages` recorded, oldest first. */
const changesOf = (messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<FileChange> =>
  messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "patch" ? p.files : [])))

/** The user messages an undo (to `to`, else the last one not undone) takes back, and where it starts. */
export const undoRange = (session: Session, messages: ReadonlyArray<MessageWithParts>, to: string | undefined) => {
  const users = messages.filter(isUser)
  const undoneFrom = session.revert?.messageID
  const candidates = users.filter((m) => undoneFrom === undefined || m.info.id < undoneFrom)
  const target = to === undefined ? candidates.at(-1) : users.find((m) => m.info.id === to)
  if (target === undefined)
    return new UndoError({
      message:
        to === undefined
          ? `Nothing to undo in session ${session.id}: ${users.length === 0 ? "it has no messages" : "every message is undone already"}.`
          : `${to} is not a message you sent in session ${session.id}: give the id of one of its user messages (reins sessions show ${session.id}).`
    })
  if (undoneFrom !== undefined && target.info.id >= undoneFrom)
    return new UndoError({ message: `${target.info.id} is undone already: to bring it back, run reins redo.` })
  return target.info.id
}

/**
 * Undoes the session from user message `from` on: the files its steps changed back to before them (unless
 * conversation only), and its messages kept but marked undone (unless files only), so the model no longer sees
 * them. An undo further back than an earlier one adds to it: the files of the earlier undo are not restored twice.
 */
export const undoSession = Effect.fnUntraced(function* (input: UndoInput, checkpoints: Checkpoints["Service"] | undefined) {
  const store = yield* SessionStore
  const bus = yield* Bus
  const session = yield* store.getSession(input.sessionID)
  const messages = yield* store.messages(input.sessionID)
  const previous = session.revert
  if (previous !== undefined && (previous.files !== input.files || (previous.conversation ?? true) !== input.conversation))
    return yield* new UndoError({
      message: `Session ${session.id} has an undo of ${describe(previous)} already: run reins redo first, or undo the same way again.`
    })
  const from = undoRange(session, messages, input.to)
  if (typeof from !== "string") return yield* from
  const until = previous?.messageID
  const range = messages.filter((m) => m.info.id >= from && (until === undefined || m.info.id < until))
  const skipped = yield* restoreFiles(input, checkpoints, session, changesOf(range), "undo")
  if (input.conversation) yield* markUndone(range, true)
  const now = yield* Clock.currentTimeMillis
  const updated: Session = {
    ...session,
    revert: { messageID: from, files: input.files, conversation: input.conversation },
    time: { ...session.time, updated: now }
  }
  yield* store.updateSession(updated)
  yield* bus.publish({ type: "session.updated", session: updated })
  return {
    sessionID: session.id,
    messageID: from,
    messages: range.filter(isUser).map((m) => m.info.id),
    files: pathsOf(changesOf(range)),
    skipped
  } satisfies Undone
})

/** Takes back the session's undo: its files as the steps left them again, its messages shown to the model again. */
export const redoSession = Effect.fnUntraced(function* (input: Pick<UndoInput, "sessionID" | "force">, checkpoints: Checkpoints["Service"] | undefined) {
  const store = yield* SessionStore
  const bus = yield* Bus
  const session = yield* store.getSession(input.sessionID)
  const revert = session.revert
  if (revert === undefined) return yield* new UndoError({ message: `Nothing to redo in session ${session.id}: it has no undo to take back.` })
  const messages = yield* store.messages(input.sessionID)
  const range = messages.filter((m) => m.info.id >= revert.messageID)
  const conversation = revert.conversation ?? true
  const skipped = yield* restoreFiles({ files: revert.files, force: input.force }, checkpoints, session, changesOf(range), "redo")
  if (conversation) yield* markUndone(range, false)
  const now = yield* Clock.currentTimeMillis
  const { revert: _, ...rest } = session
  const updated: Session = { ...rest, time: { ...session.time, updated: now } }
  yield* store.updateSession(updated)
  yield* bus.publish({ type: "session.updated", session: updated })
  return {
    sessionID: session.id,
    messageID: revert.messageID,
    messages: range.filter(isUser).map((m) => m.info.id),
    files: revert.files ? pathsOf(changesOf(range)) : [],
    skipped
  } satisfies Undone
})

const describe = (revert: NonNullable<Session["revert"]>) =>
  revert.files && (revert.conversation ?? true) ? "files and conversation" : revert.files ? "files only" : "the conversation only"

const pathsOf = (changes: ReadonlyArray<FileChange>) => [...new Set(changes.map((c) => c.path))].sort()

const restoreFiles = (
  input: Pick<UndoInput, "files" | "force">,
  checkpoints: Checkpoints["Service"] | undefined,
  session: Session,
  changes: ReadonlyArray<FileChange>,
  direction: "undo" | "redo"
): Effect.Effect<RestoreReport["skipped"], UndoError | RestoreConflict> => {
  if (!input.files || changes.length === 0) return Effect.succeed([])
  if (checkpoints === undefined)
    return Effect.fail(new UndoError({ message: "This runtime keeps no checkpoints of files: undo the conversation only (--conversation-only)." }))
  return checkpoints[direction](session.directory, changes, input.force)
}

/** Marks the user messages of `range` undone (or not): the model's view leaves them and their answers out. */
const markUndone = (range: ReadonlyArray<MessageWithParts>, undone: boolean): Effect.Effect<void, StoreError, SessionStore | Bus> =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const bus = yield* Bus
    for (const m of range) {
      if (m.info.role !== "user" || reverted(m) === undone) continue
      const { reverted: _, ...metadata } = m.info.metadata ?? {}
      const info = { ...m.info, metadata: undone ? { ...metadata, reverted: true } : metadata }
      yield* store.putMessage(info)
      yield* bus.publish({ type: "message.updated", message: info })
    }
  })
