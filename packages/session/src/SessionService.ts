import { Clock, Context, Deferred, Effect, Exit, Layer, Option, Stream } from "effect"
import { Bus, Ids, WorkDir, emptyUsage, isOpenTool, userFlag, type AssistantMessage, type ModelRef, type Part, type Session, type SessionEvent, type TurnResult, type UserMessage } from "@reins/domain"
import {
  Compaction,
  compacted,
  continuation,
  estimateMessages,
  estimateText,
  isStalled,
  modelView,
  noStall,
  nothingCompacted,
  readWindow,
  stallError,
  stepFitted,
  stepOverflowed,
  tokenCount,
  type CompactionError,
  type CompactResult,
  type Stall
} from "@reins/compaction"
import { Permission } from "@reins/permission"
import type { ProviderError } from "@reins/provider"
import { SessionStore, WritingClaim, sameClaim, type MessageWithParts, type SessionRun, type StoreError } from "@reins/storage"
import { ProcessGroup, ToolRegistry } from "@reins/tool"
import { DoomLoopSettings, makeDoomLoopGuard, type DoomLoopGuard } from "./DoomLoop.ts"
import { interruptedState, makeProcessor } from "./Processor.ts"
import { systemPrompt } from "./Prompt.ts"
import { SessionBusyError, type PromptError } from "./Errors.ts"
import { busyMessage, lostClaim } from "./Runs.ts"
import { SessionRuns } from "./SessionRuns.ts"
import { TurnStreamSettings, turnStream } from "./TurnEvents.ts"

/** Loop settings: the step limit (T1) is unlimited unless set. */
export const SessionSettings = Context.Reference<{ readonly maxSteps?: number }>("reins/session/Settings", {
  defaultValue: () => ({})
})

export { SessionBusyError, type PromptError }

export interface PromptInput {
  readonly sessionID: string
  readonly text: string
  readonly model: ModelRef
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
/** The pause before a turn that could not release its session (a message was just queued) reads again. */
const RELEASE_RETRY_MS = 10

/** The result of a turn: its last assistant message and that message's text (defined in domain, with the turn's events). */
export type { TurnResult }

const MAX_STEPS_NOTE =
  "You have reached the maximum number of steps for this task. Do not call any tools. Answer now: summarise what you did and what remains."

/**
 * T1: the turn ends only when the newest assistant message is newer than the last user message,
 * finished for a reason other than tool calls, and made no tool calls.
 */
export const turnDone = (messages: ReadonlyArray<MessageWithParts>) => {
  const lastUser = messages.findLast((m) => m.info.role === "user")
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (!last || last.info.role !== "assistant") return false
  if (lastUser && last.info.id < lastUser.info.id) return false
  if (last.info.error) return true
  if (last.parts.some((p) => p.type === "tool")) return false
  return last.info.finish !== undefined && last.info.finish !== "tool-calls" && last.info.finish !== "unknown"
}

/** The result of a finished turn: its last assistant message and that message's text. */
const turnResult = (sessionID: string, steps: number, messages: ReadonlyArray<MessageWithParts>): TurnResult | undefined => {
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (!last || last.info.role !== "assistant") return undefined
  const text = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
  return { sessionID, steps, assistant: last.info, text }
}

/** Creates sessions and runs turns of the agent loop on them. */
export class SessionService extends Context.Service<SessionService, {
  create(input: { readonly directory: string; readonly title?: string }): Effect.Effect<Session, StoreError>
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
  queue(input: { readonly sessionID: string; readonly text: string }): Effect.Effect<QueuedMessage | undefined, StoreError>
  /** Closes tool parts left open by a process that died; returns how many were fixed. */
  repair(sessionID: string): Effect.Effect<number, StoreError>
  /** Compacts an idle session on demand (`reins compact`): reason "manual", no continuation message. */
  compact(input: { readonly sessionID: string; readonly model: ModelRef }): Effect.Effect<CompactResult, ProviderError | StoreError | SessionBusyError | CompactionError>
}>()("reins/session/SessionService") {
  /** The service over a `SessionRuns` provided by the caller. */
  static readonly layerWithRuns = Layer.effect(
    SessionService,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const ids = yield* Ids
      const registry = yield* ToolRegistry
      const processor = yield* makeProcessor
      const settings = yield* SessionSettings
      const cwd = yield* WorkDir
      const permission = yield* Permission
      const compaction = yield* Compaction
      const doomLoopLimits = yield* DoomLoopSettings
      const streamSettings = yield* TurnStreamSettings
      const runs = yield* SessionRuns
      const isLive = runs.isLive

      const create = Effect.fn("SessionService.create")(function* (input: { readonly directory: string; readonly title?: string }) {
        const now = yield* Clock.currentTimeMillis
        const session: Session = { id: yield* ids.next("ses"), title: input.title ?? "New session", directory: input.directory, time: { created: now, updated: now } }
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
        return fixed.length
      })

      const repair = Effect.fn("SessionService.repair")(function* (sessionID: string) {
        // A live turn's open parts are its own, not left over.
        const held = yield* store.getRun(sessionID)
        if (held !== undefined && (yield* isLive)(held)) return 0
        return yield* repairWindow(yield* readWindow(store, sessionID))
      })

      /** Stores a user message (and its text part) and tells the bus. */
      const userMessage = Effect.fnUntraced(function* (sessionID: string, text: string, metadata?: UserMessage["metadata"]) {
        const now = yield* Clock.currentTimeMillis
        const message: UserMessage = { id: yield* ids.next("msg"), sessionID, role: "user", time: { created: now }, ...(metadata ? { metadata } : {}) }
        const part: Part = { id: yield* ids.next("prt"), sessionID, messageID: message.id, type: "text", text }
        return { message, part }
      })

      const announce = Effect.fnUntraced(function* (message: UserMessage, parts: ReadonlyArray<Part>) {
        yield* bus.publish({ type: "message.updated", message })
        for (const part of parts) yield* bus.publish({ type: "part.updated", part })
      })

      const queue = Effect.fn("SessionService.queue")(function* (input: { readonly sessionID: string; readonly text: string }) {
        const { message, part } = yield* userMessage(input.sessionID, input.text, { queued: true })
        const run = yield* store.queueMessage(message, [part], yield* isLive)
        if (run === undefined) return undefined
        yield* announce(message, [part])
        return { sessionID: input.sessionID, messageID: message.id, run } satisfies QueuedMessage
      })

      /**
       * T6: after a step, a loop in the turn's calls is a `doom_loop` question. Allowed, the turn
       * goes on; rejected (the non-interactive policy), the turn ends with the reason stored.
       */
      const guardLoop = Effect.fnUntraced(function* (sessionID: string, steps: number, guard: DoomLoopGuard, messages: ReadonlyArray<MessageWithParts>) {
        const found = guard.check(messages)
        if (!found) return undefined
        const asked = yield* Effect.result(permission.ask({ sessionID, permission: "doom_loop", patterns: found.tools, always: found.tools, title: found.message }))
        if (asked._tag === "Success") {
          guard.allow()
          return undefined
        }
        const last = messages.findLast((m) => m.info.role === "assistant")
        if (!last || last.info.role !== "assistant") return undefined
        const error = { reason: "doom_loop", message: `Stopped a doom loop: ${found.message}.` }
        const stopped: AssistantMessage = { ...last.info, error }
        yield* store.putMessage(stopped)
        yield* bus.publish({ type: "message.updated", message: stopped })
        yield* bus.publish({ type: "session.error", sessionID, error })
        return turnResult(sessionID, steps, messages.map((m) => (m === last ? { info: stopped, parts: m.parts } : m)))
      })

      /**
       * T7–T11: compacts the session (the turn's request stays pinned), then writes the message the
       * loop goes on with, flagged so views hide it: a synthetic continue once the turn has made a
       * step (a replayed request makes a model start over and re-run its tool calls), else a replay
       * of the request (its attachments as notes).
       */
      const compactAndContinue = Effect.fnUntraced(function* (
        sessionID: string,
        model: ModelRef,
        reason: "overflow" | "provider",
        tokens: number,
        window: ReadonlyArray<MessageWithParts>,
        turnStart: MessageWithParts,
        progressed: boolean
      ) {
        yield* compaction.compact({ sessionID, model, reason, tokens, turn: turnStart.info.id })
        // Once an earlier compaction summarised the turn's own request, the window starts later:
        // continue from that request, not from an older pinned one.
        const before = window.some((m) => m.info.id === turnStart.info.id) ? window : [turnStart, ...window.filter((m) => m.info.id > turnStart.info.id)]
        const next = continuation(before, { progressed })
        const { message, part } = yield* userMessage(sessionID, next.text, { compaction_continue: true, continuation: next.kind })
        const synthetic: Part = { ...part, synthetic: true }
        yield* store.putMessage(message)
        yield* store.putPart(synthetic)
        yield* announce(message, [synthetic])
        return message.id
      })

      /**
       * T5: user messages that appeared since the last step (queued by another caller). Reported once;
       * the model sees them after everything else this step, whatever their ids say.
       */
      const freshUsers = (messages: ReadonlyArray<MessageWithParts>, known: Set<string>) => {
        const fresh = new Set<string>()
        for (const m of messages) {
          if (m.info.role !== "user" || known.has(m.info.id)) continue
          known.add(m.info.id)
          fresh.add(m.info.id)
        }
        return fresh
      }

      const loop = Effect.fnUntraced(function* (session: Session, turnStart: MessageWithParts, model: ModelRef, run: SessionRun, known: Set<string>) {
        const user = turnStart.info
        const tools = registry.forModel(model.modelID).map((t) => ({ id: t.id, description: t.description, parameters: t.parameters }))
        // Built once per turn: git status costs a process per step, and a system prompt that
        // changes between steps defeats the provider's prompt cache.
        const system = yield* systemPrompt(cwd, new Date(yield* Clock.currentTimeMillis))
        const guard = makeDoomLoopGuard(doomLoopLimits)
        let steps = 0
        // Whether compaction makes room: compactions in a row after which the next request still
        // overflows end the turn with a clear error instead of looping (and re-billing summaries).
        let stall: Stall = noStall
        // A step of this turn succeeded: a compaction then continues the work instead of replaying the request.
        let worked = false
        // What every request carries besides its messages, for the stalled error's figures.
        const fixedCost = estimateText(system.join("\n")) + estimateText(JSON.stringify(tools))
        const stalled = (tokens: number) =>
          Effect.fail(stallError({ sessionID: session.id, model: `${model.providerID}/${model.modelID}`, ...compaction.window(model), tokens, fixed: fixedCost }))
        // `known`: the user messages there before the session was claimed, then those the model was
        // shown or the loop wrote; any other is a message queued for this run.
        known.add(user.id)
        let queuedSeen = 0
        while (true) {
          // From the last summary on (two indexed reads), not the whole session: a step costs the
          // same at step 300 as at step 10.
          const messages = yield* readWindow(store, session.id)
          const fresh = freshUsers(messages, known)
          for (const m of messages) if (fresh.has(m.info.id) && m.info.role === "user" && userFlag(m.info, "queued")) queuedSeen++
          if (fresh.size === 0 && steps > 0 && turnDone(messages)) {
            // Released only if nothing was queued since this read; else the turn goes on to answer it.
            if (yield* store.releaseRun(run, queuedSeen)) return turnResult(session.id, steps, messages)!
            // Queued but not yet visible to this read: give the writer a moment.
            yield* Effect.sleep(RELEASE_RETRY_MS)
            continue
          }
          const stopped = steps > 0 ? yield* guardLoop(session.id, steps, guard, messages) : undefined
          if (stopped) return stopped
          steps++
          const final = settings.maxSteps !== undefined && steps >= settings.maxSteps
          const now = yield* Clock.currentTimeMillis
          const assistant: AssistantMessage = {
            id: yield* ids.next("msg"),
            sessionID: session.id,
            role: "assistant",
            parentID: user.id,
            model,
            time: { created: now },
            usage: emptyUsage,
            cost: 0
          }
          yield* store.putMessage(assistant)
          yield* bus.publish({ type: "message.updated", message: assistant })
          // The model sees the summary, pinned messages and tail instead of the compacted head;
          // messages queued since the last step come last.
          const shown = modelView(messages)
          const view = fresh.size === 0 ? shown : [...shown.filter((m) => !fresh.has(m.info.id)), ...shown.filter((m) => fresh.has(m.info.id))]
          const stepped = yield* processor
            .step({
              assistant,
              cwd,
              request: {
                model,
                system: final ? [...system, MAX_STEPS_NOTE] : system,
                messages: view,
                tools: final ? [] : tools,
                ...(final ? { toolChoice: "none" as const } : {}),
                // the answer may fill what the window keeps free for it, not more (a 4k model whose
                // `output` is 8k would otherwise be asked for more than its whole window)
                maxOutputTokens: compaction.window(model).maxOutput
              }
            })
            .pipe(
              Effect.tap((o) =>
                Effect.annotateCurrentSpan({
                  "gen_ai.usage.input_tokens": o.usage.input + o.usage.cacheRead + o.usage.cacheWrite,
                  "gen_ai.usage.output_tokens": o.usage.output,
                  "gen_ai.usage.cache_read.input_tokens": o.usage.cacheRead,
                  "gen_ai.usage.cache_creation.input_tokens": o.usage.cacheWrite,
                  "gen_ai.response.finish_reasons": [o.finish],
                  "reins.cost": o.cost,
                  "reins.tool_calls": o.toolCalls
                })
              ),
              Effect.withSpan("session.step", {
                attributes: {
                  "gen_ai.operation.name": "chat",
                  "gen_ai.provider.name": model.providerID,
                  "gen_ai.request.model": model.modelID,
                  "session.id": session.id,
                  "session.step": steps
                }
              }),
              Effect.result
            )
          if (stepped._tag === "Failure") {
            const error = stepped.failure
            // A provider's "context too long" is compacted, never retried as is (T7, T23).
            if (error._tag === "ProviderError" && error.reason === "overflow" && compaction.settings.auto) {
              stall = stepOverflowed(stall)
              if (isStalled(stall)) return yield* stalled(fixedCost + estimateMessages(view))
              // With nothing to summarise (one huge first message) the provider's own error says it best.
              const wrote = yield* compactAndContinue(session.id, model, "provider", estimateMessages(view), messages, turnStart, worked).pipe(
                Effect.catchIf(
                  (e): e is CompactionError => e._tag === "CompactionError" && e.reason === "nothing-to-summarise",
                  () => Effect.fail(error)
                )
              )
              known.add(wrote)
              stall = compacted(stall)
              continue
            }
            return yield* Effect.fail(error)
          }
          if (final) return turnResult(session.id, steps, yield* readWindow(store, session.id))!
          worked = true
          if (!compaction.overflows(stepped.success.usage, model)) stall = stepFitted(stall)
          else {
            stall = stepOverflowed(stall)
            const after = yield* readWindow(store, session.id)
            // A finished turn leaves compaction to the next one: nothing is waiting to continue.
            if (!turnDone(after)) {
              const tokens = tokenCount(stepped.success.usage)
              if (isStalled(stall)) return yield* stalled(tokens)
              // All of it is the verbatim tail already: go on; the stall count stops a context that cannot shrink.
              const wrote = yield* compactAndContinue(session.id, model, "overflow", tokens, after, turnStart, worked).pipe(
                // Noted on the span, not logged: a log line would land in the answer on stdout.
                Effect.catchIf(
                  (e): e is CompactionError => e._tag === "CompactionError" && e.reason === "nothing-to-summarise",
                  (e) => Effect.as(Effect.annotateCurrentSpan("compaction.skipped", e.message), undefined)
                )
              )
              if (wrote !== undefined) known.add(wrote)
              stall = wrote !== undefined ? compacted(stall) : nothingCompacted(stall)
            }
          }
        }
      })

      const startTurn = Effect.fnUntraced(function* (input: PromptInput, run: SessionRun, known: Set<string>) {
        let session = yield* store.getSession(input.sessionID)
        const { message: user, part } = yield* userMessage(session.id, input.text)
        yield* store.putMessage(user)
        yield* store.putPart(part)
        yield* announce(user, [part])
        const now = user.time.created
        const isFirst = session.title === "New session"
        session = { ...session, title: isFirst ? input.text.replace(/\s+/g, " ").slice(0, 60) : session.title, time: { ...session.time, updated: now } }
        yield* store.updateSession(session)
        yield* bus.publish({ type: "session.updated", session })
        yield* bus.publish({ type: "session.status", sessionID: session.id, status: "busy" })
        return yield* loop(session, { info: user, parts: [part] }, input.model, run, known)
      })

      const runTurn = Effect.fn("SessionService.prompt")(function* (input: PromptInput) {
        yield* Effect.annotateCurrentSpan({ "session.id": input.sessionID })
        yield* store.getSession(input.sessionID)
        // A reserve that leaves nothing for the conversation is a config error, before anything is stored.
        yield* compaction.check(input.model)
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
              return yield* new SessionBusyError({ sessionID: input.sessionID, message: `${busyMessage(queued.run, runs.self)} Your message was queued for that turn.` })
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

      const stream = (input: PromptInput) => turnStream(bus, input.sessionID, streamSettings.buffer, runTurn(input))

      // The turn's stream run to its end: the result `turn.finished` carries.
      const prompt = (input: PromptInput) =>
        stream(input).pipe(
          Stream.filter((event) => event.type === "turn.finished"),
          Stream.runLast,
          Effect.flatMap((last) => (Option.isSome(last) ? Effect.succeed(last.value.result) : Effect.die("A turn's stream ended without its result")))
        )

      /** A turn holding the session, if it is free; its end (idle, or its error) told after the hold is released. */
      const turn = (input: PromptInput, result: Deferred.Deferred<TurnResult, PromptError>, before: ReadonlyArray<MessageWithParts>) => {
        const known = new Set(before.flatMap((m) => (m.info.role === "user" ? [m.info.id] : [])))
        return runs.hold(input.sessionID, result, (run) => Effect.andThen(repairWindow(before), startTurn(input, run, known))).pipe(
          Effect.withSpan("session.turn", { attributes: { "session.id": input.sessionID } }),
          // A turn whose session was taken over writes nothing more, not even the session's time.
          Effect.onExit((exit) =>
            lostClaim(exit) || (Exit.isSuccess(exit) && exit.value._tag !== "ran") ? Effect.void : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const current = yield* store.getSession(input.sessionID)
              yield* store.updateSession({ ...current, time: { ...current.time, updated: now } })
              yield* bus.publish({ type: "session.status", sessionID: input.sessionID, status: "idle" })
            }).pipe(Effect.ignore)
          ),
          Effect.tapError((error) =>
            bus.publish({
              type: "session.error",
              sessionID: input.sessionID,
              error: { reason: error._tag === "ProviderError" ? error.reason : error._tag, message: error.message }
            })
          )
        )
      }

      const compact = Effect.fn("SessionService.compact")(function* (input: { readonly sessionID: string; readonly model: ModelRef }) {
        yield* store.getSession(input.sessionID)
        yield* compaction.check(input.model)
        const body = Effect.gen(function* () {
          const messages = yield* readWindow(store, input.sessionID)
          return yield* compaction.compact({ sessionID: input.sessionID, model: input.model, reason: "manual", tokens: estimateMessages(modelView(messages)) })
        })
        const held = yield* runs.hold(input.sessionID, undefined, () => body)
        if (held._tag === "ran") return held.value
        const busy = held._tag === "held" ? busyMessage(held.held, runs.self) : `Session ${input.sessionID} is running a turn in this process.`
        return yield* new SessionBusyError({ sessionID: input.sessionID, message: `${busy} A running turn compacts itself when its context fills up.` })
      })

      return SessionService.of({ create, prompt, stream, queue, repair, compact })
    })
  )

  /** The service with its own `SessionRuns`. */
  static readonly layer = SessionService.layerWithRuns.pipe(Layer.provide(SessionRuns.layer))
}
