import { Context, Effect, Layer, PubSub, Stream, type Scope } from "effect"
import type { Event } from "./Event.ts"

/**
 * The in-process event bus. `listen` handlers run inline, in publish order, before `publish`
 * returns (views that must not lag, like the CLI printer); `subscribe` is a Stream for the rest.
 */
export class Bus extends Context.Service<
  Bus,
  {
    publish(event: Event): Effect.Effect<void>
    listen(handler: (event: Event) => Effect.Effect<void>): Effect.Effect<void, never, Scope.Scope>
    readonly subscribe: Stream.Stream<Event>
  }
>()("reins/domain/Bus") {
  static readonly layer = Layer.effect(
    Bus,
    Effect.gen(function* () {
      const pubsub = yield* PubSub.unbounded<Event>()
      const handlers = new Set<(event: Event) => Effect.Effect<void>>()
      yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
      return Bus.of({
        publish: (event) =>
          Effect.gen(function* () {
            for (const handler of handlers) yield* handler(event)
            yield* PubSub.publish(pubsub, event)
          }),
        listen: (handler) =>
          Effect.acquireRelease(
            Effect.sync(() => handlers.add(handler)),
            () => Effect.sync(() => handlers.delete(handler))
          ).pipe(Effect.asVoid),
        subscribe: Stream.fromPubSub(pubsub)
      })
    })
  )
}
