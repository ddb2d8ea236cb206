import type { Message, Part, SessionRun } from "@reins/domain"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { fencePasses, takenOver } from "./Claim.ts"
import { PG_NOW_MS } from "./PgDatabase.ts"

// The raw statements more than one PostgreSQL service runs. Text ids compare as bytes (COLLATE "C"), as SQLite
// compares TEXT, whatever the database's default collation.

/** A bigint (ms) or numeric as PostgreSQL returns it, as a JS number. */
export const num = (value: unknown): number => (typeof value === "number" ? value : Number(value))

/**
 * Inserts or replaces a part ($1 id, $2 message id, $3 session id, $4 JSON text); only where `passes` holds (a
 * fenced write's condition, see `fencedWrite`).
 */
export const PG_UPSERT_PART = (
  passes = "TRUE"
) => `INSERT INTO part (id, message_id, session_id, data) SELECT $1::text, $2::text, $3::text, $4::jsonb WHERE ${passes}
  ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id, session_id = excluded.session_id, data = excluded.data`

/** Inserts or replaces a message ($1 id, $2 session id, $3 creation time, $4 JSON text); only where `passes` holds. */
export const PG_UPSERT_MESSAGE = (
  passes = "TRUE"
) => `INSERT INTO message (id, session_id, time_created, data) SELECT $1::text, $2::text, $3::bigint, $4::jsonb WHERE ${passes}
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, time_created = excluded.time_created, data = excluded.data`

export const partValues = (part: Part) => [part.id, part.messageID, part.sessionID, JSON.stringify(part)]
export const messageValues = (message: Message) => [message.id, message.sessionID, message.time.created, JSON.stringify(message)]

export const upsertPart = (sql: SqlClient, part: Part) => sql.unsafe(PG_UPSERT_PART(), partValues(part))

export const upsertMessage = (sql: SqlClient, message: Message) => sql.unsafe(PG_UPSERT_MESSAGE(), messageValues(message))

/** A `session_run` row as @effect/sql-pg returns it (bigint columns as bigint). */
export interface PgRunRow {
  readonly session_id: string
  readonly holder: string
  readonly host: string
  readonly pid: number
  readonly epoch: number
  readonly time_started: bigint | number
  readonly time_expires: bigint | number
  readonly queued: number
  readonly abort: boolean
}

/** The columns of a `session_run` row, in `PgRunRow` order. */
export const PG_RUN_COLUMNS = `session_id, holder, host, pid, epoch, time_started, time_expires, queued, "abort"`

/** The lease a row stores. */
export const pgRunOf = (row: PgRunRow): SessionRun => ({
  sessionID: row.session_id,
  holder: row.holder,
  host: row.host,
  pid: num(row.pid),
  epoch: num(row.epoch),
  time: { started: num(row.time_started), expires: num(row.time_expires) },
  queued: num(row.queued),
  abort: row.abort === true
})

/** The live lease of a session ($1): held and not expired in database time. */
export const PG_SELECT_LIVE_RUN = `SELECT ${PG_RUN_COLUMNS} FROM session_run WHERE session_id = $1 AND holder <> '' AND time_expires > ${PG_NOW_MS}`

/**
 * The fence, inside a write's transaction: fails with "taken-over" unless the session's lease is still `claim`'s
 * epoch, held by it or released since (fencePasses). FOR SHARE keeps a concurrent claim of the session waiting until this write has committed.
 */
export const fence = (sql: SqlClient, claim: SessionRun): Effect.Effect<void, SqlError | ReturnType<typeof takenOver>> =>
  Effect.flatMap(sql.unsafe<PgRunRow>(`SELECT ${PG_RUN_COLUMNS} FROM session_run WHERE session_id = $1 FOR SHARE`, [claim.sessionID]), (rows) => {
    const holder = rows[0] === undefined ? undefined : pgRunOf(rows[0])
    return holder !== undefined && fencePasses(holder, claim) ? Effect.void : Effect.fail(takenOver(claim, holder))
  })

/**
 * A write behind the fence in one statement (one round trip, no transaction of its own): the session's lease row is
 * locked FOR SHARE (a concurrent claim waits for the write; one that committed first is the row read), `write` runs
 * only where the condition it is given holds (`fencePasses`, in SQL), and the lease comes back to say why not. `write`
 * (its parameters `params`, $1…) gets no RETURNING: the number of rows it wrote is returned.
 */
export const fencedWrite = (
  sql: SqlClient,
  claim: SessionRun,
  write: (passes: string) => string,
  params: ReadonlyArray<unknown>
): Effect.Effect<number, SqlError | ReturnType<typeof takenOver>> => {
  const n = params.length
  const passes = `EXISTS (SELECT 1 FROM f WHERE f.epoch = $${n + 2}::int AND (f.holder = $${n + 3}::text OR f.holder = ''))`
  const text = `WITH f AS (SELECT ${PG_RUN_COLUMNS} FROM session_run WHERE session_id = $${n + 1}::text FOR SHARE),
  w AS (${write(passes)} RETURNING 1)
  SELECT f.*, (SELECT count(*)::int FROM w) AS written FROM (SELECT 1) AS one LEFT JOIN f ON true`
  return Effect.flatMap(sql.unsafe<PgRunRow & { readonly written: number }>(text, [...params, claim.sessionID, claim.epoch, claim.holder]), (rows) => {
    const row = rows[0]
    const holder = row === undefined || row.session_id === null ? undefined : pgRunOf(row)
    return holder !== undefined && fencePasses(holder, claim) ? Effect.succeed(num(row!.written)) : Effect.fail(takenOver(claim, holder))
  })
}
