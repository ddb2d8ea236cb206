import { Cause, Context, Effect, Exit, Predicate } from "effect"
import type { SessionRun } from "@reins/domain"
import { sameClaim, takenOver, type RunClaims, type StoreError } from "@reins/storage"
import * as os from "node:os"

/** How a running turn keeps its lease (T5, issue 27). */
export interface RunTiming {
  /** How often a running turn renews its lease. */
  readonly heartbeatMs: number
  /** How long a lease lasts unless renewed: past it, another process may take the session over. */
  readonly ttlMs: number
}

export const RunSettings = Context.Reference<RunTiming>("reins/session/RunSettings", {
  defaultValue: () => ({ heartbeatMs: 10_000, ttlMs: 45_000 })
})

/** How often a running turn looks at its lease row for an abort another process asked for (well under a second). */
export const abortCheckMs = (timing: RunTiming): number => Math.min(500, timing.heartbeatMs)

/**
 * For tests that stop a real process past its lease: `REINS_TEST_RUN_TIMING=<heartbeatMs>,<ttlMs>`
 * (both positive integers, heartbeat below the lease) replaces the defaults; anything else is ignored.
 */
export const runTimingFromEnv = (env: Readonly<Record<string, string | undefined>>): RunTiming | undefined => {
  const match = /^(\d+),(\d+)$/.exec(env.REINS_TEST_RUN_TIMING ?? "")
  if (!match) return undefined
  const heartbeatMs = Number(match[1])
  const ttlMs = Number(match[2])
  return heartbeatMs > 0 && heartbeatMs < ttlMs ? { heartbeatMs, ttlMs } : undefined
}

/** Who this process is in a lease: `holder` names it; host and pid are for messages. */
export interface RunOwner {
  readonly holder: string
  readonly pid: number
  readonly host: string
}

// Once per process start: a restarted process (even one given the same pid) is another holder.
const processOwner: RunOwner = {
  // Web Crypto (a global): node:crypto is not loaded at startup for this
  holder: `${os.hostname()}/${process.pid}/${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(4))).toString("hex")}`,
  pid: process.pid,
  host: os.hostname()
}

/** This process in a lease. */
export const thisProcess = (): RunOwner => processOwner

/**
 * Who this process is in its leases: itself (`thisProcess`), or, on a runner of a cluster (`reins serve --runner`),
 * itself named with its runner's address (`asRunner`), so that whoever reads a lease knows the runner running it.
 */
export const LeaseHolder = Context.Reference<RunOwner>("reins/session/LeaseHolder", { defaultValue: thisProcess })

/** This process in its leases as the cluster runner at `address` (HOST:PORT; storage's `runnerOfHolder` reads it back). */
export const asRunner = (address: string): RunOwner => ({ ...processOwner, holder: `runner:${address}/${processOwner.holder}` })

/** The leases their own turn released (TurnLoop's release at its last step): `heartbeat` stops for them, quietly. */
const releasedItself = new WeakSet<SessionRun>()

/** Says that `run`'s own turn releases it (or, `false`, did not after all: messages were queued): its heartbeat, which may still beat while the turn writes its end, stops. */
export const releasedByTurn = (run: SessionRun, released: boolean): void => {
  if (released) releasedItself.add(run)
  else releasedItself.delete(run)
}

/**
 * Renews a lease every `heartbeatMs` (and checks the abort flag every `abortCheckMs` between) until
 * interrupted; a failed write is logged, not fatal. Succeeds once an abort of the turn was requested
 * (by any process); fails with reason "taken-over" once another holds the session under a live lease (this process
 * was frozen past its lease and another took the session over, even one that let it go since): the turn racing it
 * stops there. A lease its own turn released (`releasedByTurn`) stops the beating and nothing else.
 */
export const heartbeat = (claims: RunClaims["Service"], run: SessionRun, timing: RunTiming): Effect.Effect<void, StoreError> => {
  // a failed renewal (disk full, database busy) is logged and tried again at the next beat
  const renew = claims.renew(run, timing.ttlMs).pipe(Effect.catch((error) => Effect.as(Effect.logWarning(error.message), run)))
  const aborted = claims.get(run.sessionID).pipe(
    Effect.map((lease) => lease !== undefined && sameClaim(lease, run) && lease.abort),
    Effect.orElseSucceed(() => false)
  )
  const checks = Math.max(1, Math.floor(timing.heartbeatMs / abortCheckMs(timing)))
  return Effect.gen(function* () {
    for (;;) {
      const lease = yield* renew
      if (lease === undefined) {
        // the turn let the session go itself (its last step done: TurnLoop's release, said before it) and is writing its
        // end: nothing was taken from it, the beating ends (failing here cut turns short at their very end, their result untold)
        if (releasedItself.has(run)) return yield* Effect.never
        return yield* takenOver(run, yield* claims.get(run.sessionID).pipe(Effect.orElseSucceed(() => undefined)))
      }
      if (lease.abort) return
      for (let i = 0; i < checks; i++) {
        yield* Effect.sleep(abortCheckMs(timing))
        if (yield* aborted) return
      }
    }
  })
}

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
export const busyMessage = (run: SessionRun, self: Pick<RunOwner, "host">): string =>
  run.host === self.host
    ? `Session ${run.sessionID} is running a turn in another reins process (pid ${run.pid}).`
    : `Session ${run.sessionID} is running a turn on ${run.host} (pid ${run.pid}).`
