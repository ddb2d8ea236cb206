import type { Part, SessionRun, UserMessage } from "@reins/domain"
import { Clock, Context, Effect } from "effect"
import { freeTreeSql, sameClaim, takesOver } from "./Claim.ts"
import type { MemoryState, SqliteDatabase } from "./Database.ts"
import { isLiveRow, NOW_MS, RUN_COLUMNS, runOf, SELECT_LIVE_RUN, SELECT_RUN, SELECT_RUN_NOW, UPSERT_MESSAGE, UPSERT_PART, type RunRow } from "./Sql.ts"
import { refersToMissing, toStoreError, type StoreError } from "./StoreError.ts"

/** What a process asks for when it claims a session. */
export interface ClaimRequest {
  readonly sessionID: string
  /** Unique per process start (see `SessionRun.holder`). */
  readonly holder: string
  readonly host: string
  readonly pid: number
  /** False for a claim that takes no queued messages (a compaction). */
  readonly takesMessages: boolean
  /** How long the lease lasts unless renewed, in ms of database time. */
  readonly ttlMs: number
  /**
   * Take the session even from another cluster runner's live lease (a runner that owns the session by its shard
   * lock: the holder is a runner that lost it, dead or frozen; `takesOver`). Its epoch is passed, so the fence
   * refuses every write it still makes. Another process's live lease is still "held".
   */
  readonly takeOver?: boolean
}

/** What `claim` did: took the lease (a new epoch), or found another holder's live lease. */
export type ClaimResult = { readonly _tag: "claimed"; readonly run: SessionRun } | { readonly _tag: "held"; readonly run: SessionRun }

/**
 * The leases of running sessions (T5, issue 27): which process runs a turn of a session, under
 * which epoch, until when (database time), and the messages and abort requests other processes
 * leave for it. Each operation is one transaction (SQLite: BEGIN IMMEDIATE) over the same connection as
 * `SessionStore`, so a queued message is a stored message and the fence sees every claim.
 */
export class RunClaims extends Context.Service<
  RunClaims,
  {
    /**
     * Claims a session: "held" (nothing written) while another holder's lease has not expired;
     * otherwise the lease is this holder's under the next epoch, expiring `ttlMs` from now, with
     * nothing queued and no abort requested.
     */
    claim(request: ClaimRequest): Effect.Effect<ClaimResult, StoreError>
    /**
     * Extends a lease to `ttlMs` from now while it is still (holder, epoch); returns it as stored
     * (its `queued` and `abort` are what others left), or undefined when it was taken over.
     */
    renew(run: SessionRun, ttlMs: number): Effect.Effect<SessionRun | undefined, StoreError>
    /**
     * Ends a lease unless more messages were queued for it than the `seen` it has read; then
     * returns false and the run goes on to answer them. True when released (or no longer held).
     * The row stays (holder "") so the next claim's epoch is higher.
     */
    release(run: SessionRun, seen: number): Effect.Effect<boolean, StoreError>
    /**
     * Stores a user message and its parts for the live lease of the session, atomically with that
     * check, and counts it as queued; returns the lease, or undefined (nothing stored) if none is
     * live or it takes no messages. The message is then read like any other through `SessionStore.messages`.
     */
    queue(message: UserMessage, parts: ReadonlyArray<Part>): Effect.Effect<SessionRun | undefined, StoreError>
    /** Asks the holder of the live lease to abort its turn (it sees it within a second); undefined when none is live. */
    requestAbort(sessionID: string): Effect.Effect<SessionRun | undefined, StoreError>
    /** The live lease of a session (held and not expired), if any. */
    get(sessionID: string): Effect.Effect<SessionRun | undefined, StoreError>
  }
>()("reins/storage/RunClaims") {}

// ?1 session, ?2 holder, ?3 host, ?4 pid, ?5 epoch, ?6 ttl ms, ?7 queued: a new lease from the database's now.
const UPSERT_RUN = `INSERT INTO session_run (session_id, holder, host, pid, epoch, time_started, time_expires, queued, "abort")
  VALUES (?1, ?2, ?3, ?4, ?5, ${NOW_MS}, ${NOW_MS} + ?6, ?7, 0)
  ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, epoch = excluded.epoch,
  time_started = excluded.time_started, time_expires = excluded.time_expires, queued = excluded.queued, "abort" = 0
  RETURNING ${RUN_COLUMNS}`
const LEASE = "session_id = ?1 AND holder = ?2 AND epoch = ?3"
const RENEW_RUN = `UPDATE session_run SET time_expires = ${NOW_MS} + ?4 WHERE ${LEASE} RETURNING ${RUN_COLUMNS}`
const RELEASE_RUN = `UPDATE session_run SET holder = '', time_expires = 0, "abort" = 0 WHERE ${LEASE} AND queued <= ?4`
const COUNT_QUEUED = "UPDATE session_run SET queued = queued + 1 WHERE session_id = ?1"
// A session claimed has no live holder: a question still stored for it was asked by one that died (or was taken
// over) and can never be answered; the model asks again, under a new id, if it still needs to.
const DROP_QUESTIONS = "DELETE FROM permission_pending WHERE session_id = ?1"
const FREE_TREE = freeTreeSql((n) => `?${n}`, "0")
const REQUEST_ABORT = `UPDATE session_run SET "abort" = 1 WHERE session_id = ?1 AND holder <> '' AND time_expires > ${NOW_MS} RETURNING ${RUN_COLUMNS}`

type NowRow = RunRow & { readonly now: number }

/** RunClaims over the SQLite database: prepared statements on its one connection; time is SQLite's. */
export const makeSqliteRunClaims = ({ client, file }: SqliteDatabase): Effect.Effect<RunClaims["Service"], StoreError> =>
  Effect.try({
    try: () => {
      const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })
      const selectRun = client.prepare<RunRow, [string]>(SELECT_RUN)
      const selectRunNow = client.prepare<NowRow, [string]>(SELECT_RUN_NOW)
      const selectLive = client.prepare<RunRow, [string]>(SELECT_LIVE_RUN)
      const upsertRun = client.prepare<RunRow, [string, string, string, number, number, number, number]>(UPSERT_RUN)
      const renewRun = client.prepare<RunRow, [string, string, number, number]>(RENEW_RUN)
      const releaseRun = client.prepare<void, [string, string, number, number]>(RELEASE_RUN)
      const countQueued = client.prepare<void, [string]>(COUNT_QUEUED)
      const requestAbort = client.prepare<RunRow, [string]>(REQUEST_ABORT)
      const dropQuestions = client.prepare<void, [string]>(DROP_QUESTIONS)
      const freeTree = client.prepare<void, [string, string]>(FREE_TREE)
      const upsertMessage = client.prepare<void, [string, string, number, string]>(UPSERT_MESSAGE)
      const upsertPart = client.prepare<void, [string, string, string, string]>(UPSERT_PART)

      const claimRun = client.transaction((request: ClaimRequest): ClaimResult => {
        const row = selectRunNow.get(request.sessionID)
        if (row !== null && row.holder !== request.holder && isLiveRow(row, row.now) && !takesOver(request.takeOver, row.holder))
          return { _tag: "held", run: runOf(row) }
        const { sessionID, holder, host, pid, ttlMs, takesMessages } = request
        const stored = upsertRun.get(sessionID, holder, host, pid, (row?.epoch ?? 0) + 1, ttlMs, takesMessages ? 0 : -1)
        dropQuestions.run(sessionID)
        if (row !== null && row.holder !== "" && row.holder !== holder && isLiveRow(row, row.now)) freeTree.run(sessionID, row.holder)
        return { _tag: "claimed", run: runOf(stored!) }
      })
      const release = client.transaction((run: SessionRun, seen: number): boolean => {
        if (releaseRun.run(run.sessionID, run.holder, run.epoch, seen).changes > 0) return true
        const row = selectRun.get(run.sessionID)
        return row === null || !sameClaim(runOf(row), run)
      })
      // The check and the writes in one IMMEDIATE transaction: no other process claims or releases in between.
      const queueMessage = client.transaction((message: UserMessage, parts: ReadonlyArray<Part>): SessionRun | undefined => {
        const row = selectRunNow.get(message.sessionID)
        if (row === null || row.queued < 0 || !isLiveRow(row, row.now)) return undefined
        upsertMessage.run(message.id, message.sessionID, message.time.created, JSON.stringify(message))
        for (const part of parts) upsertPart.run(part.id, part.messageID, part.sessionID, JSON.stringify(part))
        countQueued.run(message.sessionID)
        return { ...runOf(row), queued: row.queued + 1 }
      })

      return RunClaims.of({
        claim: Effect.fn("RunClaims.claim")(function* (request: ClaimRequest) {
          return yield* attempt(
            () => `claim session ${request.sessionID} for a turn`,
            () => claimRun.immediate(request)
          )
        }),
        // Every heartbeat for the whole turn: no span.
        renew: Effect.fnUntraced(function* (run: SessionRun, ttlMs: number) {
          const row = yield* attempt(
            () => `renew the lease of session ${run.sessionID}`,
            () => renewRun.get(run.sessionID, run.holder, run.epoch, ttlMs)
          )
          return row === null ? undefined : runOf(row)
        }),
        release: Effect.fn("RunClaims.release")(function* (run: SessionRun, seen: number) {
          return yield* attempt(
            () => `release session ${run.sessionID}`,
            () => release.immediate(run, seen)
          )
        }),
        queue: Effect.fn("RunClaims.queue")(function* (message: UserMessage, parts: ReadonlyArray<Part>) {
          return yield* attempt(
            () => `queue message ${message.id}`,
            () => queueMessage.immediate(message, parts)
          )
        }),
        requestAbort: Effect.fn("RunClaims.requestAbort")(function* (sessionID: string) {
          const row = yield* attempt(
            () => `request an abort of session ${sessionID}`,
            () => requestAbort.get(sessionID)
          )
          return row === null ? undefined : runOf(row)
        }),
        // Polled by a running turn for abort requests: no span.
        get: Effect.fnUntraced(function* (sessionID: string) {
          const row = yield* attempt(
            () => `read the lease of session ${sessionID}`,
            () => selectLive.get(sessionID)
          )
          return row === null ? undefined : runOf(row)
        })
      })
    },
    catch: (error) => toStoreError(file, "prepare the run claim queries", error)
  })

const isLive = (run: SessionRun, now: number) => run.holder !== "" && run.time.expires > now

/** RunClaims over the memory database: each operation reads and writes its Maps with nothing in between; time is `Clock`'s. */
export const makeMemoryRunClaims = (state: MemoryState): RunClaims["Service"] => {
  const { sessions, messages, parts: partsById, runs } = state
  /** The live lease of a session at `now`. */
  const live = (sessionID: string, now: number) => {
    const held = runs.get(sessionID)
    return held !== undefined && isLive(held, now) ? held : undefined
  }
  return RunClaims.of({
    claim: Effect.fn("RunClaims.claim")(function* (request: ClaimRequest) {
      const now = yield* Clock.currentTimeMillis
      if (!sessions.has(request.sessionID)) return yield* refersToMissing(`claim session ${request.sessionID}`, "session")
      const held = live(request.sessionID, now)
      if (held !== undefined && held.holder !== request.holder && !takesOver(request.takeOver, held.holder)) return { _tag: "held", run: held } as const
      const run: SessionRun = {
        sessionID: request.sessionID,
        holder: request.holder,
        host: request.host,
        pid: request.pid,
        epoch: (runs.get(request.sessionID)?.epoch ?? 0) + 1,
        time: { started: now, expires: now + request.ttlMs },
        queued: request.takesMessages ? 0 : -1,
        abort: false
      }
      runs.set(request.sessionID, run)
      // the sub-agents' sessions the holder taken over still holds are freed with it (see freeTreeSql)
      if (held !== undefined && held.holder !== request.holder) {
        let level = [request.sessionID]
        while (level.length > 0) {
          const parents = new Set(level)
          level = [...sessions.values()].filter((s) => s.parentID !== undefined && parents.has(s.parentID)).map((s) => s.id)
          for (const id of level) {
            const lease = runs.get(id)
            if (lease !== undefined && lease.holder === held.holder)
              runs.set(id, { ...lease, holder: "", epoch: lease.epoch + 1, time: { ...lease.time, expires: 0 }, abort: false })
          }
        }
      }
      // questions of a holder that died can never be answered (see DROP_QUESTIONS)
      for (const question of state.questions.values()) if (question.sessionID === request.sessionID) state.questions.delete(question.id)
      return { _tag: "claimed", run } as const
    }),
    renew: Effect.fnUntraced(function* (run: SessionRun, ttlMs: number) {
      const now = yield* Clock.currentTimeMillis
      const held = runs.get(run.sessionID)
      if (held === undefined || !sameClaim(held, run)) return undefined
      const renewed = { ...held, time: { ...held.time, expires: now + ttlMs } }
      runs.set(run.sessionID, renewed)
      return renewed
    }),
    release: Effect.fn("RunClaims.release")(function* (run: SessionRun, seen: number) {
      const held = runs.get(run.sessionID)
      if (held === undefined || !sameClaim(held, run)) return true
      if (held.queued > seen) return false
      runs.set(run.sessionID, { ...held, holder: "", time: { ...held.time, expires: 0 }, abort: false })
      return true
    }),
    queue: Effect.fn("RunClaims.queue")(function* (message: UserMessage, parts: ReadonlyArray<Part>) {
      const held = live(message.sessionID, yield* Clock.currentTimeMillis)
      if (held === undefined || held.queued < 0) return undefined
      if (parts.some((part) => part.messageID !== message.id)) return yield* refersToMissing(`queue message ${message.id}`, "message")
      messages.set(message.id, message)
      for (const part of parts) partsById.set(part.id, part)
      const queued = { ...held, queued: held.queued + 1 }
      runs.set(message.sessionID, queued)
      return queued
    }),
    requestAbort: Effect.fn("RunClaims.requestAbort")(function* (sessionID: string) {
      const held = live(sessionID, yield* Clock.currentTimeMillis)
      if (held === undefined) return undefined
      const asked = { ...held, abort: true }
      runs.set(sessionID, asked)
      return asked
    }),
    get: Effect.fnUntraced(function* (sessionID: string) {
      return live(sessionID, yield* Clock.currentTimeMillis)
    })
  })
}
