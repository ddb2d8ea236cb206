import type { Part, RunIsLive, SessionRun, UserMessage } from "@reins/domain"
import { Context, Effect } from "effect"
import { sameClaim } from "./Claim.ts"
import type { MemoryState, SqliteDatabase } from "./Database.ts"
import { runOf, SELECT_RUN, UPSERT_MESSAGE, UPSERT_PART, type RunRow } from "./Sql.ts"
import { refersToMissing, toStoreError, type StoreError } from "./StoreError.ts"

/**
 * The claims of running sessions (T5): which process runs a turn of a session, its heartbeat, and
 * the messages other processes queue for it. Each operation is one transaction (SQLite: BEGIN
 * IMMEDIATE) over the same connection as `SessionStore`, so a queued message is a stored message.
 */
export class RunClaims extends Context.Service<
  RunClaims,
  {
    /** Claims a session for a running turn: stores `run` unless a live run holds the session, which is then returned. */
    claim(run: SessionRun, isLive: RunIsLive): Effect.Effect<SessionRun | undefined, StoreError>
    /** The run holding a session, live or not. */
    get(sessionID: string): Effect.Effect<SessionRun | undefined, StoreError>
    /** Records that a claimed run is still alive; false (nothing written) when the claim no longer holds its session. */
    heartbeat(run: SessionRun, time: number): Effect.Effect<boolean, StoreError>
    /**
     * Ends a claimed run unless more messages were queued for it than the `seen` it has read; then
     * returns false and the run goes on to answer them. True when released (or no longer held).
     */
    release(run: SessionRun, seen: number): Effect.Effect<boolean, StoreError>
    /**
     * Stores a user message and its parts for the live run holding the session, atomically with that
     * check, and counts it as queued; returns the run, or undefined (nothing stored) if none is live.
     * The message is then read like any other through `SessionStore.messages`.
     */
    queue(message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive): Effect.Effect<SessionRun | undefined, StoreError>
  }
>()("reins/storage/RunClaims") {}

const UPSERT_RUN = `INSERT INTO session_run (session_id, pid, host, time_started, time_heartbeat, queued) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
  ON CONFLICT (session_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, time_started = excluded.time_started,
  time_heartbeat = excluded.time_heartbeat, queued = excluded.queued`
// A claim is one (pid, host, start): a later claim by the same process is another.
const CLAIM = "session_id = ?1 AND pid = ?2 AND host = ?3 AND time_started = ?4"
const HEARTBEAT_RUN = `UPDATE session_run SET time_heartbeat = ?5 WHERE ${CLAIM}`
const RELEASE_RUN = `DELETE FROM session_run WHERE ${CLAIM} AND queued <= ?5`
const COUNT_QUEUED = "UPDATE session_run SET queued = queued + 1 WHERE session_id = ?1"

const claimKey = (run: SessionRun) => [run.sessionID, run.pid, run.host, run.time.started] as const

/** RunClaims over the SQLite database: prepared statements on its one connection. */
export const makeSqliteRunClaims = ({ client, file }: SqliteDatabase): Effect.Effect<RunClaims["Service"], StoreError> =>
  Effect.try({
    try: () => {
      const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })
      const selectRun = client.prepare<RunRow, [string]>(SELECT_RUN)
      const upsertRun = client.prepare<void, [string, number, string, number, number, number]>(UPSERT_RUN)
      const beat = client.prepare<void, [string, number, string, number, number]>(HEARTBEAT_RUN)
      const deleteRun = client.prepare<void, [string, number, string, number, number]>(RELEASE_RUN)
      const countQueued = client.prepare<void, [string]>(COUNT_QUEUED)
      const upsertMessage = client.prepare<void, [string, string, number, string]>(UPSERT_MESSAGE)
      const upsertPart = client.prepare<void, [string, string, string, string]>(UPSERT_PART)

      const claimRun = client.transaction((run: SessionRun, isLive: RunIsLive): SessionRun | undefined => {
        const row = selectRun.get(run.sessionID)
        const held = row === null ? undefined : runOf(row)
        if (held !== undefined && !sameClaim(held, run) && isLive(held)) return held
        upsertRun.run(...claimKey(run), run.time.heartbeat, run.queued)
        return undefined
      })
      const releaseRun = client.transaction((run: SessionRun, seen: number): boolean => {
        if (deleteRun.run(...claimKey(run), seen).changes > 0) return true
        const row = selectRun.get(run.sessionID)
        return row === null || !sameClaim(runOf(row), run)
      })
      // The check and the writes in one IMMEDIATE transaction: no other process claims or releases in between.
      const queueMessage = client.transaction((message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive): SessionRun | undefined => {
        const row = selectRun.get(message.sessionID)
        if (row === null || row.queued < 0 || !isLive(runOf(row))) return undefined
        upsertMessage.run(message.id, message.sessionID, message.time.created, JSON.stringify(message))
        for (const part of parts) upsertPart.run(part.id, part.messageID, part.sessionID, JSON.stringify(part))
        countQueued.run(message.sessionID)
        return { ...runOf(row), queued: row.queued + 1 }
      })

      return RunClaims.of({
        claim: Effect.fn("RunClaims.claim")(function* (run: SessionRun, isLive: RunIsLive) {
          return yield* attempt(
            () => `claim session ${run.sessionID} for a turn`,
            () => claimRun.immediate(run, isLive)
          )
        }),
        get: Effect.fn("RunClaims.get")(function* (sessionID: string) {
          const row = yield* attempt(
            () => `read the run of session ${sessionID}`,
            () => selectRun.get(sessionID)
          )
          return row === null ? undefined : runOf(row)
        }),
        // Every few seconds for the whole turn: no span.
        heartbeat: Effect.fnUntraced(function* (run: SessionRun, time: number) {
          return yield* attempt(
            () => `mark session ${run.sessionID} as still running`,
            () => beat.run(...claimKey(run), time).changes > 0
          )
        }),
        release: Effect.fn("RunClaims.release")(function* (run: SessionRun, seen: number) {
          return yield* attempt(
            () => `release session ${run.sessionID}`,
            () => releaseRun.immediate(run, seen)
          )
        }),
        queue: Effect.fn("RunClaims.queue")(function* (message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive) {
          return yield* attempt(
            () => `queue message ${message.id}`,
            () => queueMessage.immediate(message, parts, isLive)
          )
        })
      })
    },
    catch: (error) => toStoreError(file, "prepare the run claim queries", error)
  })

/** RunClaims over the memory database: each operation reads and writes its Maps with nothing in between. */
export const makeMemoryRunClaims = (state: MemoryState): RunClaims["Service"] => {
  const { sessions, messages, parts: partsById, runs } = state
  return RunClaims.of({
    claim: Effect.fn("RunClaims.claim")(function* (run: SessionRun, isLive: RunIsLive) {
      if (!sessions.has(run.sessionID)) return yield* refersToMissing(`claim session ${run.sessionID}`, "session")
      const held = runs.get(run.sessionID)
      if (held !== undefined && !sameClaim(held, run) && isLive(held)) return held
      runs.set(run.sessionID, run)
      return undefined
    }),
    get: Effect.fn("RunClaims.get")(function* (sessionID: string) {
      return runs.get(sessionID)
    }),
    heartbeat: Effect.fnUntraced(function* (run: SessionRun, time: number) {
      const held = runs.get(run.sessionID)
      if (held === undefined || !sameClaim(held, run)) return false
      runs.set(run.sessionID, { ...held, time: { ...held.time, heartbeat: time } })
      return true
    }),
    release: Effect.fn("RunClaims.release")(function* (run: SessionRun, seen: number) {
      const held = runs.get(run.sessionID)
      if (held === undefined || !sameClaim(held, run)) return true
      if (held.queued > seen) return false
      runs.delete(run.sessionID)
      return true
    }),
    queue: Effect.fn("RunClaims.queue")(function* (message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive) {
      const held = runs.get(message.sessionID)
      if (held === undefined || held.queued < 0 || !isLive(held)) return undefined
      if (parts.some((part) => part.messageID !== message.id)) return yield* refersToMissing(`queue message ${message.id}`, "message")
      messages.set(message.id, message)
      for (const part of parts) partsById.set(part.id, part)
      const queued = { ...held, queued: held.queued + 1 }
      runs.set(message.sessionID, queued)
      return queued
    })
  })
}
