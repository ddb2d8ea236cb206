import type { LogEvent, SessionRun } from "@reins/domain"
import { Effect, Schedule, type Scope, Stream } from "effect"
import type { EventLog, EventToAppend, LoggedEvent, ReadEventsOptions } from "./EventLog.ts"
import { attemptPg, type PgDatabase, toPgStoreError } from "./PgDatabase.ts"
import { fencePasses, takenOver, WritingClaim } from "./Claim.ts"
import { fence, num, PG_RUN_COLUMNS, type PgRunRow, pgRunOf } from "./PgSql.ts"

/** The channel every append notifies (its payload: the newest id) and `wakeups` listens on. */
export const EVENTS_CHANNEL = "reins_events"
/** The advisory lock held from an append's inserts to its commit, so that ids become visible in id order. */
export const APPEND_LOCK = 0x7265696e7365

const COLUMNS = `id, session_id, root_session_id, seq, "time", data`
/** Rows per INSERT: 6 parameters a row, well under PostgreSQL's 65535. */
const INSERT_CHUNK = 1000
/**
 * One statement: the rows, each session's seq continuing from its last stored (`ord`: the row's number among its
 * session's rows in this statement; the statement does not see its own rows, a later chunk sees the earlier ones),
 * and the notification of the newest id, delivered at commit. The ids follow the rows' order.
 */
const INSERT_ROWS = (rows: number) =>
  `WITH v (session_id, root_session_id, ord, type, "time", data) AS (VALUES ${Array.from(
    { length: rows },
    (_, r) => `($${r * 6 + 3}::text, $${r * 6 + 4}::text, $${r * 6 + 5}::int, $${r * 6 + 6}::text, $${r * 6 + 7}::bigint, $${r * 6 + 8}::jsonb)`
  ).join(", ")}),
  ins AS (INSERT INTO session_event (session_id, root_session_id, seq, type, "time", data)
    SELECT v.session_id, v.root_session_id, COALESCE((SELECT MAX(e.seq) FROM session_event e WHERE e.session_id = v.session_id), 0) + v.ord, v.type, v."time", v.data FROM v
    RETURNING id, session_id, seq)
  -- the LEFT JOIN's subquery is kept (its output is volatile) and run once: one notification, of the newest id
  SELECT ins.id, ins.session_id, ins.seq FROM ins LEFT JOIN (SELECT pg_notify($1, (SELECT MAX(id) FROM ins)::text) WHERE $2::boolean) told ON true`
/** The advisory lock, taken after the fence's row lock (a fenced append waits for a take-over, never the reverse). */
const LOCK = `SELECT pg_advisory_xact_lock(${APPEND_LOCK})`
const FENCED_LOCK = `WITH f AS (SELECT ${PG_RUN_COLUMNS} FROM session_run WHERE session_id = $1 FOR SHARE) SELECT f.*, pg_advisory_xact_lock(${APPEND_LOCK}) AS locked FROM f`
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

    // One statement per chunk (the parameters of a statement are limited) after the lock: the lock is held for the
    // inserts and the commit. The lock is a statement of its own before them: an INSERT's snapshot is taken when it
    // starts, so the last seqs it reads are those committed before the lock was held.
    const insertAll = (batch: ReadonlyArray<EventToAppend>) =>
      Effect.gen(function* () {
        const logged: Array<LoggedEvent> = []
        for (let from = 0; from < batch.length; from += INSERT_CHUNK) {
          const chunk = batch.slice(from, from + INSERT_CHUNK)
          const ords = new Map<string, number>()
          const rows = chunk.map((item) => {
            const ord = (ords.get(item.sessionID) ?? 0) + 1
            ords.set(item.sessionID, ord)
            return { item, ord }
          })
          const values = rows.flatMap(({ item, ord }) => [item.sessionID, item.rootSessionID, ord, item.event.type, item.time, JSON.stringify(item.event)])
          const last = from + INSERT_CHUNK >= batch.length
          const inserted = yield* sql.unsafe<{ id: bigint; session_id: string; seq: number }>(INSERT_ROWS(chunk.length), [EVENTS_CHANNEL, last, ...values])
          // each row told by its (session, ord): its seq is the session's last + ord, the same for every row of it
          const byOrd = new Map<string, { id: number; seq: number }>()
          const base = new Map<string, number>()
          for (const row of inserted) {
            const seq = num(row.seq)
            const first = base.get(row.session_id)
            if (first === undefined || seq < first) base.set(row.session_id, seq)
            byOrd.set(`${row.session_id}\0${seq}`, { id: num(row.id), seq })
          }
          for (const { item, ord } of rows) {
            const seq = (base.get(item.sessionID) ?? Number.NaN) - 1 + ord
            const found = byOrd.get(`${item.sessionID}\0${seq}`)
            if (found === undefined)
              return yield* Effect.die(new Error(`The event log returned no id for event ${ord} of session ${item.sessionID} in this batch`))
            logged.push({ id: found.id, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event })
          }
        }
        return logged
      })

    // the fence's row lock, then the advisory lock, in one round trip
    const fencedLock = (claim: SessionRun) =>
      Effect.flatMap(sql.unsafe<PgRunRow>(FENCED_LOCK, [claim.sessionID]), (rows) => {
        const holder = rows[0] === undefined ? undefined : pgRunOf(rows[0])
        return holder !== undefined && fencePasses(holder, claim) ? Effect.void : Effect.fail(takenOver(claim, holder))
      })

    const append = Effect.fn("EventLog.append")(function* (batch: ReadonlyArray<EventToAppend>) {
      const claim = yield* WritingClaim
      if (batch.length === 0 && claim === undefined) return []
      return yield* attempt(
        () => `append ${batch.length} events to the event log`,
        sql.withTransaction(
          batch.length === 0 ? Effect.as(fence(sql, claim!), []) : Effect.andThen(claim === undefined ? sql.unsafe(LOCK) : fencedLock(claim), insertAll(batch))
        )
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
