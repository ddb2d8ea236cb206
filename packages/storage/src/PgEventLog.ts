import type { LogEvent } from "@reins/domain"
import { Effect, Schedule, type Scope, Stream } from "effect"
import { WritingClaim } from "./Claim.ts"
import type { EventLog, EventToAppend, LoggedEvent, ReadEventsOptions } from "./EventLog.ts"
import { attemptPg, type PgDatabase, toPgStoreError } from "./PgDatabase.ts"
import { fence, num } from "./PgSql.ts"

/** The channel every append notifies (its payload: the newest id) and `wakeups` listens on. */
export const EVENTS_CHANNEL = "reins_events"
/** The advisory lock held from an append's inserts to its commit, so that ids become visible in id order. */
export const APPEND_LOCK = 0x7265696e7365

const COLUMNS = `id, session_id, root_session_id, seq, "time", data`
const placeholders = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `$${from + i + 1}`).join(", ")
const LAST_SEQS = (sessions: number) =>
  `SELECT session_id, MAX(seq)::int AS seq FROM session_event WHERE session_id IN (${placeholders(sessions)}) GROUP BY session_id`
/** Rows per INSERT: 6 parameters a row, well under PostgreSQL's 65535. */
const INSERT_CHUNK = 1000
const INSERT_ROWS = (rows: number) =>
  `INSERT INTO session_event (session_id, root_session_id, seq, type, "time", data) VALUES ${Array.from(
    { length: rows },
    (_, r) => `($${r * 6 + 1}, $${r * 6 + 2}, $${r * 6 + 3}, $${r * 6 + 4}, $${r * 6 + 5}, $${r * 6 + 6}::jsonb)`
  ).join(", ")} RETURNING id, session_id, seq`
// $2 NULL: no limit. id is a bigint: ORDER BY id is numeric.
const READ = `SELECT ${COLUMNS} FROM session_event WHERE id > $1 AND ($3::text IS NULL OR session_id = $3) AND ($4::text IS NULL OR root_session_id = $4)
  ORDER BY id LIMIT $2::bigint`

interface EventRow {
  readonly id: bigint | number
  readonly session_id: string
  readonly root_session_id: string
  readonly seq: number
  readonly time: bigint | number
  readonly data: LogEvent
}

const loggedOf = (row: EventRow): LoggedEvent => ({
  id: num(row.id),
  sessionID: row.session_id,
  rootSessionID: row.root_session_id,
  seq: num(row.seq),
  time: num(row.time),
  event: row.data
})

/** The warning when the event log's LISTEN fails: the driver's message with the URL's password scrubbed. */
export const listenFailed = (db: PgDatabase, error: unknown): string =>
  `The event log's LISTEN on ${db.where} failed (${toPgStoreError(db.where, "listen for appends", error, db.secret).message}); listening again.`

/**
 * The EventLog over PostgreSQL. An append holds an advisory lock from its inserts to its commit, so no reader ever
 * sees id n+1 committed before n (a tail `id > last` skips nothing), and notifies `reins_events` at commit; `wakeups`
 * LISTENs there, so every process on the database wakes on every append. The adapter holds one LISTEN (one pool
 * connection) while it has any `wakeups` subscriber, fanned out in memory: many followers do not use up the pool.
 */
export const makePgEventLog = (db: PgDatabase): Effect.Effect<EventLog["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const { sql } = db
    const attempt = <A, E>(action: () => string, effect: Effect.Effect<A, E>) => attemptPg(db, action, effect)

    // One round trip for the last seqs of the batch's sessions, one multi-row INSERT per chunk (the parameters of a
    // statement are limited), under the advisory lock: the lock is held for a few round trips, not one per event.
    const insertAll = (batch: ReadonlyArray<EventToAppend>) =>
      Effect.gen(function* () {
        if (batch.length === 0) return []
        yield* sql.unsafe(`SELECT pg_advisory_xact_lock(${APPEND_LOCK})`)
        const sessions = [...new Set(batch.map((item) => item.sessionID))]
        const lastRows = yield* sql.unsafe<{ session_id: string; seq: number }>(LAST_SEQS(sessions.length), sessions)
        const seqs = new Map<string, number>(lastRows.map((row) => [row.session_id, num(row.seq)]))
        const rows = batch.map((item) => {
          const seq = (seqs.get(item.sessionID) ?? 0) + 1
          seqs.set(item.sessionID, seq)
          return { item, seq }
        })
        const logged: Array<LoggedEvent> = []
        for (let from = 0; from < rows.length; from += INSERT_CHUNK) {
          const chunk = rows.slice(from, from + INSERT_CHUNK)
          const values = chunk.flatMap(({ item, seq }) => [item.sessionID, item.rootSessionID, seq, item.event.type, item.time, JSON.stringify(item.event)])
          const inserted = yield* sql.unsafe<{ id: bigint; session_id: string; seq: number }>(INSERT_ROWS(chunk.length), values)
          // each row told by its (session, seq), unique: no reliance on the order RETURNING gives them in
          const ids = new Map(inserted.map((row) => [`${row.session_id}\0${num(row.seq)}`, num(row.id)]))
          for (const { item, seq } of chunk) {
            const id = ids.get(`${item.sessionID}\0${seq}`)
            if (id === undefined) return yield* Effect.die(new Error(`The event log returned no id for event ${seq} of session ${item.sessionID}`))
            logged.push({ id, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event })
          }
        }
        // delivered at commit, to every listener on the database
        yield* sql.unsafe("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, String(logged.at(-1)?.id ?? 0)])
        return logged
      })

    const append = Effect.fn("EventLog.append")(function* (batch: ReadonlyArray<EventToAppend>) {
      const claim = yield* WritingClaim
      if (batch.length === 0 && claim === undefined) return []
      return yield* attempt(
        () => `append ${batch.length} events to the event log`,
        sql.withTransaction(claim === undefined ? insertAll(batch) : Effect.andThen(fence(sql, claim), insertAll(batch)))
      )
    })

    const read = Effect.fn("EventLog.read")(function* (options: ReadEventsOptions) {
      const limit = options.limit === undefined || options.limit < 0 ? null : Math.floor(options.limit)
      const rows = yield* attempt(
        () => `read the event log after ${options.after}`,
        sql.unsafe<EventRow>(READ, [options.after, limit, options.sessionID ?? null, options.rootSessionID ?? null])
      )
      return rows.map(loggedOf)
    })

    const idOf = (query: string, action: string) =>
      attempt(
        () => action,
        Effect.map(sql.unsafe<{ id: bigint | null }>(query), (rows) => num(rows[0]?.id ?? 0))
      )

    // A lost connection ends the LISTEN: logged (the password scrubbed), and listened again a moment later (a
    // reader's poll-free tail). Shared: the first subscriber starts it, the last one's end stops it. A wakeup only says
    // "read again", so a slow subscriber may miss some (sliding) without missing an event.
    const wakeups: Stream.Stream<void> = yield* Stream.unwrap(
      Effect.map(sql.listen(EVENTS_CHANNEL), (queue) => Stream.fromQueue(queue).pipe(Stream.as(undefined)))
    ).pipe(
      Stream.tapError((error) => Effect.logWarning(listenFailed(db, error))),
      Stream.retry(Schedule.spaced("1 second")),
      Stream.catch(() => Stream.empty),
      Stream.share({ capacity: 16, strategy: "sliding" })
    )

    return {
      append,
      read,
      last: () => idOf("SELECT MAX(id) AS id FROM session_event", "read the event log's last id"),
      first: () => idOf("SELECT MIN(id) AS id FROM session_event", "read the event log's first id"),
      prune: Effect.fn("EventLog.prune")(function* (beforeTime: number) {
        const rows = yield* attempt(
          () => "prune the event log",
          sql.unsafe<{ n: number }>(`WITH gone AS (DELETE FROM session_event WHERE "time" < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`, [beforeTime])
        )
        return num(rows[0]?.n ?? 0)
      }),
      wakeups
    }
  })
