import { Bus, type FileChange, type Message, type MessageWithParts, type Session } from "@reins/domain"
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

/** A prompt that started a turn (not one queued into a running turn, not the loop's own after a compaction). */
const isPrompt = (m: MessageWithParts) => m.info.role === "user" && m.info.metadata?.compaction_continue !== true && m.info.metadata?.queued !== true
/** Undone by the session's undo in progress (`true`), or for good by a prompt sent after it (`"final"`). */
const undoneMark = (m: MessageWithParts) => (m.info.role === "user" ? m.info.metadata?.reverted : undefined)

/** Each message with the prompt whose turn it belongs to (the last prompt at or before it: messages are in id order). */
const byTurn = (messages: ReadonlyArray<MessageWithParts>) => {
  let owner: MessageWithParts | undefined
  return messages.map((m) => {
    if (isPrompt(m)) owner = m
    return { message: m, owner }
  })
}

/** Undone for good with its files (a conversation-only undo made final left them as they were: they count as any turn's). */
const goneForGood = (owner: MessageWithParts | undefined) =>
  owner !== undefined && undoneMark(owner) === "final" && (owner.info.role !== "user" || owner.info.metadata?.reverted_files !== false)

/** The messages from prompt `from` on (before `until`), less the turns undone for good with their files. */
export const rangeOf = (messages: ReadonlyArray<MessageWithParts>, from: string, until: string | undefined) =>
  byTurn(messages)
    .filter(({ message, owner }) => message.info.id >= from && (until === undefined || message.info.id < until) && !goneForGood(owner))
    .map(({ message }) => message)

/** The file changes the steps of `messages` recorded, oldest first, by the directory they were made in. */
export const changesOf = (messages: ReadonlyArray<MessageWithParts>, directory: string): ReadonlyMap<string, ReadonlyArray<FileChange>> => {
  const out = new Map<string, Array<FileChange>>()
  for (const m of messages)
    for (const p of m.parts) {
      if (p.type !== "patch") continue
      const at = p.directory ?? directory
      out.set(at, [...(out.get(at) ?? []), ...p.files])
    }
  return out
}

/** The prompts an undo can go back to before, oldest first: those not undone (nor after the session's undo). */
export const undoTargets = (session: Session, messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  const undoneFrom = session.revert?.messageID
  return messages.filter((m) => isPrompt(m) && undoneMark(m) === undefined && (undoneFrom === undefined || m.info.id < undoneFrom))
}

/** The user messages an undo (to `to`, else the last one not undone) takes back, and where it starts. */
export const undoRange = (session: Session, messages: ReadonlyArray<MessageWithParts>, to: string | undefined) => {
  const users = messages.filter((m) => isPrompt(m) && undoneMark(m) === undefined)
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
  const range = rangeOf(messages, from, previous?.messageID)
  const changes = changesOf(range, session.directory)
  const skipped = yield* restoreFiles(input, checkpoints, changes, "undo")
  if (input.conversation) yield* markUndone(range, true, input.files)
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
    messages: range.filter((m) => isPrompt(m) && undoneMark(m) !== "final").map((m) => m.info.id),
    files: input.files ? pathsOf(changes) : [],
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
  const range = rangeOf(messages, revert.messageID, undefined)
  const conversation = revert.conversation ?? true
  const changes = changesOf(range, session.directory)
  const skipped = yield* restoreFiles({ files: revert.files, force: input.force }, checkpoints, changes, "redo")
  if (conversation) yield* markUndone(range, false, revert.files)
  const now = yield* Clock.currentTimeMillis
  const { revert: _, ...rest } = session
  const updated: Session = { ...rest, time: { ...session.time, updated: now } }
  yield* store.updateSession(updated)
  yield* bus.publish({ type: "session.updated", session: updated })
  return {
    sessionID: session.id,
    messageID: revert.messageID,
    messages: range.filter((m) => isPrompt(m) && undoneMark(m) !== "final").map((m) => m.info.id),
    files: revert.files ? pathsOf(changes) : [],
    skipped
  } satisfies Undone
})

const describe = (revert: NonNullable<Session["revert"]>) =>
  revert.files && (revert.conversation ?? true) ? "files and conversation" : revert.files ? "files only" : "the conversation only"

export const pathsOf = (changes: ReadonlyMap<string, ReadonlyArray<FileChange>>) => [...new Set([...changes.values()].flat().map((c) => c.path))].sort()

const restoreFiles = (
  input: Pick<UndoInput, "files" | "force">,
  checkpoints: Checkpoints["Service"] | undefined,
  changes: ReadonlyMap<string, ReadonlyArray<FileChange>>,
  direction: "undo" | "redo"
): Effect.Effect<RestoreReport["skipped"], UndoError | RestoreConflict> => {
  if (!input.files || changes.size === 0) return Effect.succeed([])
  if (checkpoints === undefined)
    return Effect.fail(new UndoError({ message: "This runtime keeps no checkpoints of files: undo the conversation only (--conversation-only)." }))
  // each directory the steps ran in (a session resumed elsewhere ran there)
  return Effect.map(
    Effect.forEach([...changes], ([directory, files]) => checkpoints[direction](directory, files, input.force)),
    (skipped) => skipped.flat()
  )
}

/**
 * A prompt sent after an undo makes it final: the messages it undid stay undone for good (`"final"`: never redone,
 * never undone again, their files never restored by a later undo), and the session's undo is gone.
 */
export const finalizeUndo = Effect.fnUntraced(function* (sessionID: string) {
  const store = yield* SessionStore
  const bus = yield* Bus
  for (const m of yield* store.messages(sessionID)) {
    // the prompts undone, and the summaries their turns made
    if (m.info.role === "user" ? m.info.metadata?.reverted !== true : m.info.reverted !== true) continue
    const info: Message = m.info.role === "user" ? { ...m.info, metadata: { ...m.info.metadata, reverted: "final" } } : { ...m.info, reverted: "final" }
    yield* store.putMessage(info)
    yield* bus.publish({ type: "message.updated", message: info })
  }
})

/**
 * Marks every message of `range` undone (or not): its prompts, answers, messages queued into its turns, the loop's own
 * after a compaction, its summaries. The model's view and a compaction leave them out, message by message.
 */
const markUndone = (range: ReadonlyArray<MessageWithParts>, undone: boolean, files: boolean): Effect.Effect<void, StoreError, SessionStore | Bus> =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const bus = yield* Bus
    for (const m of range) {
      const put = (info: Message) => Effect.andThen(store.putMessage(info), bus.publish({ type: "message.updated", message: info }))
      const message = m.info
      // a message undone for good stays so; a redo takes back only this undo's
      if (message.role === "assistant") {
        if (message.reverted === "final" || (message.reverted === true) === undone) continue
        const { reverted: _, ...rest } = message
        yield* put(undone ? { ...rest, reverted: true } : rest)
        continue
      }
      const mark = message.metadata?.reverted
      if (mark === "final" || (mark === true) === undone) continue
      // a conversation-only undo says so on its prompts: made final, their turns' files still count as any turn's
      const { reverted: _, reverted_files: _f, ...metadata } = message.metadata ?? {}
      const filesKept = !files && isPrompt(m) ? { reverted_files: false } : {}
      yield* put({ ...message, metadata: undone ? { ...metadata, reverted: true, ...filesKept } : metadata })
    }
  })
