import { Context, Deferred, Effect, Fiber, Layer, Option, Stream, type Cause } from "effect"
import { Bus, type Ids, type ModelRef, type SessionEvent, type SessionRun } from "@reins/domain"
import type { CompactionError, CompactResult } from "@reins/compaction"
import type { ProviderError } from "@reins/provider"
import { EventLog, PendingQuestions, SessionStore, type LoggedEvent, type PendingQuestion, type StoreError } from "@reins/storage"
import { Checkpoints, type RestoreConflict } from "@reins/workspace"
import { SessionBusyError, type PromptError } from "./Errors.ts"
import type { EventAppender } from "./EventAppender.ts"
import { makeLocalTurns, type Sent } from "./LocalTurns.ts"
import { type ForkFailure, type Forked, type ForkFiles, forkSession } from "./SessionFork.ts"
import { followLog } from "./SessionEvents.ts"
import { placeOf } from "./SessionPlace.ts"
import { removeSession, type Removed } from "./SessionRemove.ts"
import { busyMessage } from "./Runs.ts"
import { SessionRuns, type Aborted } from "./SessionRuns.ts"
import { SessionService, type PromptInput } from "./SessionService.ts"
import { redoSession, undoSession, type Undone, type UndoError, type UndoInput } from "./SessionUndo.ts"
import { TurnStreamSettings, makeTurnBuffer, ofSession } from "./TurnEvents.ts"
import { Agents } from "./agent/Agents.ts"

export type { Removed, Sent, Undone, UndoInput }

/** Said on a followed send once its message went into a running turn instead of starting one (that turn's events are its). */
export interface MessageQueued {
  readonly type: "message.queued"
  readonly sessionID: string
  readonly messageID: string
  readonly where: "here" | "elsewhere"
  readonly run: SessionRun
}

/** What a fork is asked: the session, the message it ends at (default: the last), and the files too. */
export interface ForkInput {
  readonly sessionID: string
  readonly at?: string | undefined
  readonly files?: ForkFiles | undefined
}

/** What a followed send streams: the session's events (its sub-agents' too), and `message.queued` when it was queued. */
export type FollowEvent = SessionEvent | MessageQueued

/** A session's state now: idle, or running here or in another process (its claim); its pending permission questions. */
export interface Status {
  readonly sessionID: string
  readonly running: false | "here" | "elsewhere"
  /** The claim of the process running it elsewhere. */
  readonly run?: SessionRun
  /** Its (and its sub-agents') permission questions waiting for a reply, asked by whichever process runs it. */
  readonly questions: ReadonlyArray<PendingQuestion>
}

/**
 * The session's use cases, one behaviour each for every front end (run, the TUI, serve, ACP),
 * wherever the session's turn runs: in this process, in another one, or nowhere.
 */
export class Sessions extends Context.Service<
  Sessions,
  {
    /** Starts a turn on the message here, or queues it into the turn running (here or in another process; T5). */
    send(input: PromptInput): Effect.Effect<Sent, PromptError>
    /**
     * `send`, followed: the session's events from before the message is stored; for a started turn up
     * to `turn.finished` (failing with the turn's error); for a queued message what came until it was
     * queued, then `message.queued` (the turn it joined streams to whoever follows that turn). Stopping the stream stops a turn it started (as Ctrl+C does), once its cleanup is done.
     */
    follow(input: PromptInput): Stream.Stream<FollowEvent, PromptError>
    /**
     * The session's events (its sub-agents' too) from the durable log: those after log position `after` (0, the
     * default: every stored one), then live ones appended by any process on the same database, each once, in order.
     */
    events(sessionID: string, after?: number): Stream.Stream<LoggedEvent, StoreError>
    /** Stops the session's running turn: here by interrupting it (its cleanup awaited), elsewhere by asking its holder. */
    abort(sessionID: string): Effect.Effect<Aborted, StoreError>
    status(sessionID: string): Effect.Effect<Status, StoreError>
    /** Deletes the session: a running turn is stopped first (wherever it runs), the session deleted once released. */
    remove(sessionID: string): Effect.Effect<Removed, StoreError | SessionBusyError>
    /** Compacts an idle session now (reason "manual"). */
    compact(input: {
      readonly sessionID: string
      readonly model: ModelRef
    }): Effect.Effect<CompactResult, ProviderError | StoreError | SessionBusyError | CompactionError>
    /**
     * Undoes the session back to before a user message (the last one not undone, by default): the files its steps
     * changed restored, its messages kept but no longer sent to the model; an idle session only.
     */
    undo(input: UndoInput): Effect.Effect<Undone, StoreError | SessionBusyError | UndoError | RestoreConflict>
    /** Takes back the session's undo (files and conversation as they were); an idle session only. */
    redo(input: { readonly sessionID: string; readonly force: boolean }): Effect.Effect<Undone, StoreError | SessionBusyError | UndoError | RestoreConflict>
    /**
     * A new session with a copy of the conversation up to and including message `at` (all of it without one); with
     * `files`, the files as they were at that point too (in place, or in a copy of the project: see forkSession).
     */
    fork(input: ForkInput): Effect.Effect<Forked, ForkFailure | SessionBusyError>
    /** Stops every turn of this process and waits for their cleanup (a server stopping). */
    readonly stopAll: Effect.Effect<void>
  }
>()("reins/session/Sessions") {
  /** Over SessionService, SessionRuns, SessionStore, Ids, Bus, Agents and Permission. */
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function* () {
      const service = yield* SessionService
      const runs = yield* SessionRuns
      const store = yield* SessionStore
      const bus = yield* Bus
      const agents = yield* Agents
      const log = yield* EventLog
      const pending = yield* PendingQuestions
      const settings = yield* TurnStreamSettings
      const local = yield* makeLocalTurns
      // the use cases' helpers read these services; resolved once, here
      const context = yield* Effect.context<SessionRuns | SessionStore | Ids | EventAppender>()
      const provide = <A, E>(effect: Effect.Effect<A, E, SessionRuns | SessionStore | Ids | EventAppender>) => Effect.provideContext(effect, context)
      const provideBus = <A, E>(effect: Effect.Effect<A, E, SessionStore | Bus>) =>
        Effect.provideService(Effect.provideService(effect, SessionStore, store), Bus, bus)

      const follow = (input: PromptInput): Stream.Stream<FollowEvent, PromptError> =>
        Stream.unwrap(
          Effect.gen(function* () {
            const buffer = makeTurnBuffer(settings.buffer)
            const mine = ofSession(input.sessionID, new Set(), agents.within(input.sessionID))
            yield* bus.listen((event) => (mine(event) ? buffer.offer(event) : Effect.void))
            let queued: MessageQueued | undefined
            const producer = Effect.uninterruptibleMask((restore) =>
              Effect.gen(function* () {
                const sent = yield* local.send(input)
                if (sent._tag === "queued") {
                  queued = { type: "message.queued", ...sent }
                  return
                }
                // a follower that stops stops the turn it started
                const exit = yield* restore(Fiber.await(sent.turn)).pipe(Effect.onInterrupt(() => Fiber.interrupt(sent.turn)))
                const result = yield* exit
                yield* restore(buffer.offer({ type: "turn.finished", result }))
              })
            ).pipe(Effect.exit, Effect.flatMap(buffer.finish))
            const fiber = yield* Effect.forkScoped(producer)
            // runs before the fiber's own finalizer: nothing the interrupted turn publishes waits for room
            yield* Effect.addFinalizer(() => Effect.andThen(buffer.close, Fiber.interrupt(fiber)))
            const events = Stream.fromPull(
              Effect.succeed(buffer.take as Effect.Effect<readonly [SessionEvent, ...Array<SessionEvent>], PromptError | Cause.Done>)
            )
            return Stream.concat(
              events as Stream.Stream<FollowEvent, PromptError>,
              Stream.suspend(() => (queued === undefined ? Stream.empty : Stream.make(queued)))
            )
          })
        )

      // the one place that reads a session's events for a caller: the durable log (the bus is this process's tap)
      const events = (sessionID: string, after?: number) => followLog(log, store, sessionID, after)

      // a turn of ours is interrupted and its cleanup awaited; any other hold here (a compaction, a sub-agent's
      // turn) is interrupted, and a turn of another process is asked to stop by its lease
      const abort = Effect.fn("Sessions.abort")(function* (sessionID: string) {
        yield* store.getSession(sessionID)
        if (yield* local.abort(sessionID)) return "here" as Aborted
        return yield* runs.abort(sessionID)
      })

      const status = Effect.fn("Sessions.status")(function* (sessionID: string) {
        const session = yield* store.getSession(sessionID)
        // a top-level session's tree is its root's; a sub-agent's questions are its own
        const questions = yield* pending.list(session.parentID === undefined ? { rootSessionID: sessionID } : { sessionID })
        if (local.running(sessionID)) return { sessionID, running: "here", questions } satisfies Status
        const place = yield* provide(placeOf(sessionID))
        if (place._tag === "elsewhere") return { sessionID, running: "elsewhere", run: place.run, questions } satisfies Status
        return { sessionID, running: place._tag === "here" ? "here" : false, questions } satisfies Status
      })

      // a turn of ours is interrupted (its cleanup awaited); any other hold here (a compaction, a sub-agent's turn)
      // is interrupted too, and waited for until it has released the session
      const stopHere = (sessionID: string) =>
        Effect.gen(function* () {
          if (yield* local.abort(sessionID)) return
          const held = runs.current(sessionID)
          if (held === undefined) return
          yield* runs.abort(sessionID).pipe(Effect.ignore)
          yield* Deferred.await(held.released)
        })
      const remove = Effect.fn("Sessions.remove")(function* (sessionID: string) {
        return yield* provide(removeSession(stopHere)(sessionID))
      })

      // undo and redo change the files under a turn's feet: only while none runs (here or elsewhere)
      const checkpoints = Option.getOrUndefined(yield* Effect.serviceOption(Checkpoints))
      // undo, redo and a fork with files hold the session while they change its files and messages: a turn that starts
      // meanwhile (here, or in another process) waits or is refused, never runs under them
      const holding = <A, E, R>(sessionID: string, what: string, body: Effect.Effect<A, E, R>) =>
        Effect.flatMap(
          runs.hold(sessionID, undefined, () => body),
          (held) =>
            held._tag === "ran"
              ? Effect.succeed(held.value)
              : Effect.fail(
                  new SessionBusyError({
                    sessionID,
                    message: `${held._tag === "held" ? busyMessage(held.held, runs.self) : `Session ${sessionID} is running a turn in this process.`} Wait for it to end (or stop it), then ${what}.`
                  })
                )
        )
      const undo = Effect.fn("Sessions.undo")(function* (input: UndoInput) {
        return yield* holding(input.sessionID, "undo", provideBus(undoSession(input, checkpoints)))
      })
      const redo = Effect.fn("Sessions.redo")(function* (input: { readonly sessionID: string; readonly force: boolean }) {
        return yield* holding(input.sessionID, "redo", provideBus(redoSession(input, checkpoints)))
      })

      const fork = Effect.fn("Sessions.fork")(function* (input: ForkInput) {
        const source = yield* store.getSession(input.sessionID)
        const forking = provide(
          Effect.provideService(
            forkSession(input, checkpoints, (directory) => service.create({ directory, title: `${source.title} (fork)` })),
            Bus,
            bus
          )
        )
        // files brought back in place change them under a turn's feet, and a copy would take a step's half-done
        // changes for the fork's point: only while no turn runs
        return yield* input.files === undefined ? forking : holding(input.sessionID, "fork with files", forking)
      })

      return Sessions.of({ send: local.send, follow, events, abort, status, remove, compact: service.compact, fork, undo, redo, stopAll: local.stopAll })
    })
  )
}
