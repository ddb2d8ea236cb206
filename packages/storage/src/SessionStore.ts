import { DataDir, type AssistantMessage, type Message, type Part, type PermissionGrant, type Session, type UserMessage } from "@reins/domain"
import { Context, Effect, Layer } from "effect"
import * as path from "node:path"
import { makeMemoryStore } from "./MemoryStore.ts"
import { makeSqliteStore, openDatabase } from "./SqliteStore.ts"
import type { StoreError } from "./StoreError.ts"

/** Filters for `SessionStore.listSessions`. */
export interface ListSessionsOptions {
  /** Only sessions started in this directory. */
  readonly directory?: string
  /** At most this many sessions (the newest). */
  readonly limit?: number
}

/** Which messages `SessionStore.messages` reads: all of them unless `from` is set. */
export interface MessagesOptions {
  /** Only messages whose id is ≥ this one (a compaction boundary)… */
  readonly from?: string
  /** …and, whatever their id, these (the pinned messages before the boundary). */
  readonly include?: ReadonlyArray<string>
}

/**
 * The process running a turn of a session (T5). Another process that wants to talk to the session
 * queues its message for this run instead of starting a second loop.
 */
export interface SessionRun {
  readonly sessionID: string
  readonly pid: number
  /** The machine's hostname: a pid means something only there. */
  readonly host: string
  readonly time: { readonly started: number; readonly heartbeat: number }
  /** Messages queued for this run since it claimed the session; -1: a claim that takes none (a compaction). */
  readonly queued: number
}

/** Whether a stored run still holds its session (its process is alive, its heartbeat recent). */
export type RunIsLive = (run: SessionRun) => boolean

/** A message with its parts, as `SessionStore.messages` returns it. */
export interface MessageWithParts {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}

/**
 * Sessions, messages and parts, and the permission grants kept per project; every write is atomic.
 * Under a `WritingClaim`, writes to that claim's session also check the claim in the same transaction.
 */
export class SessionStore extends Context.Service<SessionStore, {
  /** Stores a new session; fails if the id is taken. */
  createSession(session: Session): Effect.Effect<void, StoreError>
  /** Replaces a stored session (title, times, …); "not-found" if it is not stored. */
  updateSession(session: Session): Effect.Effect<void, StoreError>
  /** The session with this id; "not-found" if there is none. */
  getSession(id: string): Effect.Effect<Session, StoreError>
  /** Sessions, most recently updated first. */
  listSessions(options?: ListSessionsOptions): Effect.Effect<ReadonlyArray<Session>, StoreError>
  /** The most recently updated top-level session (no parent) of a directory, if any. */
  latestSession(directory: string): Effect.Effect<Session | undefined, StoreError>
  /** Inserts or replaces a message; its session must be stored. Leaves its parts alone. */
  putMessage(message: Message): Effect.Effect<void, StoreError>
  /** Inserts or replaces one part (one cheap prepared statement: called on every streamed delta). */
  putPart(part: Part): Effect.Effect<void, StoreError>
  /** Inserts or replaces many parts in one transaction: all are saved or none. */
  putParts(parts: ReadonlyArray<Part>): Effect.Effect<void, StoreError>
  /** A session's messages (all, or those `options` selects) ordered by id, each with its parts ordered by id. */
  messages(sessionID: string, options?: MessagesOptions): Effect.Effect<ReadonlyArray<MessageWithParts>, StoreError>
  /** A session's newest complete compaction summary (finished, no error), without parts; indexed. */
  latestSummary(sessionID: string): Effect.Effect<AssistantMessage | undefined, StoreError>
  /** Claims a session for a running turn: stores `run` unless a live run holds the session, which is then returned. */
  claimRun(run: SessionRun, isLive: RunIsLive): Effect.Effect<SessionRun | undefined, StoreError>
  /** The run holding a session, live or not. */
  getRun(sessionID: string): Effect.Effect<SessionRun | undefined, StoreError>
  /** Records that a claimed run is still alive; false (nothing written) when the claim no longer holds its session. */
  heartbeatRun(run: SessionRun, time: number): Effect.Effect<boolean, StoreError>
  /**
   * Ends a claimed run unless more messages were queued for it than the `seen` it has read; then
   * returns false and the run goes on to answer them. True when released (or no longer held).
   */
  releaseRun(run: SessionRun, seen: number): Effect.Effect<boolean, StoreError>
  /**
   * Stores a user message and its parts for the live run holding the session, atomically with that
   * check, and counts it as queued; returns the run, or undefined (nothing stored) if none is live.
   */
  queueMessage(message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive): Effect.Effect<SessionRun | undefined, StoreError>
  /** Deletes a session with its messages and parts; "not-found" if it is not stored. */
  deleteSession(id: string): Effect.Effect<void, StoreError>
  /** The grants of one project (every project when undefined), by project, then creation time, then id. */
  listGrants(project?: string): Effect.Effect<ReadonlyArray<PermissionGrant>, StoreError>
  /** Keeps a grant; the same (project, permission, pattern) again is a no-op that keeps the first row. */
  addGrant(grant: PermissionGrant): Effect.Effect<void, StoreError>
  /** Deletes the grants with these ids; returns how many there were (unknown ids are skipped). */
  revokeGrants(ids: ReadonlyArray<string>): Effect.Effect<number, StoreError>
}>()("reins/storage/SessionStore") {
  /** SQLite at `file` (created with its parent directories; migrated on open; closed with the layer). */
  static readonly layerSqlite = (file: string): Layer.Layer<SessionStore, StoreError> =>
    Layer.effect(SessionStore, Effect.flatMap(openDatabase(file), (db) => makeSqliteStore(db, file)))

  /** SQLite at `${DataDir}/reins.db`. */
  static readonly layer: Layer.Layer<SessionStore, StoreError, DataDir> = Layer.unwrap(
    Effect.map(DataDir, (dataDir) => SessionStore.layerSqlite(path.join(dataDir, "reins.db")))
  )

  /** In-memory Maps with the same behaviour as SQLite; nothing persists. For tests and embedding. */
  static readonly layerMemory: Layer.Layer<SessionStore> = Layer.sync(SessionStore, makeMemoryStore)
}
