// Effect tests on bun:test, in the shape of @effect/vitest: `it.effect` runs a body on virtual time
// (TestClock: a sleep or a timeout waits until the test moves the clock), `it.live` on the real one,
// and `it.layer(layer)` gives each test of a group the services of one layer.
import { test } from "bun:test"
import { Effect, type Layer, type Scope } from "effect"
import { TestClock } from "effect/testing"

/** A test body: an Effect that may use a Scope (closed when the test ends) and the given services. */
export type TestBody<E, R> = () => Effect.Effect<unknown, E, R | Scope.Scope>

/** Runs an Effect test on virtual time (TestClock), in a scope closed when it ends; the promise bun:test awaits. */
export const runTest = <E>(effect: Effect.Effect<unknown, E, Scope.Scope>): Promise<void> =>
  Effect.runPromise(effect.pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.asVoid))

/** Runs an Effect test on the real clock, for what really takes time: child processes, sockets, files. */
export const runLive = <E>(effect: Effect.Effect<unknown, E, Scope.Scope>): Promise<void> => Effect.runPromise(effect.pipe(Effect.scoped, Effect.asVoid))

const group = <R, LE>(layer: Layer.Layer<R, LE> | undefined) => {
  const provide = <E>(effect: Effect.Effect<unknown, E, R | Scope.Scope>): Effect.Effect<unknown, E | LE, Scope.Scope> =>
    layer === undefined ? (effect as Effect.Effect<unknown, E, Scope.Scope>) : Effect.provide(effect, layer)
  return {
    /** A test on virtual time: `TestClock.adjust` moves it; nothing waits for the wall clock. */
    effect: <E>(name: string, body: TestBody<E, R>, timeout?: number) => test(name, () => runTest(provide(body())), timeout),
    /** A test on the real clock: say in the test why it needs wall time. */
    live: <E>(name: string, body: TestBody<E, R>, timeout?: number) => test(name, () => runLive(provide(body())), timeout)
  }
}

/** `it.effect`, `it.live`, and `it.layer(layer).effect` / `.live` for tests that share the services of one layer (built anew for each test). */
export const it = {
  ...group<never, never>(undefined),
  layer: <R, LE>(layer: Layer.Layer<R, LE>) => group(layer)
}
