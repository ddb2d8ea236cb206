import type { SessionRun } from "@reins/domain"
import { Effect, Queue, Schedule, Stream } from "effect"
import { fencePasses, takenOver, WritingClaim } from "./Claim.ts"
import type { SqliteDatabase } from "./Database.ts"
import type { EventLog, EventToAppend, LoggedEvent, ReadEventsOptions } from "./EventLog.ts"
import { runOf, SELECT_RUN, type RunRow } from "./Sql.ts"
import { toStoreError, type StoreError } from "./StoreError.ts"

/** How often `wakeups` asks SQLite whether another connection committed (`PRAGMA data_version`). */
const POLL_MS = 25

const COLUMNS = "id, session_id, root_session_id, seq, time, data"
const LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) AS seq FROM session_event WHERE session_id = ?1"
const INSERT = `INSERT INTO session_event (session_id, root_session_id, seq, type, time, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id`
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
    if (claim !== undefined) {
      const row = selectRun.get(claim.sessionID)
      const holder = row === null ? undefined : runOf(row)
      if (holder === undefined || !fencePasses(holder, claim)) throw takenOver(claim, holder)
    }
    const seqs = new Map<string, number>()
    return batch.map((item) => {
      const seq = (seqs.get(item.sessionID) ?? lastSeq.get(item.sessionID)?.seq ?? 0) + 1
      seqs.set(item.sessionID, seq)
      const row = insert.get(item.sessionID, item.rootSessionID, seq, item.event.type, item.time, JSON.stringify(item.event))
      return { id: row!.id, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event }
    })
  })

  const append = Effect.fn("EventLog.append")(function* (batch: ReadonlyArray<EventToAppend>) {
    const claim = yield* WritingClaim
    if (batch.length === 0 && claim === undefined) return []
    const logged = yield* attempt(
      () => `append ${batch.length} events to the event log`,
      () => appendBatch.immediate(claim, batch)
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
