import type { SessionRun } from "@reins/domain"
import type { Statement } from "bun:sqlite"
import { Effect, Queue, Schedule, Stream } from "effect"
import { WritingClaim } from "./Claim.ts"
import type { SqliteDatabase } from "./Database.ts"
import type { EventLog, EventToAppend, LoggedEvent, ReadEventsOptions } from "./EventLog.ts"
import { checkFence, fenceSql, SELECT_RUN, type RunRow } from "./Sql.ts"
import { toStoreError, type StoreError } from "./StoreError.ts"

/** How often `wakeups` asks SQLite whether another connection committed (`PRAGMA data_version`). */
const POLL_MS = 25

const COLUMNS = "id, session_id, root_session_id, seq, time, data"
const LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) AS seq FROM session_event WHERE session_id = ?1"
const INSERT = `INSERT INTO session_event (session_id, root_session_id, seq, type, time, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id`
/** A batch up to this long is one statement (one prepared per length); a longer one (events kept after failures) one transaction. */
const MAX_STATEMENT_BATCH = 64
/**
 * A batch of `n` events in one statement, its own transaction: each event's seq is its session's last (read before
 * any row is written: SQLite copies a select that reads the table it inserts into before inserting) plus its place
 * among the batch's events of that session; rows go in batch order, so ids do. Fenced where ?1 (the writing claim's
 * session) is not null: only where that lease is still epoch ?3, held by ?2 or released since (`fencePasses`).
 * Each event's values follow: session, root, place in its session, type, time, JSON.
 */
const insertBatch = (n: number) => {
  const rows = Array.from({ length: n }, (_, i) => {
    const at = 4 + i * 6
    return `(?${at}, ?${at + 1}, ?${at + 2}, ?${at + 3}, ?${at + 4}, ?${at + 5})`
  })
  return `INSERT INTO session_event (session_id, root_session_id, seq, type, time, data)
  SELECT v.column1, v.column2, COALESCE((SELECT MAX(e.seq) FROM session_event e WHERE e.session_id = v.column1), 0) + v.column3, v.column4,
    v.column5, v.column6 FROM (VALUES ${rows.join(", ")}) AS v
  WHERE ?1 IS NULL OR ${fenceSql("?1", "?2", "?3")}
  RETURNING id, session_id, seq`
}
// id is an INTEGER PRIMARY KEY: ORDER BY id is numeric, and the rowid order
const READ_ALL = `SELECT ${COLUMNS} FROM session_event WHERE id > ?1 ORDER BY id LIMIT ?2`
const READ_SESSION = `SELECT ${COLUMNS} FROM session_event WHERE id > ?1 AND session_id = ?3 ORDER BY id LIMIT ?2`
const READ_ROOT = `SELECT ${COLUMNS} FROM session_event WHERE id > ?1 AND root_session_id = ?3 ORDER BY id LIMIT ?2`

interface EventRow {
  readonly id: number
  readonly session_id: string
  readonly root_session_id: string
  readonly seq: number
  readonly time: number
  readonly data: string
}

const loggedOf = (row: EventRow): LoggedEvent => ({
  id: row.id,
  sessionID: row.session_id,
  rootSessionID: row.root_session_id,
  seq: row.seq,
  time: row.time,
  event: JSON.parse(row.data)
})

/** The EventLog over the SQLite database: each append one IMMEDIATE transaction, so ids are given in commit order. */
export const makeSqliteEventLog = (db: SqliteDatabase): Effect.Effect<EventLog["Service"], StoreError> =>
  Effect.try({
    try: () => build(db),
    catch: (error) => toStoreError(db.file, "prepare the event log queries", error)
  })

const build = ({ client, file }: SqliteDatabase): EventLog["Service"] => {
  const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })
  const selectRun = client.prepare<RunRow, [string]>(SELECT_RUN)
  const lastSeq = client.prepare<{ seq: number }, [string]>(LAST_SEQ)
  const insert = client.prepare<{ id: number }, [string, string, number, string, number, string]>(INSERT)
  const readAll = client.prepare<EventRow, [number, number]>(READ_ALL)
  const readSession = client.prepare<EventRow, [number, number, string]>(READ_SESSION)
  const readRoot = client.prepare<EventRow, [number, number, string]>(READ_ROOT)
  const lastId = client.prepare<{ id: number | null }, []>("SELECT MAX(id) AS id FROM session_event")
  const firstId = client.prepare<{ id: number | null }, []>("SELECT MIN(id) AS id FROM session_event")
  const prune = client.prepare<void, [number]>("DELETE FROM session_event WHERE time < ?1")
  const dataVersion = client.prepare<{ data_version: number }, []>("PRAGMA data_version")
  const listeners = new Set<() => void>()

  const appendBatch = client.transaction((claim: SessionRun | undefined, batch: ReadonlyArray<EventToAppend>): Array<LoggedEvent> => {
    if (claim !== undefined) checkFence(selectRun, claim)
    const seqs = new Map<string, number>()
    return batch.map((item) => {
      const seq = (seqs.get(item.sessionID) ?? lastSeq.get(item.sessionID)?.seq ?? 0) + 1
      seqs.set(item.sessionID, seq)
      const row = insert.get(item.sessionID, item.rootSessionID, seq, item.event.type, item.time, JSON.stringify(item.event))
      return { id: row!.id, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event }
    })
  })

  const batchStatements = new Map<number, Statement<{ id: number; session_id: string; seq: number }, Array<string | number | null>>>()
  /** A batch of 1 to MAX_STATEMENT_BATCH events appended by one statement: what appendBatch does, in one step. */
  const appendInOne = (claim: SessionRun | undefined, batch: ReadonlyArray<EventToAppend>): Array<LoggedEvent> => {
    let statement = batchStatements.get(batch.length)
    if (statement === undefined) batchStatements.set(batch.length, (statement = client.prepare(insertBatch(batch.length))))
    // each event's place among the batch's events of its session
    const counts = new Map<string, number>()
    const places = batch.map((item) => {
      const place = (counts.get(item.sessionID) ?? 0) + 1
      counts.set(item.sessionID, place)
      return place
    })
    const values: Array<string | number | null> = [claim?.sessionID ?? null, claim?.holder ?? null, claim?.epoch ?? null]
    for (const [i, item] of batch.entries()) values.push(item.sessionID, item.rootSessionID, places[i]!, item.event.type, item.time, JSON.stringify(item.event))
    const rows = statement.all(...values)
    // the fence failed: the lease that holds the session now, for the error
    if (rows.length === 0) checkFence(selectRun, claim!, true)
    // each event's row by its session and seq (the order RETURNING gives rows in is not promised): a session's
    // events are its last seq before the batch plus 1, 2, …
    const ids = new Map<string, number>()
    const before = new Map<string, number>()
    for (const row of rows) {
      ids.set(`${row.seq} ${row.session_id}`, row.id)
      before.set(row.session_id, Math.min(before.get(row.session_id) ?? row.seq, row.seq - 1))
    }
    return batch.map((item, i) => {
      const seq = before.get(item.sessionID)! + places[i]!
      return { id: ids.get(`${seq} ${item.sessionID}`)!, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event }
    })
  }

  const append = Effect.fn("EventLog.append")(function* (batch: ReadonlyArray<EventToAppend>) {
    const claim = yield* WritingClaim
    if (batch.length === 0 && claim === undefined) return []
    const logged = yield* attempt(
      () => `append ${batch.length} events to the event log`,
      () => (batch.length > 0 && batch.length <= MAX_STATEMENT_BATCH ? appendInOne(claim, batch) : appendBatch.immediate(claim, batch))
    )
    for (const listener of listeners) listener()
    return logged
  })

  const read = Effect.fn("EventLog.read")(function* (options: ReadEventsOptions) {
    const limit = options.limit ?? -1
    const rows = yield* attempt(
      () => `read the event log after ${options.after}`,
      () =>
        options.sessionID !== undefined
          ? readSession.all(options.after, limit, options.sessionID)
          : options.rootSessionID !== undefined
            ? readRoot.all(options.after, limit, options.rootSessionID)
            : readAll.all(options.after, limit)
    )
    const events = rows.map(loggedOf)
    // both given: the session's, within the tree asked for
    return options.sessionID !== undefined && options.rootSessionID !== undefined ? events.filter((e) => e.rootSessionID === options.rootSessionID) : events
  })

  // Another connection's commit changes data_version; this connection's own appends wake the listeners directly.
  const polled = Stream.fromEffectSchedule(
    attempt(
      () => "poll the event log for other processes' events",
      () => dataVersion.get()?.data_version ?? 0
    ).pipe(Effect.catch((error) => Effect.as(Effect.logWarning(error.message), -1))),
    Schedule.spaced(POLL_MS)
  ).pipe(Stream.changes, Stream.drop(1), Stream.as(undefined))
  const own = Stream.callback<void>(
    (queue) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const listener = () => void Queue.offerUnsafe(queue, undefined)
          listeners.add(listener)
          return listener
        }),
        (listener) => Effect.sync(() => listeners.delete(listener))
      ),
    { bufferSize: 1, strategy: "sliding" }
  )

  return {
    append,
    read,
    last: () =>
      attempt(
        () => "read the event log's last id",
        () => lastId.get()?.id ?? 0
      ),
    first: () =>
      attempt(
        () => "read the event log's first id",
        () => firstId.get()?.id ?? 0
      ),
    prune: Effect.fn("EventLog.prune")(function* (beforeTime: number) {
      return yield* attempt(
        () => "prune the event log",
        () => prune.run(beforeTime).changes
      )
    }),
    wakeups: Stream.merge(own, polled)
  }
}
