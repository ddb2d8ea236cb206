import { Effect, Schedule } from "effect"
import type { SessionRun } from "@reins/domain"
import { RunSettings } from "./Runs.ts"
import { SessionRuns } from "./SessionRuns.ts"

/** Where a session's turn runs, judged now: in this process, in another reins process (its live lease), or nowhere. */
export type Place = { readonly _tag: "here" } | { readonly _tag: "elsewhere"; readonly run: SessionRun } | { readonly _tag: "idle" }

/** The one "is it running, and where?" check: this process's hold first, else another process's live lease. */
export const placeOf = Effect.fnUntraced(function* (sessionID: string) {
  const runs = yield* SessionRuns
  if (runs.current(sessionID) !== undefined) return { _tag: "here" } as Place
  const run = yield* runs.elsewhere(sessionID)
  return (run === undefined ? { _tag: "idle" } : { _tag: "elsewhere", run }) as Place
})

/**
 * Waits until no other process holds the session (its turn stopped and released it, or its lease
 * expired): true, or false when it still held it a heartbeat past a lease's length.
 */
export const waitReleased = Effect.fnUntraced(function* (sessionID: string) {
  const timing = yield* RunSettings
  const released = placeOf(sessionID).pipe(Effect.map((place) => place._tag !== "elsewhere"))
  return yield* released.pipe(
    Effect.repeat({ until: (free) => free, schedule: Schedule.spaced(Math.max(25, Math.min(250, timing.heartbeatMs / 4))) }),
    Effect.timeoutOption(timing.ttlMs + timing.heartbeatMs),
    Effect.map((free) => free._tag === "Some" && free.value)
  )
})
