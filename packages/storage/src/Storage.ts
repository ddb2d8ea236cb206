import type { DataDir } from "@reins/domain"
import { Effect, Layer } from "effect"
import { Database, makeMemoryState } from "./Database.ts"
import { EventLog } from "./EventLog.ts"
import { makeMemoryEventLog, makeMemoryPendingQuestions } from "./MemoryEventLog.ts"
import { PendingQuestions } from "./PendingQuestions.ts"
import { Grants, makeMemoryGrants } from "./Grants.ts"
import { makeMemorySessionStore } from "./MemorySessionStore.ts"
import { makeMemoryRunClaims, RunClaims } from "./RunClaims.ts"
import { SessionStore } from "./SessionStore.ts"
import type { StoreError } from "./StoreError.ts"

/** The storage services, all over one `Database`. */
export type Services = SessionStore | RunClaims | Grants | EventLog | PendingQuestions

/** The storage services over the database `database` opens (once, for all of them). */
export const layerWith = <E, R>(database: Layer.Layer<Database, E, R>): Layer.Layer<Services, E | StoreError, R> =>
  Layer.mergeAll(SessionStore.layer, RunClaims.layer, Grants.layer, EventLog.layer, PendingQuestions.layer).pipe(Layer.provide(database))

/** Every storage service over SQLite at `file` (see `Database.layerSqlite`). */
export const layerSqlite = (file: string): Layer.Layer<Services, StoreError> => layerWith(Database.layerSqlite(file))

/** Every storage service over SQLite at `${DataDir}/reins.db`. */
export const layer: Layer.Layer<Services, StoreError, DataDir> = layerWith(Database.layer)

/** Every storage service over one memory database; nothing persists. For tests and embedding. */
export const layerMemory: Layer.Layer<Services> = Layer.unwrap(
  // Built directly (not through the services' `layer`s) so that its type says it cannot fail.
  Effect.sync(() => {
    const state = makeMemoryState()
    return Layer.mergeAll(
      Layer.succeed(SessionStore, makeMemorySessionStore(state)),
      Layer.succeed(RunClaims, makeMemoryRunClaims(state)),
      Layer.succeed(Grants, makeMemoryGrants(state)),
      Layer.succeed(EventLog, makeMemoryEventLog(state)),
      Layer.succeed(PendingQuestions, makeMemoryPendingQuestions(state))
    )
  })
)
