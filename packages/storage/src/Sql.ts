import type { Session, SessionRun } from "@reins/domain"
import { fencePasses, takenOver } from "./Claim.ts"

// The raw statements more than one SQLite service runs on the shared connection (and the session row's values,
// which the PostgreSQL store binds too).

/** A session's row: id, directory, parent id, title, created, updated, JSON (the `session` table's column order). */
export type SessionValues = [string, string, string | null, string, number, number, string]
export const sessionValues = (session: Session): SessionValues => [
  session.id,
  session.directory,
  session.parentID ?? null,
  session.title,
  session.time.created,
  session.time.updated,
  JSON.stringify(session)
]

/** Inserts or replaces a part (?1 id, ?2 message id, ?3 session id, ?4 JSON). */
export const UPSERT_PART = `INSERT INTO part (id, message_id, session_id, data) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id, session_id = excluded.session_id, data = excluded.data`

/** Inserts or replaces a message (?1 id, ?2 session id, ?3 creation time, ?4 JSON). */
export const UPSERT_MESSAGE = `INSERT INTO message (id, session_id, time_created, data) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, time_created = excluded.time_created, data = excluded.data`

/**
 * `fencePasses` in SQL, its three values given as placeholders: the lease of `session` is still `epoch`, held by
 * `holder` or released since. A write that is one statement with this condition is its own fenced transaction:
 * SQLite takes the write lock as the statement begins, before the condition is read (one statement instead of BEGIN
 * IMMEDIATE, the lease's read, the write and COMMIT).
 */
export const fenceSql = (session: string, holder: string, epoch: string) =>
  `EXISTS (SELECT 1 FROM session_run WHERE session_id = ${session} AND epoch = ${epoch} AND (holder = ${holder} OR holder = ''))`
const FENCE = fenceSql("?5", "?6", "?7")

/** UPSERT_PART where the fence passes (?5 session id, ?6 holder, ?7 epoch of the writing claim); no change otherwise. */
export const FENCED_UPSERT_PART = `INSERT INTO part (id, message_id, session_id, data) SELECT ?1, ?2, ?3, ?4 WHERE ${FENCE}
  ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id, session_id = excluded.session_id, data = excluded.data`

/** UPSERT_MESSAGE where the fence passes (?5 session id, ?6 holder, ?7 epoch of the writing claim); no change otherwise. */
export const FENCED_UPSERT_MESSAGE = `INSERT INTO message (id, session_id, time_created, data) SELECT ?1, ?2, ?3, ?4 WHERE ${FENCE}
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, time_created = excluded.time_created, data = excluded.data`

/** The database's time in ms (Unix epoch): leases expire by it, not by any caller's clock. */
export const NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

/** A `session_run` row as bun:sqlite returns it. */
export interface RunRow {
  readonly session_id: string
  readonly holder: string
  readonly host: string
  readonly pid: number
  readonly epoch: number
  readonly time_started: number
  readonly time_expires: number
  readonly queued: number
  readonly abort: number
}

/** The columns of a `session_run` row, in `RunRow` order. */
export const RUN_COLUMNS = `session_id, holder, host, pid, epoch, time_started, time_expires, queued, "abort"`

/** The lease row of a session (?1), live or not: what the fence compares a WritingClaim with. */
export const SELECT_RUN = `SELECT ${RUN_COLUMNS} FROM session_run WHERE session_id = ?1`

/** The row of a session (?1) with the database's time (`now`), for a decision in one transaction. */
export const SELECT_RUN_NOW = `SELECT ${RUN_COLUMNS}, ${NOW_MS} AS now FROM session_run WHERE session_id = ?1`

/** The live lease of a session (?1): held (holder set) and not expired in database time. */
export const SELECT_LIVE_RUN = `SELECT ${RUN_COLUMNS} FROM session_run WHERE session_id = ?1 AND holder <> '' AND time_expires > ${NOW_MS}`

/** Whether a row is a live lease at `now`. */
export const isLiveRow = (row: RunRow, now: number): boolean => row.holder !== "" && row.time_expires > now

/** The lease a row stores. */
export const runOf = (row: RunRow): SessionRun => ({
  sessionID: row.session_id,
  holder: row.holder,
  host: row.host,
  pid: row.pid,
  epoch: row.epoch,
  time: { started: row.time_started, expires: row.time_expires },
  queued: row.queued,
  abort: row.abort !== 0
})

/**
 * The fence checked in a write's own transaction: throws "taken-over" unless the session's stored lease (read by
 * `selectRun`, a prepared SELECT_RUN) passes for `claim`. After a one-statement write that changed nothing, it throws
 * the same error naming the lease that holds the session now.
 */
export const checkFence = (selectRun: { get(sessionID: string): RunRow | null }, claim: SessionRun, failed = false) => {
  const row = selectRun.get(claim.sessionID)
  const holder = row === null ? undefined : runOf(row)
  if (failed || holder === undefined || !fencePasses(holder, claim)) throw takenOver(claim, holder)
}
