// The storage services over PostgreSQL, in a module of their own: Storage.ts imports it only when a postgres:// URL
// is given, so a SQLite run never loads the PostgreSQL driver.
import { Effect, Layer } from "effect"
import { EventLog } from "./EventLog.ts"
import { Grants } from "./Grants.ts"
import { PendingQuestions } from "./PendingQuestions.ts"
import { openPostgres, type PgDatabase } from "./PgDatabase.ts"
import { makePgEventLog } from "./PgEventLog.ts"
import { makePgGrants } from "./PgGrants.ts"
import { makePgPendingQuestions } from "./PgPendingQuestions.ts"
import { makePgRunClaims } from "./PgRunClaims.ts"
import { makePgSessionStore } from "./PgSessionStore.ts"
import { RunClaims } from "./RunClaims.ts"
import { SessionStore } from "./SessionStore.ts"
import type { Services } from "./Storage.ts"
import type { StoreError } from "./StoreError.ts"

/** Every storage service over one PostgreSQL pool. */
export const pgServices = (db: PgDatabase): Layer.Layer<Services> =>
  Layer.mergeAll(
    Layer.succeed(SessionStore, makePgSessionStore(db)),
    Layer.succeed(RunClaims, makePgRunClaims(db)),
    Layer.succeed(Grants, makePgGrants(db)),
    Layer.effect(EventLog, makePgEventLog(db)),
    Layer.succeed(PendingQuestions, makePgPendingQuestions(db))
  )

/** Every storage service over the PostgreSQL database at `url` (see Storage.layerPostgres). */
export const layerPostgres = (url: string): Layer.Layer<Services, StoreError> => Layer.unwrap(Effect.map(openPostgres(url), pgServices))
