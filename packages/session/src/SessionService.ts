import { Cause, Clock, Context, Deferred, Effect, type Exit, Layer, Option, Stream } from "effect"
import { Bus, Ids, isOpenTool, type Attachment, type ModelRef, type Part, type Session, type SessionEvent, type TurnResult } from "@reins/domain"
import { Compaction, CompactionError, estimateMessages, modelView, readWindow, type CompactResult } from "@reins/compaction"
import { Provider, ProviderError } from "@reins/provider"
import { RunClaims, SessionStore, WritingClaim, sameClaim, type MessageWithParts, type SessionRun, type StoreError } from "@reins/storage"
import { ProcessGroup } from "@reins/tool"
import { imagesRefused } from "./Attachments.ts"
import { SessionBusyError, sessionError, type PromptError } from "./Errors.ts"
import { SessionProcessor, interruptedState } from "./Processor.ts"
import { busyMessage, lostClaim } from "./Runs.ts"
import { SessionRuns } from "./SessionRuns.ts"
import { Turn, subAgentsFor } from "./Turn.ts"
import { TurnStreamSettings, turnStream } from "./TurnEvents.ts"
import { fileParts, makeStartTurn, requestMessage } from "./TurnStart.ts"
import { Agents } from "./agent/Agents.ts"

export { SessionBusyError, type PromptError }

export interface PromptInput {
  readonly sessionID: string
  readonly text: string
  readonly model: ModelRef
  /** Files attached to the message (`collectAttachments`): stored as file parts after its text. */
  readonly files?: ReadonlyArray<Attachment>
  /** The agent the session runs (`reins run --agent`): default the one it ran last in this process, else `build`. */
  readonly agent?: string
  /**
   * The prompt's id when the caller gave it one (a cluster node that took the request): the stored user message
   * keeps it (`metadata.request`; the message gets an id of its own). A prompt whose id is in the session already
   * is not stored again: its turn is resumed where it stopped (a prompt delivered again after its runner died or
   * its session moved), or its answer given when it was answered.
   */
  readonly requestID?: string
  /** Claim the session even from another's live lease (a cluster runner owning it by its shard lock); else that is a turn to queue into. */
  readonly takeOver?: boolean
  /** Run once the turn holds the session and its `busy` reached every listener (a message queued after is seen after `busy`): `Sessions`. */
  readonly onBusy?: Effect.Effect<void>
}

/** A message stored for a turn already running (T5): the model reads it at that turn's next step. */
export interface QueuedMessage {
  readonly sessionID: string
  readonly messageID: string
  /** The run that will read it. */
  readonly run: SessionRun
}

/** How many times, at most, a prompt waits for a hold of this process on the session to end before it says the session is busy. */
const JOIN_ATTEMPTS = 50
/** The result of a turn: its last assistant message and that message's text (defined in domain, with the turn's events). */
export type { TurnResult }

/** Creates sessions and runs turns of the agent loop on them. */
export class SessionService extends Context.Service<
  SessionService,
  {
    create(input: { readonly directory: string; readonly title?: string; readonly parentID?: string }): Effect.Effect<Session, StoreError>
    /**
     * Runs a turn on the message. If this process is already running a turn of the session, the
     * message joins it (queued, T5) and the result is that turn's. If another process is, fails with
     * SessionBusyError: `queue` is for that.
     */
    prompt(input: PromptInput): Effect.Effect<TurnResult, PromptError>
    /**
     * The turn `prompt` runs, as its events: the session's messages, parts (with `part.delta`s),
     * tool states, permission questions and replies, compactions, statuses and errors, in order,
     * then `turn.finished` with the result. Stopping the stream (an interrupt, `Stream.take`)
     * interrupts the turn as Ctrl+C does; the stream ends once the turn's cleanup is done. Between
     * the turn and the consumer is a bounded buffer (`TurnStreamSettings`; see `makeTurnBuffer`
     * for what happens when it is full). The events still go to the bus.
     */
    stream(input: PromptInput): Stream.Stream<SessionEvent, PromptError>
    /**
     * Stores the message for the turn running on the session, in this process or another, which reads
     * it at its next step wrapped in a system reminder. Undefined (nothing stored) when no turn runs.
     */
    queue(input: {
      readonly sessionID: string
      readonly text: string
      readonly files?: ReadonlyArray<Attachment>
      /** As `PromptInput.requestID`: a prompt already in the session is not stored again (it is the live turn's, if any). */
      readonly requestID?: string
    }): Effect.Effect<QueuedMessage | undefined, StoreError>
    /** Closes tool parts left open by a process that died; returns how many were fixed. */
    repair(sessionID: string): Effect.Effect<number, StoreError>
    /** Compacts an idle session on demand (`reins compact`): reason "manual", no continuation message. */
    compact(input: {
      readonly sessionID: string
      readonly model: ModelRef
    }): Effect.Effect<CompactResult, ProviderError | StoreError | SessionBusyError | CompactionError>
  }
>()("reins/session/SessionService") {
  /** The service over a `SessionRuns` and a `Turn` provided by the caller. */
  static readonly layerWithRuns = Layer.effect(
    SessionService,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const claims = yield* RunClaims
      const bus = yield* Bus
      const ids = yield* Ids
      const turns = yield* Turn
      const compaction = yield* Compaction
      const streamSettings = yield* TurnStreamSettings
      const runs = yield* SessionRuns
      const provider = yield* Provider
      const agents = yield* Agents

      const create = Effect.fn("SessionService.create")(function* (input: { readonly directory: string; readonly title?: string; readonly parentID?: string }) {
        const now = yield* Clock.currentTimeMillis
        const session: Session = {
          id: yield* ids.next("ses"),
          title: input.title ?? "New session",
          directory: input.directory,
          ...(input.parentID !== undefined ? { parentID: input.parentID } : {}),
          time: { created: now, updated: now }
        }
        yield* store.createSession(session)
        yield* bus.publish({ type: "session.created", session })
        return session
      })

      // Open tool parts are only ever in the last turn, which is never behind a summary.
      // Called holding the session: the process that left a part open is dead or lost its claim, so
      // a command it recorded as running (bash's process group) is stopped if it is still the same one.
      const repairWindow = Effect.fnUntraced(function* (messages: ReadonlyArray<MessageWithParts>) {
        const now = yield* Clock.currentTimeMillis
        const fixed: Array<Part> = []
        for (const m of messages) {
          for (const part of m.parts) {
            if (!isOpenTool(part)) continue
            const group = part.state.status === "running" ? ProcessGroup.recordOf(part.state.metadata) : undefined
            const reaped = group ? yield* ProcessGroup.reap(group) : undefined
            // What it reported while running (the last lines, the spill file) is kept, as for Ctrl+C.
            const state = interruptedState(part.state, now)
            const note = reaped === "killed" ? "\nIts command was still running after reins stopped, and has now been killed." : ""
            fixed.push({ ...part, state: state.status === "error" ? { ...state, error: `${state.error}${note}` } : state })
          }
        }
        if (fixed.length > 0) yield* store.putParts(fixed)
        // told as any other change of a part, under the turn's claim (its writes fenced): a client following the session
        // sees the command closed, not running on (a repair outside a claim only stores)
        if ((yield* WritingClaim) !== undefined) for (const part of fixed) yield* bus.publish({ type: "part.updated", part })
        return fixed.length
      })

      const repair = Effect.fn("SessionService.repair")(function* (sessionID: string) {
        // A live turn's open parts are its own, not left over.
        if ((yield* claims.get(sessionID)) !== undefined) return 0
        return yield* repairWindow(yield* readWindow(store, sessionID))
      })

      const queue = Effect.fn("SessionService.queue")(function* (input: {
        readonly sessionID: string
        readonly text: string
        readonly files?: ReadonlyArray<Attachment>
        readonly requestID?: string
      }) {
        // sent again (its runner died before it replied): it is in the session already, for the turn running, if one is
        const known = input.requestID === undefined ? undefined : requestMessage(yield* readWindow(store, input.sessionID), input.requestID)
        if (known !== undefined) {
          const run = yield* claims.get(input.sessionID)
          // a lease that takes no messages (a compaction) is not a turn to have joined
          return run === undefined || run.queued < 0 ? undefined : ({ sessionID: input.sessionID, messageID: known.info.id, run } satisfies QueuedMessage)
        }
        const { message, part } = yield* turns.userMessage(input.sessionID, input.text, {
          queued: true,
          ...(input.requestID !== undefined ? { request: input.requestID } : {})
        })
        const parts = [part, ...(yield* fileParts(ids, input.sessionID, message.id, input.files))]
        const run = yield* claims.queue(message, parts)
        if (run === undefined) return undefined
        yield* turns.announce(message, parts)
        return { sessionID: input.sessionID, messageID: message.id, run } satisfies QueuedMessage
      })

      const startTurn = makeStartTurn({ store, bus, ids, turns, agents })

      const runTurn = Effect.fn("SessionService.prompt")(function* (input: PromptInput) {
        yield* Effect.annotateCurrentSpan({ "session.id": input.sessionID })
        yield* store.getSession(input.sessionID)
        // A reserve that leaves nothing for the conversation is a config error, before anything is stored.
        yield* compaction.check(input.model)
        // An image for a model that takes none is refused before anything is stored or sent.
        const refused = imagesRefused(input.model, provider.info(input.model).images, input.files ?? [])
        if (refused !== undefined) return yield* new ProviderError({ reason: "invalid", message: refused })
        for (let attempt = 0; ; attempt++) {
          // This process runs the session already: the message joins that turn.
          const joined = runs.current(input.sessionID)
          if (joined?.result) {
            const queued = yield* queue(input)
            if (queued && joined.run && sameClaim(queued.run, joined.run)) {
              return yield* Deferred.await(joined.result)
            }
            if (queued) {
              // That turn ended and another process's took the message: it answers there.
              return yield* new SessionBusyError({
                sessionID: input.sessionID,
                message: `${busyMessage(queued.run, runs.self)} Your message was queued for that turn.`
              })
            }
          }
          // What is there before the claim: anything that appears after it was queued for this turn.
          const before = yield* readWindow(store, input.sessionID)
          const held = yield* turn(input, yield* Deferred.make<TurnResult, PromptError>(), before)
          if (held._tag === "ran") return held.value
          // A turn here is ending or starting, or a compaction runs: once it has let the session go, try again.
          if (held._tag === "here" && attempt < JOIN_ATTEMPTS) {
            yield* Deferred.await(held.holder.released)
            continue
          }
          const busy = held._tag === "held" ? busyMessage(held.held, runs.self) : `Session ${input.sessionID} is busy in this process.`
          return yield* new SessionBusyError({
            sessionID: input.sessionID,
            message: `${busy} Your message can be queued for that turn (reins run --session ${input.sessionID} does so), or wait for it to finish.`
          })
        }
      })

      // the sub-agents' sessions started by the turn's `task` calls stream as part of it
      const stream = (input: PromptInput) => turnStream(bus, input.sessionID, streamSettings.buffer, runTurn(input), undefined, agents.within(input.sessionID))

      // The turn's stream run to its end: the result `turn.finished` carries.
      const prompt = (input: PromptInput) =>
        stream(input).pipe(
          Stream.filter((event) => event.type === "turn.finished"),
          Stream.runLast,
          Effect.flatMap((last) => (Option.isSome(last) ? Effect.succeed(last.value.result) : Effect.die("A turn's stream ended without its result")))
        )

      /** A turn holding the session, if it is free; its end (time, idle) written in the hold under its claim: fenced, refused once another claimed. */
      const turn = (input: PromptInput, result: Deferred.Deferred<TurnResult, PromptError>, before: ReadonlyArray<MessageWithParts>) => {
        const known = new Set(before.flatMap((m) => (m.info.role === "user" ? [m.info.id] : [])))
        // A turn whose session was taken over writes nothing more (a refused update skips the idle too). Its
        // error is said before its idle, under its claim; one from claiming it, after (`announced`); a taken-over one, never.
        let announced = false
        const finish = <A>(exit: Exit.Exit<A, PromptError>) =>
          lostClaim(exit)
            ? Effect.void
            : Effect.gen(function* () {
                const error = exit._tag === "Failure" ? Cause.findErrorOption(exit.cause) : Option.none()
                if (Option.isSome(error)) yield* bus.publish(sessionError(input.sessionID, error.value))
                announced = Option.isSome(error)
                const now = yield* Clock.currentTimeMillis
                const current = yield* store.getSession(input.sessionID)
                yield* store.updateSession({ ...current, time: { ...current.time, updated: now } })
                yield* bus.publish({ type: "session.status", sessionID: input.sessionID, status: "idle" })
              }).pipe(Effect.ignore)
        return runs
          .hold(
            input.sessionID,
            result,
            (run) =>
              // a prompt that may resume a turn reads the window again under its claim: a holder it took the session
              // from may have written since (the repair and the "answered?" test need what is stored now)
              Effect.flatMap(input.requestID === undefined ? Effect.succeed(before) : readWindow(store, input.sessionID), (window) =>
                Effect.andThen(repairWindow(window), startTurn(input, run, known, window).pipe(withSubAgents))
              ).pipe(Effect.onExit(finish)),
            { takeOver: input.takeOver === true }
          )
          .pipe(
            Effect.withSpan("session.turn", { attributes: { "session.id": input.sessionID } }),
            Effect.tapError((error) =>
              announced || (error._tag === "StoreError" && error.reason === "taken-over") ? Effect.void : bus.publish(sessionError(input.sessionID, error))
            )
          )
      }

      const compact = Effect.fn("SessionService.compact")(function* (input: { readonly sessionID: string; readonly model: ModelRef }) {
        yield* store.getSession(input.sessionID)
        yield* compaction.check(input.model)
        const body = Effect.gen(function* () {
          // read holding the session: a summary now of a conversation an undo hid would leave out what a redo brings back
          const revert = (yield* store.getSession(input.sessionID)).revert
          if (revert !== undefined && revert.conversation !== false)
            return yield* new CompactionError({
              reason: "undo-pending",
              message: `Session ${input.sessionID} has an undo that can still be redone: run reins redo, or send a prompt (which makes the undo final), then compact.`
            })
          const messages = yield* readWindow(store, input.sessionID)
          return yield* compaction.compact({ sessionID: input.sessionID, model: input.model, reason: "manual", tokens: estimateMessages(modelView(messages)) })
        })
        const held = yield* runs.hold(input.sessionID, undefined, () => body)
        if (held._tag === "ran") return held.value
        const busy = held._tag === "held" ? busyMessage(held.held, runs.self) : `Session ${input.sessionID} is running a turn in this process.`
        return yield* new SessionBusyError({ sessionID: input.sessionID, message: `${busy} A running turn compacts itself when its context fills up.` })
      })

      const withSubAgents = yield* subAgentsFor({ create, prompt })
      return SessionService.of({ create, prompt, stream, queue, repair, compact })
    })
  )

  /** The service with its own `SessionRuns`, `Turn` and `SessionProcessor`. */
  static readonly layer = SessionService.layerWithRuns.pipe(
    Layer.provide(Layer.mergeAll(SessionRuns.layer, Turn.layer.pipe(Layer.provide(SessionProcessor.layer))))
  )
}
