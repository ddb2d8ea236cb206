import { Cause, Context, Deferred, Effect, Exit, Fiber, FiberMap, Layer } from "effect"
import { Bus, type TurnResult } from "@reins/domain"
import { SessionService, thisProcess, type PromptError, type PromptInput } from "@reins/session"
import { RunClaims } from "@reins/storage"
import { ServerEvents } from "./ServerEvents.ts"

/** How a prompt was taken: a new turn (its fiber), or queued into the running one (T5). */
export type Started = { readonly queued: false; readonly turn: Fiber.Fiber<TurnResult, PromptError> } | { readonly queued: true; readonly messageID: string }

/**
 * The turns the server runs: one fiber per session in a `FiberMap` scoped to the server, so that
 * stopping the server stops them all (parts marked interrupted, commands' process groups killed,
 * as Ctrl+C does). Each turn's end goes to the event hub as `turn.finished` or `turn.failed`.
 */
export class ServerTurns extends Context.Service<
  ServerTurns,
  {
    /** Starts a turn on the session, or queues the message into the one running. */
    start(input: PromptInput): Effect.Effect<Started, PromptError>
    /** Interrupts the session's running turn; false when none runs here. */
    abort(sessionID: string): Effect.Effect<boolean>
    /** Whether a turn of the session runs in this server. */
    running(sessionID: string): boolean
    /** Interrupts every running turn and waits for their cleanup (the server is stopping). */
    readonly stopAll: Effect.Effect<void>
  }
>()("reins/server/ServerTurns") {
  static readonly layer = Layer.effect(
    ServerTurns,
    Effect.gen(function* () {
      const sessions = yield* SessionService
      const claims = yield* RunClaims
      const hub = yield* ServerEvents
      const bus = yield* Bus
      const fibers = yield* FiberMap.make<number, TurnResult, PromptError>()

      /**
       * The turn a session runs here, from the moment a prompt decides to start it (taken at once, before
       * anything is awaited, so that two prompts arriving together start one turn) to its end. `claimed` is
       * done once the turn holds the session (a message can be queued into it from then) or has ended.
       */
      interface Entry {
        fiber?: Fiber.Fiber<TurnResult, PromptError>
        aborted: boolean
        readonly claimed: Deferred.Deferred<void>
        readonly ended: Deferred.Deferred<void>
      }
      // a turn leaves it before its end is published, so a prompt sent on `turn.finished` starts the next
      // turn rather than joining the one ending
      const current = new Map<string, Entry>()
      let next = 0

      // the loop says the session is busy once its turn has claimed it
      yield* bus.listen((event) =>
        event.type === "session.status" && event.status === "busy"
          ? Effect.suspend(() => {
              const entry = current.get(event.sessionID)
              return entry === undefined ? Effect.void : Deferred.done(entry.claimed, Exit.void)
            })
          : Effect.void
      )

      /** Whether another reins process holds a live lease on the session (one of this process is `current`'s business). */
      const heldElsewhere = (sessionID: string) => Effect.map(claims.get(sessionID), (run) => run !== undefined && run.holder !== thisProcess().holder)

      const failed = (sessionID: string, tag: string, message: string) => hub.publish({ type: "turn.failed", sessionID, error: { tag, message } })

      /** The entry leaves `current` (when it is still the session's) and whoever waits on it goes on; done once. */
      const leave = (sessionID: string, entry: Entry) => {
        if (current.get(sessionID) === entry) current.delete(sessionID)
        Deferred.doneUnsafe(entry.claimed, Effect.void)
        Deferred.doneUnsafe(entry.ended, Effect.void)
      }

      /** A turn's end on the event stream: `turn.finished`, or `turn.failed` with the error's tag. */
      const publishEnd = (sessionID: string, exit: Exit.Exit<TurnResult, PromptError>) => {
        if (Exit.isSuccess(exit)) return hub.publish({ type: "turn.finished", result: exit.value })
        const error = Cause.findErrorOption(exit.cause)
        if (error._tag === "Some") return failed(sessionID, error.value._tag, error.value.message)
        if (Cause.hasInterruptsOnly(exit.cause))
          return failed(sessionID, "Interrupted", "The turn was aborted: its running tools were stopped and marked interrupted.")
        return failed(sessionID, "Defect", Cause.pretty(exit.cause).split("\n")[0] ?? "The turn failed")
      }

      const turn = (input: PromptInput, entry: Entry) =>
        sessions.prompt(input).pipe(
          Effect.onExit((exit) =>
            Effect.andThen(
              Effect.sync(() => leave(input.sessionID, entry)),
              publishEnd(input.sessionID, exit)
            )
          )
        )

      const queue = (input: PromptInput) => sessions.queue({ sessionID: input.sessionID, text: input.text, ...(input.files ? { files: input.files } : {}) })

      const start = Effect.fn("ServerTurns.start")(function* (input: PromptInput) {
        for (;;) {
          const running = current.get(input.sessionID)
          if (running !== undefined) {
            // a turn of this server: the model reads the message at its next step, once the turn holds the session
            yield* Deferred.await(running.claimed)
            const queued = yield* queue(input)
            if (queued !== undefined) return { queued: true, messageID: queued.messageID } satisfies Started
            // that turn ended in between: this prompt starts the next, once it has left
            yield* Deferred.await(running.ended)
            continue
          }
          // taken before anything is awaited: a prompt arriving meanwhile finds it and waits for its claim
          const entry: Entry = { aborted: false, claimed: Deferred.makeUnsafe(), ended: Deferred.makeUnsafe() }
          current.set(input.sessionID, entry)
          const started = yield* begin(input, entry)
          if (started !== undefined) return started
        }
      })

      /** The turn of a session taken by `entry`: forked, or the message queued into another process's turn; undefined: that turn ended, try again. */
      const begin = (input: PromptInput, entry: Entry) =>
        Effect.gen(function* () {
          // a turn of another reins process on the same data dir (T5)
          if (yield* heldElsewhere(input.sessionID)) {
            const queued = yield* queue(input).pipe(Effect.ensuring(Effect.sync(() => leave(input.sessionID, entry))))
            return queued === undefined ? undefined : ({ queued: true, messageID: queued.messageID } satisfies Started)
          }
          const fiber = yield* FiberMap.run(fibers, next++)(turn(input, entry))
          entry.fiber = fiber
          // a fiber interrupted before it ran its `onExit` leaves too
          fiber.addObserver(() => leave(input.sessionID, entry))
          // aborted before its fiber was known
          if (entry.aborted) yield* Fiber.interrupt(fiber).pipe(Effect.forkDetach)
          return { queued: false, turn: fiber } satisfies Started
        }).pipe(
          // a client gone in between does not leave the session taken
          Effect.uninterruptible,
          Effect.onError(() => Effect.sync(() => leave(input.sessionID, entry)))
        )

      const abort = (sessionID: string) =>
        Effect.suspend(() => {
          const entry = current.get(sessionID)
          if (entry === undefined) return Effect.succeed(false)
          entry.aborted = true
          return entry.fiber === undefined ? Effect.succeed(true) : Effect.as(Fiber.interrupt(entry.fiber), true)
        })

      return ServerTurns.of({ start, abort, running: (sessionID) => current.has(sessionID), stopAll: FiberMap.clear(fibers) })
    })
  )
}
