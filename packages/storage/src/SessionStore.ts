import { DataDir, type Message, type Part, type PermissionGrant, type Session } from "@reins/domain"
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

/** A message with its parts, as `SessionStore.messages` returns it. */
export interface MessageWithParts {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}

/** Sessions, messages and parts, and the permission grants kept per project; every write is atomic. */
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
  /** A session's messages ordered by id, each with its parts ordered by id. */
  messages(sessionID: string): Effect.Effect<ReadonlyArray<MessageWithParts>, StoreError>
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
  static readonly layer: Layer.Layer<SessionStore, StoreError> = Layer.unwrap(
    Effect.map(DataDir, (dataDir) => SessionStore.layerSqlite(path.join(dataDir, "reins.db")))
  )

  /** In-memory Maps with the same behaviour as SQLite; nothing persists. For tests and embedding. */
  static readonly layerMemory: Layer.Layer<SessionStore> = Layer.sync(SessionStore, makeMemoryStore)
}
