import { DataDir } from "@reins/domain"
import { Effect, Layer } from "effect"
import * as path from "node:path"
import { makeMemoryState, openDatabase, type MemoryState, type SqliteDatabase } from "./Database.ts"
import { EventLog } from "./EventLog.ts"
import { Grants, makeMemoryGrants, makeSqliteGrants } from "./Grants.ts"
import { makeMemoryEventLog, makeMemoryPendingQuestions } from "./MemoryEventLog.ts"
import { makeMemorySessionStore } from "./MemorySessionStore.ts"
import { PendingQuestions } from "./PendingQuestions.ts"
import { isPostgresUrl, openPostgres, type PgDatabase, redactUrl } from "./PgDatabase.ts"
import { makePgEventLog } from "./PgEventLog.ts"
import { makePgGrants } from "./PgGrants.ts"
import { makePgPendingQuestions } from "./PgPendingQuestions.ts"
import { makePgRunClaims } from "./PgRunClaims.ts"
import { makePgSessionStore } from "./PgSessionStore.ts"
import { makeMemoryRunClaims, makeSqliteRunClaims, RunClaims } from "./RunClaims.ts"
import { SessionStore } from "./SessionStore.ts"
import { makeSqliteEventLog } from "./SqliteEventLog.ts"
import { makeSqlitePendingQuestions } from "./SqlitePendingQuestions.ts"
import { makeSqliteSessionStore } from "./SqliteSessionStore.ts"
import { StoreError } from "./StoreError.ts"

// One adapter per database: each opens its connection once and builds every storage service over it, so
// that a write of one service is checked against, and seen by, the others (a message queued through
// `RunClaims` is read through `SessionStore`; a write under a claim checks it in its own transaction).

/** The storage services, all over one database. */
export type Services = SessionStore | RunClaims | Grants | EventLog | PendingQuestions

/** Every storage service over the memory tables `state`. */
export const memoryServices = (state: MemoryState): Layer.Layer<Services> =>
  Layer.mergeAll(
    Layer.succeed(SessionStore, makeMemorySessionStore(state)),
    Layer.succeed(RunClaims, makeMemoryRunClaims(state)),
    Layer.succeed(Grants, makeMemoryGrants(state)),
    Layer.succeed(EventLog, makeMemoryEventLog(state)),
    Layer.succeed(PendingQuestions, makeMemoryPendingQuestions(state))
  )

/** Every storage service over one open SQLite connection. */
export const sqliteServices = (db: SqliteDatabase): Layer.Layer<Services, StoreError> =>
  Layer.mergeAll(
    Layer.effect(SessionStore, makeSqliteSessionStore(db)),
    Layer.effect(RunClaims, makeSqliteRunClaims(db)),
    Layer.succeed(Grants, makeSqliteGrants(db)),
    Layer.effect(EventLog, makeSqliteEventLog(db)),
    Layer.effect(PendingQuestions, makeSqlitePendingQuestions(db))
  )

/** Every storage service over one PostgreSQL pool. */
export const pgServices = (db: PgDatabase): Layer.Layer<Services> =>
  Layer.mergeAll(
    Layer.succeed(SessionStore, makePgSessionStore(db)),
    Layer.succeed(RunClaims, makePgRunClaims(db)),
    Layer.succeed(Grants, makePgGrants(db)),
    Layer.effect(EventLog, makePgEventLog(db)),
    Layer.succeed(PendingQuestions, makePgPendingQuestions(db))
  )

/** Every storage service over one memory database; nothing persists. For tests and embedding. */
export const layerMemory: Layer.Layer<Services> = Layer.unwrap(Effect.sync(() => memoryServices(makeMemoryState())))

/** Every storage service over SQLite at `file` (created with its parent directories; migrated once on open; closed with the layer). */
export const layerSqlite = (file: string): Layer.Layer<Services, StoreError> =>
  Layer.unwrap(Effect.map(openDatabase(file), (client) => sqliteServices({ client, file })))

/** Every storage service over SQLite at `${DataDir}/reins.db`. */
export const layer: Layer.Layer<Services, StoreError, DataDir> = Layer.unwrap(Effect.map(DataDir, (dataDir) => layerSqlite(path.join(dataDir, "reins.db"))))

/**
 * Every storage service over the PostgreSQL database at `url` (postgres://user:password@host:port/database; a
 * `?options=-c search_path=…` puts reins's tables in a schema of their own). Migrated on open, under an advisory
 * lock; the pool closes with the layer. An unreachable server is a StoreError naming the URL without its password.
 */
export const layerPostgres = (url: string): Layer.Layer<Services, StoreError> => Layer.unwrap(Effect.map(openPostgres(url), pgServices))

/** Where the storage lives: `url` (REINS_DATABASE_URL or --database) when given, else SQLite in `dataDir`. */
export interface DatabaseConfig {
  readonly url?: string | undefined
  readonly dataDir: string
}

/**
 * The adapter a configuration picks: PostgreSQL for a postgres:// or postgresql:// URL, SQLite at
 * `<dataDir>/reins.db` without one; any other URL is a StoreError saying what is accepted.
 */
export const layerFor = (config: DatabaseConfig): Layer.Layer<Services, StoreError> => {
  const url = config.url?.trim() ?? ""
  if (url === "") return layerSqlite(path.join(config.dataDir, "reins.db"))
  if (isPostgresUrl(url)) return layerPostgres(url)
  return Layer.unwrap(
    Effect.fail(
      new StoreError({
        reason: "io",
        message: `The database URL ${redactUrl(url)} is not one reins can use: give a postgres://user@host:port/database URL (REINS_DATABASE_URL or --database), or leave it unset for SQLite in the data directory.`
      })
    )
  )
}
