import { Effect, Schedule } from "effect"
import type { SessionRun } from "@reins/domain"
import { RunClaims, type StoreError } from "@reins/storage"
import { RunSettings } from "./Runs.ts"
import { SessionRuns } from "./SessionRuns.ts"

/** Where a session's turn runs, judged now: in this process, in another live reins process (its claim), or nowhere. */
export type Place = { readonly _tag: "here" } | { readonly _tag: "elsewhere"; readonly run: SessionRun } | { readonly _tag: "idle" }

/** The one "is it running, and where?" check: this process's hold first, else a live claim of another process. */
export const placeOf = Effect.fnUntraced(function* (sessionID: string) {
  const runs = yield* SessionRuns
  if (runs.current(sessionID) !== undefined) return { _tag: "here" } as Place
  const run = yield* (yield* RunClaims).get(sessionID)
  if (run === undefined || !(yield* runs.isLive)(run)) return { _tag: "idle" } as Place
  return (run.pid === runs.self.pid && run.host === runs.self.host ? { _tag: "here" } : { _tag: "elsewhere", run }) as Place
})

/**
 * Asks the process holding `run` to stop its turn; false when it cannot be asked. Claims carry no
 * abort request yet: the lease's `RunClaims.requestAbort` replaces this.
 */
export const requestAbort = (_run: SessionRun): Effect.Effect<boolean, StoreError> => Effect.succeed(false)

/**
 * Waits until no other process holds the session (its turn stopped and released it, or its claim
 * went stale): true, or false when it still held it after a heartbeat past the stale limit.
 */
export const waitReleased = Effect.fnUntraced(function* (sessionID: string) {
  const timing = yield* RunSettings
  const released = placeOf(sessionID).pipe(Effect.map((place) => place._tag !== "elsewhere"))
  return yield* released.pipe(
    Effect.repeat({ until: (free) => free, schedule: Schedule.spaced(Math.max(25, Math.min(250, timing.heartbeatMs / 4))) }),
    Effect.timeoutOption(timing.staleMs + timing.heartbeatMs),
    Effect.map((free) => free._tag === "Some" && free.value)
  )
})
