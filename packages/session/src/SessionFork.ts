import { Effect } from "effect"
import { Ids, type Message, type Part, type Session } from "@reins/domain"
import { SessionStore, StoreError } from "@reins/storage"
import type { Checkpoints, CopyError, RestoreConflict, RestoreReport } from "@reins/workspace"
import { changesOf, pathsOf, rangeOf, UndoError } from "./SessionUndo.ts"

/** A fork's files: back to the fork's point in place, or in a copy of the project made in `into`. */
export interface ForkFiles {
  readonly into?: string | undefined
  /** Overwrite files changed since the steps left them (in place), or copy the steps' versions of them (`into`). */
  readonly force: boolean
}

/** What a fork made: the new session, and what was done to the files when asked. */
export interface Forked {
  readonly session: Session
  readonly files?: {
    /** Where the files are as they were at the fork's point: the session's directory, or the copy. */
    readonly directory: string
    /** The paths brought back to that point (relative). */
    readonly restored: ReadonlyArray<string>
    /** Files in the copy (`into` only). */
    readonly copied?: number
    readonly skipped: RestoreReport["skipped"]
  }
}

/**
 * A copy of `source`'s conversation up to and including message `at` (all of it without one) in a
 * new session made by `create`, under new ids; a compaction's summary names the copied messages.
 * Fails with "not-found" (and makes nothing) when the session has no message `at`. The steps' file
 * changes made in `source.directory` are said to be in `directory` (the fork's copy of the project).
 */
export const forkConversation = Effect.fnUntraced(function* <E>(
  source: Session,
  at: string | undefined,
  create: Effect.Effect<Session, E>,
  directory?: string
) {
  const store = yield* SessionStore
  const ids = yield* Ids
  const history = yield* store.messages(source.id)
  const end = yield* forkEnd(source, history, at)
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
    for (const part of parts) {
      const placed =
        part.type === "patch" && directory !== undefined && (part.directory ?? source.directory) === source.directory ? { ...part, directory } : part
      moved.push({ ...placed, id: yield* ids.next("prt"), sessionID: copy.id, messageID: id })
    }
    yield* store.putParts(moved)
  }
  return copy
})

/** How many of `history`'s messages a fork at `at` keeps; "not-found" when the session has no such message. */
const forkEnd = (source: Session, history: ReadonlyArray<{ readonly info: Message }>, at: string | undefined) => {
  const end = at === undefined ? history.length : history.findIndex((m) => m.info.id === at) + 1
  return at === undefined || end > 0
    ? Effect.succeed(end)
    : Effect.fail(
        new StoreError({
          reason: "not-found",
          message: `Session ${source.id} has no message ${at}: give the id of one of its messages (reins sessions show ${source.id}).`
        })
      )
}

/**
 * A fork of a session at message `at` (see forkConversation) whose files, when asked, are brought back to that point
 * too: the changes of the later steps undone in place, or a copy of the project made in `files.into` as it was then
 * (the fork works there). The files come first: a fork they stop (changed since, a target not empty) makes nothing.
 */
export const forkSession = Effect.fnUntraced(function* <E>(
  input: { readonly sessionID: string; readonly at?: string | undefined; readonly files?: ForkFiles | undefined },
  checkpoints: Checkpoints["Service"] | undefined,
  create: (directory: string) => Effect.Effect<Session, E>
) {
  const store = yield* SessionStore
  const source = yield* store.getSession(input.sessionID)
  const files = input.files
  if (files === undefined) return { session: yield* forkConversation(source, input.at, create(source.directory)) } satisfies Forked
  if (checkpoints === undefined)
    return yield* new UndoError({ message: "This runtime keeps no checkpoints of files: fork the conversation only (without --files)." })
  const history = yield* store.messages(source.id)
  const end = yield* forkEnd(source, history, input.at)
  const undone = source.revert?.files === true ? source.revert.messageID : undefined
  if (undone !== undefined && input.at !== undefined && input.at >= undone)
    return yield* new UndoError({
      message: `${input.at} is undone in session ${source.id}, and so are its files: run reins redo first, or fork at an earlier message.`
    })
  // the steps after the fork's point, less those whose files an undo took back already
  const first = history[end]?.info.id
  const later = changesOf(first === undefined ? [] : rangeOf(history, first, undone), source.directory)
  if (files.into === undefined) {
    const skipped: Array<RestoreReport["skipped"][number]> = []
    for (const [directory, changes] of later) skipped.push(...(yield* checkpoints.undo(directory, changes, files.force)))
    const session = yield* forkConversation(source, input.at, create(source.directory))
    return { session, files: { directory: source.directory, restored: pathsOf(later), skipped } } satisfies Forked
  }
  const kept = changesOf(history.slice(0, end), source.directory).get(source.directory) ?? []
  const copy = yield* checkpoints.copyBefore({
    directory: source.directory,
    target: files.into,
    undone: later.get(source.directory) ?? [],
    kept,
    force: files.force
  })
  // a step that ran in another directory (the session resumed elsewhere) changed nothing the copy holds
  const elsewhere = [...later.keys()]
    .filter((d) => d !== source.directory)
    .map((d) => ({ path: d, reason: "changed by steps in another directory, not copied" }))
  const session = yield* forkConversation(source, input.at, create(copy.directory), copy.directory)
  return {
    session,
    files: {
      directory: copy.directory,
      restored: pathsOf(new Map([[source.directory, later.get(source.directory) ?? []]])),
      copied: copy.files,
      skipped: [...copy.skipped, ...elsewhere]
    }
  } satisfies Forked
})

export type ForkFailure = StoreError | UndoError | RestoreConflict | CopyError
