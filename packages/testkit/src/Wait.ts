// Waiting for something to happen — a process to start, a line to be printed, a file to appear —
// rather than for a time that is enough on one machine. The bound only turns a hang into a failure
// that says what never happened; on a loaded machine the wait simply takes longer.
import { Effect } from "effect"

/** How long a wait may last before the test fails: a hang guard, not an expectation of speed. */
export const HANG_MS = 30_000
/** How often a condition is looked at again. */
const EVERY_MS = 10

export interface WaitOptions {
  /** What is waited for, for the failure's message. */
  readonly what?: string
  /** The hang guard (ms); HANG_MS by default. */
  readonly timeout?: number
  /** How often to look (ms). */
  readonly every?: number
}

const failure = (options: WaitOptions | string | undefined) => {
  const o = typeof options === "string" ? { what: options } : (options ?? {})
  return { ...o, message: `gave up waiting${o.what ? ` for ${o.what}` : ""} after ${(o.timeout ?? HANG_MS) / 1000} s` }
}

/**
 * Resolves with the first value `probe` returns that is neither false, null nor undefined, looking
 * again every few milliseconds; rejects after the hang guard, naming what never happened.
 */
export const waitFor = async <A>(
  probe: () => A | false | null | undefined | Promise<A | false | null | undefined>,
  options?: WaitOptions | string
): Promise<A> => {
  const o = failure(options)
  const until = performance.now() + (o.timeout ?? HANG_MS)
  for (;;) {
    const value = await probe()
    if (value !== false && value !== null && value !== undefined) return value
    if (performance.now() > until) throw new Error(o.message)
    await Bun.sleep(o.every ?? EVERY_MS)
  }
}

/** `waitFor` as an Effect, for a probe that is an Effect (it runs again until it yields a value). */
export const eventually = <A, E, R>(probe: Effect.Effect<A | false | null | undefined, E, R>, options?: WaitOptions | string): Effect.Effect<A, E, R> => {
  const o = failure(options)
  return Effect.gen(function* () {
    const until = performance.now() + (o.timeout ?? HANG_MS)
    for (;;) {
      const value = yield* probe
      if (value !== false && value !== null && value !== undefined) return value
      if (performance.now() > until) return yield* Effect.die(new Error(o.message))
      // the wall clock, whatever clock the test runs on: the awaited thing happens outside the test's fibers
      yield* Effect.promise(() => Bun.sleep(o.every ?? EVERY_MS))
    }
  })
}
