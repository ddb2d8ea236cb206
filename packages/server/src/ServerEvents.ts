import { Context, Effect, Layer } from "effect"
import { Bus } from "@reins/domain"
import { HubLimits, makeEventHub, type EventHub } from "./EventHub.ts"

/** The server's event hub, fed by every event on the bus (and the turns' ends, by `ServerTurns`). */
export class ServerEvents extends Context.Service<ServerEvents, EventHub>()("reins/server/ServerEvents") {
  /** The hub over the runtime's bus: a listener that runs inline and never waits, so no client slows a turn. */
  static readonly layer = Layer.effect(
    ServerEvents,
    Effect.gen(function* () {
      const bus = yield* Bus
      const hub = makeEventHub(yield* HubLimits)
      yield* bus.listen((event) => Effect.sync(() => void hub.publish(event)))
      return ServerEvents.of(hub)
    })
  )
}
