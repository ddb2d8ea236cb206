import type { SessionRun } from "@reins/domain"

// The raw statements more than one SQLite service runs on the shared connection.

/** Inserts or replaces a part (?1 id, ?2 message id, ?3 session id, ?4 JSON). */
export const UPSERT_PART = `INSERT INTO part (id, message_id, session_id, data) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (id) DO UPDATE SET message_id = excluded.message_id, session_id = excluded.session_id, data = excluded.data`

/** Inserts or replaces a message (?1 id, ?2 session id, ?3 creation time, ?4 JSON). */
export const UPSERT_MESSAGE = `INSERT INTO message (id, session_id, time_created, data) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, time_created = excluded.time_created, data = excluded.data`

/** A `session_run` row as bun:sqlite returns it. */
export interface RunRow {
  readonly session_id: string
  readonly pid: number
  readonly host: string
  readonly time_started: number
  readonly time_heartbeat: number
  readonly queued: number
}

/** The run holding a session (?1). */
export const SELECT_RUN = "SELECT session_id, pid, host, time_started, time_heartbeat, queued FROM session_run WHERE session_id = ?1"

/** The run a row stores. */
export const runOf = (row: RunRow): SessionRun => ({
  sessionID: row.session_id,
  pid: row.pid,
  host: row.host,
  time: { started: row.time_started, heartbeat: row.time_heartbeat },
  queued: row.queued
})
