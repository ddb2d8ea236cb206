import { Cause, Deferred, Effect, Exit, Fiber, FiberMap } from "effect"
import type { SessionRun, TurnResult } from "@reins/domain"
import type { PromptError } from "./Errors.ts"
import type { SessionRuns } from "./SessionRuns.ts"
import { takesOver } from "@reins/storage"
import { SessionService, type PromptInput } from "./SessionService.ts"
import { placeOf, waitReleased } from "./SessionPlace.ts"

/** What `send` did: started a turn here (its fiber), or queued the message into the turn running here or in another process (T5). */
export type Sent =
  | { readonly _tag: "started"; readonly sessionID: string; readonly turn: Fiber.Fiber<TurnResult, PromptError> }
  | {
      readonly _tag: "queued"
      readonly sessionID: string
      readonly messageID: string
      readonly where: "here" | "elsewhere"
      /** The claim of the turn that reads it. */
      readonly run: SessionRun
    }

/**
 * The turn a session runs here, from the moment a send decides to start it (taken at once, before
 * anything is awaited, so that two sends arriving together start one turn) to its end. `claimed` is
 * done once the turn holds the session (a message can be queued into it from then) or has ended.
 */
interface Entry {
  fiber?: Fiber.Fiber<TurnResult, PromptError>
  aborted: boolean
  readonly claimed: Deferred.Deferred<void>
  readonly ended: Deferred.Deferred<void>
}

/**
 * The turns `Sessions` runs in this process: one fiber per session in a `FiberMap` of the layer's
 * scope (closing it stops them all, as Ctrl+C does). Built in a scope, over SessionService and SessionRuns.
 */
export const makeLocalTurns = Effect.gen(function* () {
  const service = yield* SessionService
  const context = yield* Effect.context<SessionRuns>()
  const fibers = yield* FiberMap.make<number, TurnResult, PromptError>()
  // a turn leaves before its fiber ends, so a send made on its end starts the next turn rather than joining it
  const current = new Map<string, Entry>()
  let next = 0

  /** The entry leaves `current` (when it is still the session's) and whoever waits on it goes on; done once. */
  const leave = (sessionID: string, entry: Entry) => {
    if (current.get(sessionID) === entry) current.delete(sessionID)
    Deferred.doneUnsafe(entry.claimed, Effect.void)
    Deferred.doneUnsafe(entry.ended, Effect.void)
  }

  const queue = (input: PromptInput, where: "here" | "elsewhere") =>
    Effect.map(
      service.queue({
        sessionID: input.sessionID,
        text: input.text,
        ...(input.files ? { files: input.files } : {}),
        ...(input.requestID !== undefined ? { requestID: input.requestID } : {})
      }),
      (queued): Sent | undefined =>
        queued === undefined ? undefined : { _tag: "queued", sessionID: input.sessionID, messageID: queued.messageID, where, run: queued.run }
    )

  /** The turn of a session taken by `entry`: forked, or the message queued into another process's turn; undefined: that turn ended, try again. */
  const begin = (input: PromptInput, entry: Entry) =>
    Effect.gen(function* () {
      // a live lease elsewhere is another process's turn, unless this send takes the session over from a runner that lost it
      const place = yield* Effect.provideContext(placeOf(input.sessionID), context)
      if (place._tag === "elsewhere" && !takesOver(input.takeOver, place.run.holder)) {
        const queued = yield* queue(input, "elsewhere").pipe(Effect.ensuring(Effect.sync(() => leave(input.sessionID, entry))))
        // that lease takes no messages (a compaction) or just ended: try again once it is released, not at once
        if (queued === undefined) yield* Effect.provideContext(waitReleased(input.sessionID), context)
        return queued
      }
      // the turn says it holds the session once its busy has reached every listener (a send waiting for that goes on then)
      const claimed = { ...input, onBusy: Deferred.done(entry.claimed, Exit.void).pipe(Effect.asVoid) }
      const fiber = yield* FiberMap.run(fibers, next++)(service.prompt(claimed).pipe(Effect.onExit(() => Effect.sync(() => leave(input.sessionID, entry)))))
      entry.fiber = fiber
      // a fiber interrupted before it ran its `onExit` leaves too
      fiber.addObserver(() => leave(input.sessionID, entry))
      // aborted before its fiber was known
      if (entry.aborted) yield* Fiber.interrupt(fiber).pipe(Effect.forkDetach)
      return { _tag: "started", sessionID: input.sessionID, turn: fiber } satisfies Sent
    }).pipe(
      // a caller gone in between does not leave the session taken
      Effect.uninterruptible,
      Effect.onError(() => Effect.sync(() => leave(input.sessionID, entry)))
    )

  const send = Effect.fn("Sessions.send")(function* (input: PromptInput) {
    yield* Effect.annotateCurrentSpan({ "session.id": input.sessionID })
    for (;;) {
      const running = current.get(input.sessionID)
      if (running !== undefined) {
        // a turn of this process: the model reads the message at its next step, once the turn holds the session
        yield* Deferred.await(running.claimed)
        const queued = yield* queue(input, "here")
        if (queued !== undefined) return queued
        // that turn ended in between: this message starts the next, once it has left
        yield* Deferred.await(running.ended)
        continue
      }
      // taken before anything is awaited: a send arriving meanwhile finds it and waits for its claim
      const entry: Entry = { aborted: false, claimed: Deferred.makeUnsafe(), ended: Deferred.makeUnsafe() }
      current.set(input.sessionID, entry)
      const sent = yield* begin(input, entry)
      if (sent !== undefined) return sent
    }
  })

  /** Interrupts the session's turn of this process and waits for its cleanup; false when none runs here. */
  const abort = (sessionID: string) =>
    Effect.suspend(() => {
      const entry = current.get(sessionID)
      if (entry === undefined) return Effect.succeed(false)
      entry.aborted = true
      return entry.fiber === undefined ? Effect.andThen(Deferred.await(entry.ended), Effect.succeed(true)) : Effect.as(Fiber.interrupt(entry.fiber), true)
    })

  return { send, abort, running: (sessionID: string) => current.has(sessionID), stopAll: FiberMap.clear(fibers) }
})

/** A turn's end as one line: why it failed, or undefined when it finished. */
export const endReason = (exit: Exit.Exit<TurnResult, PromptError>): { readonly tag: string; readonly message: string } | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "Some") return { tag: error.value._tag, message: error.value.message }
  if (Cause.hasInterruptsOnly(exit.cause))
    return { tag: "Interrupted", message: "The turn was aborted: its running tools were stopped and marked interrupted." }
  return { tag: "Defect", message: Cause.pretty(exit.cause).split("\n")[0] ?? "The turn failed" }
}
