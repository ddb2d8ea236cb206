import { Clock, Context, Effect, Schedule } from "effect"
import { sameClaim, type RunIsLive, type SessionRun, type SessionStore } from "@reins/storage"
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

/** Refreshes a claim every `heartbeatMs` until interrupted; a failed write is logged, not fatal. */
export const heartbeat = (store: SessionStore["Service"], run: SessionRun, timing: RunTiming) =>
  Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) => store.heartbeatRun(run, now)),
    Effect.catch((error) => Effect.logWarning(error.message)),
    Effect.delay(timing.heartbeatMs),
    Effect.repeat(Schedule.forever)
  )

/** The sentence a second caller gets about a session that is busy elsewhere. */
export const busyMessage = (run: SessionRun, self: RunOwner): string =>
  run.host === self.host
    ? `Session ${run.sessionID} is running a turn in another reins process (pid ${run.pid}).`
    : `Session ${run.sessionID} is running a turn on ${run.host} (pid ${run.pid}).`
