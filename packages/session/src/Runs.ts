import { Cause, Clock, Context, Effect, Exit, Predicate } from "effect"
import type { RunIsLive, SessionRun } from "@reins/domain"
import { sameClaim, takenOver, type RunClaims } from "@reins/storage"
import * as os from "node:os"

/** How a running turn proves it is alive to other processes (T5). */
export interface RunTiming {
  /** How often a running turn refreshes its claim. */
  readonly heartbeatMs: number
  /** A claim not refreshed for this long is taken over (its process hung or its machine is gone). */
  readonly staleMs: number
}

export const RunSettings = Context.Reference<RunTiming>("reins/session/RunSettings", {
  defaultValue: () => ({ heartbeatMs: 10_000, staleMs: 45_000 })
})

/**
 * For tests that stop a real process past the staleness limit: `REINS_TEST_RUN_TIMING=<heartbeatMs>,<staleMs>`
 * (both positive integers, heartbeat below staleness) replaces the defaults; anything else is ignored.
 */
export const runTimingFromEnv = (env: Readonly<Record<string, string | undefined>>): RunTiming | undefined => {
  const match = /^(\d+),(\d+)$/.exec(env.REINS_TEST_RUN_TIMING ?? "")
  if (!match) return undefined
  const heartbeatMs = Number(match[1])
  const staleMs = Number(match[2])
  return heartbeatMs > 0 && heartbeatMs < staleMs ? { heartbeatMs, staleMs } : undefined
}

/** Who this process is in a claim. */
export interface RunOwner {
  readonly pid: number
  readonly host: string
}

export const thisProcess = (): RunOwner => ({ pid: process.pid, host: os.hostname() })

/** Whether a process of this machine exists (signal 0 checks without sending anything). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Whether a stored claim still holds its session, judged at `now` by `self`: a claim of this
 * process holds while it is the one `running` (this process's holds) has for the session; one of
 * another process on this machine while that process exists and beats; one from elsewhere while it beats.
 */
export const runIsLive =
  (now: number, self: RunOwner, running: { get(sessionID: string): { readonly run?: SessionRun } | undefined }, timing: RunTiming): RunIsLive =>
  (run) => {
    if (run.host === self.host) {
      if (run.pid === self.pid) {
        const mine = running.get(run.sessionID)?.run
        return mine !== undefined && sameClaim(mine, run)
      }
      if (!processAlive(run.pid)) return false
    }
    return now - run.time.heartbeat < timing.staleMs
  }

/** A claim for `sessionID` by this process, starting now; `takesMessages: false` (a compaction) refuses queued ones. */
export const newRun = (sessionID: string, self: RunOwner, now: number, takesMessages = true): SessionRun => ({
  sessionID,
  pid: self.pid,
  host: self.host,
  time: { started: now, heartbeat: now },
  queued: takesMessages ? 0 : -1
})

/**
 * Refreshes a claim every `heartbeatMs` until interrupted; a failed write is logged, not fatal. Fails
 * with reason "taken-over" once the claim no longer holds the session (this process was stopped or
 * hung past `staleMs` and another took the session over): the turn racing it stops there.
 */
export const heartbeat = (claims: RunClaims["Service"], run: SessionRun, timing: RunTiming) =>
  Effect.forever(
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => claims.heartbeat(run, now)),
      Effect.catch((error) => Effect.as(Effect.logWarning(error.message), true)),
      Effect.flatMap((held) =>
        held
          ? Effect.void
          : claims.get(run.sessionID).pipe(
              Effect.orElseSucceed(() => undefined),
              Effect.flatMap((holder) => Effect.fail(takenOver(run, holder)))
            )
      ),
      Effect.delay(timing.heartbeatMs)
    )
  )

/** Whether a turn ended because its session was taken over by another process (it must write nothing more). */
export const lostClaim = (exit: Exit.Exit<unknown, unknown>): boolean => {
  if (!Exit.isFailure(exit)) return false
  const error = Cause.findErrorOption(exit.cause)
  return (
    error._tag === "Some" &&
    Predicate.isTagged(error.value, "StoreError") &&
    Predicate.hasProperty(error.value, "reason") &&
    error.value.reason === "taken-over"
  )
}

/** The sentence a second caller gets about a session that is busy elsewhere. */
export const busyMessage = (run: SessionRun, self: RunOwner): string =>
  run.host === self.host
    ? `Session ${run.sessionID} is running a turn in another reins process (pid ${run.pid}).`
    : `Session ${run.sessionID} is running a turn on ${run.host} (pid ${run.pid}).`
