import { Context, Effect, Fiber, Layer, Scope } from "effect"
import { Sessions, endReason, type PromptError, type PromptInput, type Sent } from "@reins/session"
import { ServerEvents } from "./ServerEvents.ts"

/**
 * The server's side of `Sessions.send`: each turn it starts has its end told on the event log as
 * `turn.finished` or `turn.failed` (the turns themselves run in `Sessions`, stopped with it).
 */
export class ServerTurns extends Context.Service<
  ServerTurns,
  {
    /** Starts a turn on the session, or queues the message into the one running (here or in another process). */
    start(input: PromptInput): Effect.Effect<Sent, PromptError>
    /** Interrupts every running turn and waits for their cleanup (the server is stopping). */
    readonly stopAll: Effect.Effect<void>
  }
>()("reins/server/ServerTurns") {
  static readonly layer = Layer.effect(
    ServerTurns,
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const hub = yield* ServerEvents
      const scope = yield* Scope.Scope

      const start = Effect.fn("ServerTurns.start")(function* (input: PromptInput) {
        const sent = yield* sessions.send(input)
        // told once the turn's fiber has ended (it has left its session then), so a prompt sent on
        // `turn.finished` starts the next turn rather than joining this one
        if (sent._tag === "started")
          yield* Fiber.await(sent.turn).pipe(
            Effect.flatMap((exit) => {
              const failed = endReason(exit)
              if (failed === undefined && exit._tag === "Success") return hub.publish({ type: "turn.finished", result: exit.value })
              return failed === undefined ? Effect.void : hub.publish({ type: "turn.failed", sessionID: input.sessionID, error: failed })
            }),
            Effect.forkIn(scope)
          )
        return sent
      })

      return ServerTurns.of({ start, stopAll: sessions.stopAll })
    })
  )
}
