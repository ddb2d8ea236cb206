import type { Part, SessionRun, UserMessage } from "@reins/domain"
import { Effect } from "effect"
import { freeTreeSql, sameClaim, takesOver } from "./Claim.ts"
import { attemptPg, PG_NOW_MS, type PgDatabase } from "./PgDatabase.ts"
import { PG_RUN_COLUMNS, PG_SELECT_LIVE_RUN, type PgRunRow, pgRunOf, num, upsertMessage, upsertPart } from "./PgSql.ts"
import { type ClaimRequest, RunClaims } from "./RunClaims.ts"

// One lock order everywhere: the lease row first, then the session row (a fenced write locks the lease FOR SHARE
// and then writes the session). A claim never locks the session row: it inserts a released placeholder lease row
// when there is none (two claimers insert one row: the second waits, then does nothing), then locks that row.
const PLACE_RUN = `INSERT INTO session_run (session_id, holder, host, pid, epoch, time_started, time_expires, queued, "abort")
  VALUES ($1, '', '', 0, 0, 0, 0, 0, false) ON CONFLICT (session_id) DO NOTHING`
const SELECT_RUN_FOR_UPDATE = `SELECT ${PG_RUN_COLUMNS}, ${PG_NOW_MS} AS now FROM session_run WHERE session_id = $1 FOR UPDATE`
// $1 session, $2 holder, $3 host, $4 pid, $5 epoch, $6 now, $7 ttl ms, $8 queued
const UPSERT_RUN = `INSERT INTO session_run (session_id, holder, host, pid, epoch, time_started, time_expires, queued, "abort")
  VALUES ($1, $2, $3, $4, $5, $6, $6::bigint + $7::bigint, $8, false)
  ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, epoch = excluded.epoch,
  time_started = excluded.time_started, time_expires = excluded.time_expires, queued = excluded.queued, "abort" = false
  RETURNING ${PG_RUN_COLUMNS}`
const LEASE = "session_id = $1 AND holder = $2 AND epoch = $3"
const FREE_TREE = freeTreeSql((n) => `$${n}`, "false")
const RENEW_RUN = `UPDATE session_run SET time_expires = ${PG_NOW_MS} + $4::bigint WHERE ${LEASE} RETURNING ${PG_RUN_COLUMNS}`
const RELEASE_RUN = `UPDATE session_run SET holder = '', time_expires = 0, "abort" = false WHERE ${LEASE} AND queued <= $4 RETURNING session_id`
const REQUEST_ABORT = `UPDATE session_run SET "abort" = true WHERE session_id = $1 AND holder <> '' AND time_expires > ${PG_NOW_MS} RETURNING ${PG_RUN_COLUMNS}`

type NowRow = PgRunRow & { readonly now: bigint | number }

const isLive = (row: PgRunRow, now: number) => row.holder !== "" && num(row.time_expires) > now

/** RunClaims over PostgreSQL: each operation one transaction; time is the database's (`clock_timestamp()`). */
export const makePgRunClaims = (db: PgDatabase): RunClaims["Service"] => {
  const { sql } = db
  const attempt = <A, E>(action: () => string, effect: Effect.Effect<A, E>) => attemptPg(db, action, effect)

  const claimRun = (request: ClaimRequest) =>
    Effect.gen(function* () {
      yield* sql.unsafe(PLACE_RUN, [request.sessionID])
      const [row] = yield* sql.unsafe<NowRow>(SELECT_RUN_FOR_UPDATE, [request.sessionID])
      if (row !== undefined && row.holder !== request.holder && isLive(row, num(row.now)) && !takesOver(request.takeOver, row.holder))
        return { _tag: "held", run: pgRunOf(row) } as const
      const { sessionID, holder, host, pid, ttlMs, takesMessages } = request
      // no row: the session was deleted since; the insert below then fails as a claim of a missing session
      const now = num(row?.now ?? (yield* sql.unsafe<{ now: bigint }>(`SELECT ${PG_NOW_MS} AS now`))[0]?.now ?? 0)
      const [stored] = yield* sql.unsafe<PgRunRow>(UPSERT_RUN, [
        sessionID,
        holder,
        host,
        pid,
        num(row?.epoch ?? 0) + 1,
        now,
        Math.round(ttlMs),
        takesMessages ? 0 : -1
      ])
      // questions of a holder that died can never be answered (as on SQLite)
      yield* sql.unsafe("DELETE FROM permission_pending WHERE session_id = $1", [sessionID])
      if (row !== undefined && row.holder !== "" && row.holder !== holder && isLive(row, now)) yield* sql.unsafe(FREE_TREE, [sessionID, row.holder])
      return { _tag: "claimed", run: pgRunOf(stored!) } as const
    })

  const releaseRun = (run: SessionRun, seen: number) =>
    Effect.gen(function* () {
      const released = yield* sql.unsafe(RELEASE_RUN, [run.sessionID, run.holder, run.epoch, seen])
      if (released.length > 0) return true
      const [row] = yield* sql.unsafe<PgRunRow>(`SELECT ${PG_RUN_COLUMNS} FROM session_run WHERE session_id = $1`, [run.sessionID])
      return row === undefined || !sameClaim(pgRunOf(row), run)
    })

  // The check and the writes in one transaction, the lease row locked: no other process claims or releases in between.
  const queueMessage = (message: UserMessage, parts: ReadonlyArray<Part>) =>
    Effect.gen(function* () {
      const [row] = yield* sql.unsafe<NowRow>(SELECT_RUN_FOR_UPDATE, [message.sessionID])
      if (row === undefined || num(row.queued) < 0 || !isLive(row, num(row.now))) return undefined
      yield* upsertMessage(sql, message)
      for (const part of parts) yield* upsertPart(sql, part)
      yield* sql.unsafe("UPDATE session_run SET queued = queued + 1 WHERE session_id = $1", [message.sessionID])
      return { ...pgRunOf(row), queued: num(row.queued) + 1 }
    })

  return RunClaims.of({
    claim: Effect.fn("RunClaims.claim")(function* (request: ClaimRequest) {
      return yield* attempt(() => `claim session ${request.sessionID} for a turn`, sql.withTransaction(claimRun(request)))
    }),
    // Every heartbeat for the whole turn: no span.
    renew: Effect.fnUntraced(function* (run: SessionRun, ttlMs: number) {
      const [row] = yield* attempt(
        () => `renew the lease of session ${run.sessionID}`,
        sql.unsafe<PgRunRow>(RENEW_RUN, [run.sessionID, run.holder, run.epoch, Math.round(ttlMs)])
      )
      return row === undefined ? undefined : pgRunOf(row)
    }),
    release: Effect.fn("RunClaims.release")(function* (run: SessionRun, seen: number) {
      return yield* attempt(() => `release session ${run.sessionID}`, sql.withTransaction(releaseRun(run, seen)))
    }),
    queue: Effect.fn("RunClaims.queue")(function* (message: UserMessage, parts: ReadonlyArray<Part>) {
      return yield* attempt(() => `queue message ${message.id}`, sql.withTransaction(queueMessage(message, parts)))
    }),
    requestAbort: Effect.fn("RunClaims.requestAbort")(function* (sessionID: string) {
      const [row] = yield* attempt(() => `request an abort of session ${sessionID}`, sql.unsafe<PgRunRow>(REQUEST_ABORT, [sessionID]))
      return row === undefined ? undefined : pgRunOf(row)
    }),
    // Polled by a running turn for abort requests: no span.
    get: Effect.fnUntraced(function* (sessionID: string) {
      const [row] = yield* attempt(() => `read the lease of session ${sessionID}`, sql.unsafe<PgRunRow>(PG_SELECT_LIVE_RUN, [sessionID]))
      return row === undefined ? undefined : pgRunOf(row)
    })
  })
}
