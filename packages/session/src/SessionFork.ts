import { Clock, Effect } from "effect"
import * as path from "node:path"
import { Bus, type FileChange, Ids, type Message, type Part, realPath, type Session } from "@reins/domain"
import { type MessageWithParts, SessionStore, StoreError } from "@reins/storage"
import type { Checkpoints, CopyError, RestoreConflict, RestoreReport } from "@reins/workspace"
import { rangeOf, UndoError } from "./SessionUndo.ts"

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
 * Fails with "not-found" (and makes nothing) when the session has no message `at`. With `moved` (the
 * project `root` copied to `copy`), the steps' file changes made in the project are said to be in the copy,
 * and those made outside it are left out: the fork's undo never touches another directory. A message an
 * undo in progress took back is copied undone for good (the fork has no undo to redo).
 */
export const forkConversation = Effect.fnUntraced(function* <E>(
  source: Session,
  at: string | undefined,
  create: Effect.Effect<Session, E>,
  moved?: { readonly root: string; readonly copy: string }
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
        ? {
            ...m,
            id,
            sessionID: copy.id,
            parentID: rename(m.parentID),
            ...(summary !== undefined ? { summary } : {}),
            ...(m.reverted ? { reverted: "final" } : {})
          }
        : { ...m, id, sessionID: copy.id, ...(m.metadata?.reverted === true ? { metadata: { ...m.metadata, reverted: "final" } } : {}) }
    yield* store.putMessage(message)
    const movedParts: Array<Part> = []
    for (const part of parts) {
      if (part.type === "patch" && moved !== undefined) {
        // said of the copy's root (whose store the copy's contents go to), as paths below it
        const rel = within(moved.root, part.directory ?? source.directory)
        if (rel === undefined) continue
        movedParts.push({ ...part, directory: moved.copy, files: prefixed(part.files, rel), id: yield* ids.next("prt"), sessionID: copy.id, messageID: id })
      } else movedParts.push({ ...part, id: yield* ids.next("prt"), sessionID: copy.id, messageID: id })
    }
    yield* store.putParts(movedParts)
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
 * The file changes of `messages`' steps, oldest first: those made in `root` or below it as paths of `root` (`inside`),
 * with the directories below it they were recorded in (their contents are in those directories' stores), and the
 * rest by directory.
 */
const changesUnder = (messages: ReadonlyArray<MessageWithParts>, sessionDirectory: string, root: string) => {
  const inside: Array<FileChange> = []
  const nested = new Map<string, Array<FileChange>>()
  const outside = new Map<string, Array<FileChange>>()
  for (const m of messages)
    for (const p of m.parts) {
      if (p.type !== "patch") continue
      const directory = p.directory ?? sessionDirectory
      const rel = within(root, directory)
      if (rel === undefined) outside.set(directory, [...(outside.get(directory) ?? []), ...p.files])
      else inside.push(...prefixed(p.files, rel))
      if (rel !== undefined && rel !== "") nested.set(directory, [...(nested.get(directory) ?? []), ...p.files])
    }
  return { inside, nested, outside }
}

const prefixed = (changes: ReadonlyArray<FileChange>, rel: string) => (rel === "" ? changes : changes.map((c) => ({ ...c, path: `${rel}/${c.path}` })))

/** `directory` as a path of `root` ("" for root itself, `/`-separated), through links; undefined when it is not in it. */
const within = (root: string, directory: string) => {
  const rel = path.relative(root, realPath(directory))
  return rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel) ? undefined : rel.split(path.sep).join("/")
}

/**
 * A fork of a session at message `at` (see forkConversation) whose files, when asked, are brought back to that point
 * too: the changes of the later steps undone in place (the session forked records them as a files-only undo, which
 * its redo takes back), or a copy of the project made in `files.into` as it was then (the fork works there). The
 * files come first: a fork they stop (changed since, a target not empty) makes nothing.
 */
export const forkSession = Effect.fnUntraced(function* <E>(
  input: { readonly sessionID: string; readonly at?: string | undefined; readonly files?: ForkFiles | undefined },
  checkpoints: Checkpoints["Service"] | undefined,
  create: (directory: string) => Effect.Effect<Session, E>
) {
  const store = yield* SessionStore
  const bus = yield* Bus
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
  const root = realPath(source.directory)
  // the steps after the fork's point, less those whose files an undo took back already
  const first = history[end]?.info.id
  const later = changesUnder(first === undefined ? [] : rangeOf(history, first, undone), source.directory, root)
  const restored = [...new Set(later.inside.map((c) => c.path))].sort()
  const kept = changesUnder(history.slice(0, end), source.directory, root)
  // a turn run from a subdirectory keeps its contents in that directory's store: the project's has them too from now on
  for (const [directory, changes] of [...later.nested, ...kept.nested]) yield* checkpoints.carry(directory, source.directory, changes)
  if (files.into === undefined) {
    if (source.revert !== undefined)
      return yield* new UndoError({
        message: `Session ${source.id} has an undo in progress: run reins redo, or send a prompt (which makes it final), then fork with --files; or fork --into a new directory.`
      })
    const skipped = [...(yield* checkpoints.undo(source.directory, later.inside, files.force))]
    // a step that ran outside the project (the session resumed elsewhere): its directory on its own
    for (const [directory, changes] of later.outside) skipped.push(...(yield* checkpoints.undo(directory, changes, files.force)))
    if (first !== undefined && (later.inside.length > 0 || later.outside.size > 0)) {
      // the session forked says its later turns' files are undone: its redo brings them back, its next undo knows
      const now = yield* Clock.currentTimeMillis
      const updated: Session = { ...source, revert: { messageID: first, files: true, conversation: false }, time: { ...source.time, updated: now } }
      yield* store.updateSession(updated)
      yield* bus.publish({ type: "session.updated", session: updated })
    }
    const session = yield* forkConversation(source, input.at, create(source.directory))
    return { session, files: { directory: source.directory, restored, skipped } } satisfies Forked
  }
  const copy = yield* checkpoints.copyBefore({ directory: source.directory, target: files.into, undone: later.inside, kept: kept.inside, force: files.force })
  // a step that ran outside the project changed nothing the copy holds
  const elsewhere = [...later.outside.keys()].map((d) => ({ path: d, reason: "changed by steps outside the project, not in the copy" }))
  const session = yield* forkConversation(source, input.at, create(copy.directory), { root, copy: copy.directory })
  return { session, files: { directory: copy.directory, restored, copied: copy.files, skipped: [...copy.skipped, ...elsewhere] } } satisfies Forked
})

export type ForkFailure = StoreError | UndoError | RestoreConflict | CopyError
