import { PgClient } from "@effect/sql-pg"
import { Effect, Predicate, Redacted, type Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { isSqlError } from "effect/sql/SqlError"
import { migratePg } from "./PgMigrations.ts"
import { redactUrl } from "./DatabaseUrl.ts"
import { StoreError } from "./StoreError.ts"

/** One open, migrated PostgreSQL pool; `where` names it in messages (the URL without its password). */
export interface PgDatabase {
  readonly sql: PgClient.PgClient
  readonly where: string
  /** The URL's password, only to scrub it from a driver's message. */
  readonly secret: string
}

/** The database's time in ms (Unix epoch): leases expire by it, not by any caller's clock. */
export const PG_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

const codeOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && current !== undefined; depth++) {
    if (Predicate.hasProperty(current, "code") && Predicate.isString(current.code)) return current.code
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return undefined
}

const detailOf = (error: unknown): string => {
  let current: unknown = error
  let message = String(error)
  for (let depth = 0; depth < 6 && current !== undefined; depth++) {
    if (Predicate.isError(current) || Predicate.hasProperty(current, "message")) message = String((current as { message: unknown }).message)
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return message
}

/** Maps a PostgreSQL (or connection) error to a StoreError that says what to do; never shows the password. */
export const toPgStoreError = (where: string, action: string, error: unknown, password = ""): StoreError => {
  if (error instanceof StoreError) return error
  const code = codeOf(error)
  const raw = detailOf(error)
  const detail = password === "" ? raw : raw.replaceAll(password, "***")
  const reason = isSqlError(error) ? error.reason._tag : undefined
  if (
    reason === "ConnectionError" ||
    reason === "AuthenticationError" ||
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "3D000" ||
    code === "28P01" ||
    code === "28000"
  ) {
    return new StoreError({
      reason: "io",
      message: `Could not ${action}: cannot connect to PostgreSQL at ${where} (${detail}). Check the database URL (REINS_DATABASE_URL or --database) and that the server is running and accepts connections.`
    })
  }
  if (code === "53100") {
    return new StoreError({
      reason: "disk-full",
      message: `The PostgreSQL server's disk is full: could not ${action} in ${where}. Free some space on the server and try again; everything saved before this point is kept.`
    })
  }
  if (code === "23503")
    return new StoreError({ reason: "io", message: `Could not ${action} in ${where}: it refers to a session or message that is not stored.` })
  if (code === "23505") return new StoreError({ reason: "io", message: `Could not ${action} in ${where}: one with that id is already stored.` })
  return new StoreError({ reason: "io", message: `Could not ${action} in ${where}: ${detail}` })
}

const passwordOf = (url: string): string => {
  try {
    return decodeURIComponent(new URL(url).password)
  } catch {
    return ""
  }
}

/** Runs `effect`, mapping its failure to a StoreError about `action` on `db`. */
export const attemptPg = <A, E, R>(db: PgDatabase, action: () => string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, StoreError, R> =>
  Effect.mapError(effect, (error) => toPgStoreError(db.where, action(), error, db.secret))

/**
 * Opens a pool on the PostgreSQL database at `url` and applies pending migrations (under an advisory lock, so that
 * processes starting together migrate once); the pool closes when the scope closes.
 */
export const openPostgres = (url: string): Effect.Effect<PgDatabase, StoreError, Scope.Scope> => {
  const where = redactUrl(url)
  const password = passwordOf(url)
  return Effect.gen(function* () {
    // read committed whatever the database's default: an append's INSERT must see what was committed before its lock
    // (a snapshot taken at the transaction's start gave two appends the same seq)
    const sql = yield* PgClient.make({
      url: Redacted.make(url),
      connectTimeout: "10 seconds",
      applicationName: "reins",
      startupParameters: { default_transaction_isolation: "read committed" }
    }).pipe(Effect.provide(Reactivity.layer))
    yield* migratePg(sql)
    return { sql, where, secret: password }
  }).pipe(Effect.mapError((error) => toPgStoreError(where, "open the session database", error, password)))
}
