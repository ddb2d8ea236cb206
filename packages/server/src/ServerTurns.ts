import { Cause, Clock, Context, Effect, Exit, Fiber, FiberMap, Layer } from "effect"
import type { TurnResult } from "@reins/domain"
import { RunSettings, SessionService, runIsLive, thisProcess, type PromptError, type PromptInput } from "@reins/session"
import { RunClaims } from "@reins/storage"
import { ServerEvents } from "./ServerEvents.ts"

/** How a prompt was taken: a new turn (its fiber), or queued into the running one (T5). */
export type Started =
  | { readonly queued: false; readonly turn: Fiber.Fiber<TurnResult, PromptError> }
  | { readonly queued: true; readonly messageID: string }

/**
 * The turns the server runs: one fiber per session in a `FiberMap` scoped to the server, so that
 * stopping the server stops them all (parts marked interrupted, commands' process groups killed,
 * as Ctrl+C does). Each turn's end goes to the event hub as `turn.finished` or `turn.failed`.
 */
export class ServerTurns extends Context.Service<ServerTurns, {
  /** Starts a turn on the session, or queues the message into the one running. */
  start(input: PromptInput): Effect.Effect<Started, PromptError>
  /** Interrupts the session's running turn; false when none runs here. */
  abort(sessionID: string): Effect.Effect<boolean>
  /** Whether a turn of the session runs in this server. */
  running(sessionID: string): boolean
  /** Interrupts every running turn and waits for their cleanup (the server is stopping). */
  readonly stopAll: Effect.Effect<void>
}>()("reins/server/ServerTurns") {
  static readonly layer = Layer.effect(
    ServerTurns,
    Effect.gen(function* () {
      const sessions = yield* SessionService
      const claims = yield* RunClaims
      const hub = yield* ServerEvents
      const fibers = yield* FiberMap.make<number, TurnResult, PromptError>()
      // the turn each session runs now; a turn leaves it before its end is published, so a prompt
      // sent on `turn.finished` starts the next turn rather than joining the one ending
      const current = new Map<string, { fiber?: Fiber.Fiber<TurnResult, PromptError> }>()
      let next = 0

      /** Whether another live reins process runs the session (a claim of this process is live only while `current` has it). */
      const heldElsewhere = (sessionID: string) =>
        Effect.gen(function* () {
          const run = yield* claims.get(sessionID)
          return run !== undefined && runIsLive(yield* Clock.currentTimeMillis, thisProcess(), { get: () => undefined }, yield* RunSettings)(run)
        })

      const failed = (sessionID: string, tag: string, message: string) => Effect.sync(() => void hub.publish({ type: "turn.failed", sessionID, error: { tag, message } }))

      const turn = (input: PromptInput, entry: object) =>
        sessions.prompt(input).pipe(
          Effect.onExit((exit) => {
            if (current.get(input.sessionID) === entry) current.delete(input.sessionID)
            if (Exit.isSuccess(exit)) return Effect.sync(() => void hub.publish({ type: "turn.finished", result: exit.value }))
            const error = Cause.findErrorOption(exit.cause)
            if (error._tag === "Some") return failed(input.sessionID, error.value._tag, error.value.message)
            if (Cause.hasInterruptsOnly(exit.cause)) return failed(input.sessionID, "Interrupted", "The turn was aborted: its running tools were stopped and marked interrupted.")
            return failed(input.sessionID, "Defect", Cause.pretty(exit.cause).split("\n")[0] ?? "The turn failed")
          })
        )

      const start = Effect.fn("ServerTurns.start")(function* (input: PromptInput) {
        // a turn of this server, or of another reins process on the same data dir (T5): the model reads it at its next step
        if (current.has(input.sessionID) || (yield* heldElsewhere(input.sessionID))) {
          const queued = yield* sessions.queue({ sessionID: input.sessionID, text: input.text, ...(input.files ? { files: input.files } : {}) })
          if (queued !== undefined) return { queued: true, messageID: queued.messageID } satisfies Started
          // that turn ended in between: this prompt starts the next
        }
        const entry: { fiber?: Fiber.Fiber<TurnResult, PromptError> } = {}
        current.set(input.sessionID, entry)
        const fiber = yield* FiberMap.run(fibers, next++)(turn(input, entry))
        entry.fiber = fiber
        return { queued: false, turn: fiber } satisfies Started
      })

      const abort = (sessionID: string) =>
        Effect.suspend(() => {
          const fiber = current.get(sessionID)?.fiber
          return fiber === undefined ? Effect.succeed(false) : Effect.as(Fiber.interrupt(fiber), true)
        })

      return ServerTurns.of({ start, abort, running: (sessionID) => current.has(sessionID), stopAll: FiberMap.clear(fibers) })
    })
  )
}
