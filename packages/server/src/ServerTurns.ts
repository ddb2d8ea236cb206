import { Context, Effect, Layer } from "effect"
import { Sessions, endReason, type PromptError, type PromptInput, type Sent } from "@reins/session"
import { ServerEvents } from "./ServerEvents.ts"

/**
 * The server's side of `Sessions.send`: each turn it starts has its end told on the event hub as
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

      const start = Effect.fn("ServerTurns.start")(function* (input: PromptInput) {
        const sent = yield* sessions.send(input)
        // the turn has left its session when its fiber ends, so a prompt sent on `turn.finished` starts the next one
        if (sent._tag === "started")
          sent.turn.addObserver((exit) => {
            const failed = endReason(exit)
            if (failed === undefined && exit._tag === "Success") hub.publish({ type: "turn.finished", result: exit.value })
            else if (failed !== undefined) hub.publish({ type: "turn.failed", sessionID: input.sessionID, error: failed })
          })
        return sent
      })

      return ServerTurns.of({ start, stopAll: sessions.stopAll })
    })
  )
}
