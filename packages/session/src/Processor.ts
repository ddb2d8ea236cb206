import { Cause, Clock, Context, Effect, FiberSet, Layer, Option, Semaphore, Stream } from "effect"
import { Bus, Ids, isOpenTool, type AssistantMessage, type Part, type ReasoningPart, type TextPart, type ToolPart } from "@reins/domain"
import { Provider, type ModelEvent, type ProviderError, type ProviderRequest } from "@reins/provider"
import { SessionStore, type StoreError } from "@reins/storage"
import { ToolRegistry } from "@reins/tool"
import { Checkpoints } from "@reins/workspace"
import { cutAnswer, KEPT_OF_TOO_LONG, MAX_RESPONSE_CHARS, tooLong } from "./AnswerCap.ts"
import { cutOff, delegatedBy, emptyStep, foldStep, interruptedState, textDue, type StepEvent, type StepOutcome, type StepState } from "./StepState.ts"

export { TEXT_STORE_MIN_GROWTH, interruptedState, type StepOutcome } from "./StepState.ts"

export interface StepInput {
  readonly assistant: AssistantMessage
  readonly request: ProviderRequest
  readonly cwd: string
  /** Told what the model call cost as soon as its answer is complete, while its tools (a sub-agent) may still run. */
  readonly onCost?: ((cost: number) => void) | undefined
}

/** How long cleanup waits for interrupted tools before marking them errored (T3). */
export const STRAGGLER_WAIT_MS = 250
/** Independent tool calls of one step run concurrently, this many at a time. */
export const TOOL_CONCURRENCY = 4
/**
 * The stream processor (T2–T4): consumes the model stream event by event, updating the stored
 * part at once; each tool call runs in its own fiber of a FiberSet scoped to the step, which the
 * step awaits; cleanup runs in `ensuring`, so an interrupt or error leaves no part pending or running.
 */
export const makeProcessor = Effect.gen(function* () {
  const store = yield* SessionStore
  const bus = yield* Bus
  const ids = yield* Ids
  const provider = yield* Provider
  const registry = yield* ToolRegistry
  const slots = yield* Semaphore.make(TOOL_CONCURRENCY)
  // what a step's tools change in the project (undo, redo): where the runtime provides checkpoints
  const checkpoints = Option.getOrUndefined(yield* Effect.serviceOption(Checkpoints))

  const save = (part: Part) => store.putPart(part).pipe(Effect.andThen(bus.publish({ type: "part.updated", part })))
  const saveMessage = (message: AssistantMessage) => store.putMessage(message).pipe(Effect.andThen(bus.publish({ type: "message.updated", message })))

  const step = Effect.fn("SessionProcessor.step")(function* (input: StepInput) {
    return yield* Effect.scoped(stepScoped(input))
  })

  const stepScoped = Effect.fnUntraced(function* (input: StepInput) {
    const { assistant, request, cwd } = input
    // Only what this model was offered may run: a GPT model calling `edit` gets the unknown-tool answer.
    const offered = registry.forModel(request.model.modelID, assistant.sessionID)
    const base = { sessionID: assistant.sessionID, messageID: assistant.id }
    // What the step knows so far, folded from what happens (foldStep); parts are stored and published after.
    let state: StepState = emptyStep
    // characters the answer streamed so far: a step past MAX_RESPONSE_CHARS is stopped
    let streamed = 0
    // an interrupted or failed step's message: with what its model call cost once the answer was complete
    const stopped = (completed: number, error: { readonly reason: string; readonly message: string }) =>
      saveMessage({ ...assistant, usage: state.outcome.usage, cost: state.outcome.cost, time: { ...assistant.time, completed }, error })
    const apply = (event: StepEvent) => {
      state = foldStep(state, event)
      return state
    }
    // The step's tool calls, one fiber each: awaited together, interrupted together.
    const running = yield* FiberSet.make<void, StoreError>()

    const setTool = (part: ToolPart) =>
      Effect.suspend(() => {
        apply({ type: "tool", part })
        return save(part)
      })
    const callOf = (callID: string) => state.calls.get(callID)

    const runTool = (callID: string, input: Record<string, unknown>) =>
      Effect.gen(function* () {
        const pending = callOf(callID)!
        const tool = offered.find((t) => t.id === pending.tool)
        const start = yield* Clock.currentTimeMillis
        if (!tool) {
          const names = offered.map((t) => t.id).join(", ")
          yield* setTool({
            ...pending,
            state: { status: "error", input, error: `There is no tool named "${pending.tool}". Available tools: ${names}.`, time: { start, end: start } }
          })
          return
        }
        yield* setTool({ ...pending, state: { status: "running", input, time: { start } } })
        // quiet: stored, not announced (a process group a later reins stops; the next progress carries it to viewers)
        const progress = (metadata: Record<string, unknown>, options?: { readonly quiet?: boolean }) =>
          Effect.suspend(() => {
            const part = callOf(callID)!
            if (part.state.status !== "running") return Effect.void
            const next: ToolPart = { ...part, state: { ...part.state, metadata } }
            if (!options?.quiet) return setTool(next)
            apply({ type: "tool", part: next })
            return store.putPart(next)
          }).pipe(Effect.ignore)
        const exit = yield* Effect.exit(tool.execute(input, { sessionID: assistant.sessionID, messageID: assistant.id, callID, cwd, progress }))
        const end = yield* Clock.currentTimeMillis
        const current = callOf(callID)!
        if (exit._tag === "Success") {
          const r = exit.value
          yield* setTool({
            ...current,
            state: {
              status: "completed",
              input,
              output: r.output,
              title: r.title,
              metadata: r.metadata ?? {},
              time: { start, end },
              ...(r.attachments ? { attachments: r.attachments } : {})
            }
          })
        } else {
          const error = Cause.findErrorOption(exit.cause)
          const message = error._tag === "Some" ? error.value.message : `The tool crashed: ${Cause.pretty(exit.cause).split("\n")[0]}`
          yield* setTool({ ...current, state: { status: "error", input, error: message, time: { start, end } } })
        }
      }).pipe(
        Effect.onInterrupt(() => markInterrupted(callID)),
        // a `task` call waits for its sub-agent, whose own tools need slots of this processor:
        // holding one would deadlock; sub-agents are bounded by their own runner (T19)
        (run) => (callOf(callID)?.tool === "task" ? run : Semaphore.withPermits(slots, 1)(run))
      )

    const markInterrupted = (callID: string) =>
      Effect.gen(function* () {
        const part = callOf(callID)
        if (!part || !isOpenTool(part)) return
        const end = yield* Clock.currentTimeMillis
        yield* setTool({ ...part, state: interruptedState(part.state, end) })
      })

    const ensureTool = (callID: string, name: string) =>
      Effect.gen(function* () {
        const existing = callOf(callID)
        if (existing) return existing
        const part: ToolPart = { id: yield* ids.next("prt"), ...base, type: "tool", callID, tool: name, state: { status: "pending", input: {}, raw: "" } }
        // stored at once: a call may wait (for a slot, for the checkpoint) and a crash then must find it to close it
        yield* setTool(part)
        return part
      })

    const handle = (event: ModelEvent): Effect.Effect<void, StoreError | ProviderError> =>
      Effect.gen(function* () {
        streamed +=
          event.type === "text-delta" || event.type === "reasoning-delta" ? event.text.length : event.type === "tool-input-delta" ? event.delta.length : 0
        if (streamed > MAX_RESPONSE_CHARS) return yield* tooLong(streamed)
        switch (event.type) {
          case "start-step":
            yield* save({ id: yield* ids.next("prt"), ...base, type: "step-start" })
            return
          case "text-start":
          case "reasoning-start": {
            const start = yield* Clock.currentTimeMillis
            const id = yield* ids.next("prt")
            const part: TextPart | ReasoningPart =
              event.type === "text-start"
                ? { id, ...base, type: "text", text: "", time: { start } }
                : { id, ...base, type: "reasoning", text: "", time: { start }, ...(event.metadata ? { providerMetadata: event.metadata } : {}) }
            apply({ type: "text-start", key: `${event.type[0]}:${event.id}`, part })
            yield* save(part)
            return
          }
          case "text-delta":
          case "reasoning-delta": {
            const key = `${event.type[0]}:${event.id}`
            // a reasoning delta may bring only metadata (Anthropic's thinking signature), stored at its end
            const metadata = event.type === "reasoning-delta" ? event.metadata : undefined
            const part = apply({ type: "text-delta", key, text: event.text, ...(metadata ? { metadata } : {}) }).texts.get(key)
            if (!part || event.text === "") return
            if (textDue(state, key)) {
              apply({ type: "text-stored", key })
              yield* store.putPart(part)
            }
            yield* bus.publish({ type: "part.delta", sessionID: part.sessionID, partID: part.id, partType: part.type, delta: event.text })
            return
          }
          case "text-end":
          case "reasoning-end": {
            const key = `${event.type[0]}:${event.id}`
            const metadata = event.type === "reasoning-end" ? event.metadata : undefined
            const part = apply({ type: "text-end", key, end: yield* Clock.currentTimeMillis, ...(metadata ? { metadata } : {}) }).texts.get(key)
            if (part) yield* save(part)
            return
          }
          case "tool-input-start":
            yield* ensureTool(event.callID, event.name)
            return
          case "tool-input-delta":
            apply({ type: "tool-input-delta", callID: event.callID, delta: event.delta })
            return
          case "tool-input-end":
            return
          case "tool-call": {
            const created = yield* ensureTool(event.callID, event.name)
            // the provider's metadata of the call (Gemini's thought signature) goes with the part from now on
            const pending: ToolPart = event.metadata ? { ...created, providerMetadata: event.metadata } : created
            if (pending !== created) apply({ type: "tool", part: pending })
            const input = typeof event.input === "object" && event.input !== null && !Array.isArray(event.input) ? (event.input as Record<string, unknown>) : {}
            // A call to a tool this model was not offered gets the no-such-tool answer from runTool, flagged invalid or not.
            if (event.invalid && offered.some((t) => t.id === event.name)) {
              const now = yield* Clock.currentTimeMillis
              yield* setTool({
                ...pending,
                state: {
                  status: "error",
                  input,
                  error: `The ${event.name} tool call could not be used: ${event.invalid}. Call an existing tool with valid JSON arguments.`,
                  time: { start: now, end: now }
                }
              })
              return
            }
            // not before the checkpoint has begun: what the tool changes is the step's
            yield* FiberSet.run(
              running,
              checkpoint === undefined ? runTool(event.callID, input) : Effect.andThen(checkpoint.ready, runTool(event.callID, input))
            )
            return
          }
          case "finish-step":
            apply({ type: "finish", outcome: { finish: event.finishReason, toolCalls: state.calls.size, usage: event.usage, cost: event.cost } })
            input.onCost?.(event.cost)
            return
          case "retry":
            yield* bus.publish({
              type: "session.status",
              sessionID: assistant.sessionID,
              status: "retry",
              attempt: event.attempt,
              message: event.message,
              next: event.delayMs
            })
            return
        }
      })

    // Begun before the model call (its tools run once it is ready): what the tools change from then on is the step's.
    // A project's first checkpoint looks at every file once the server took the request (or the first event came), so
    // the model call does not wait for it; a step ending before either (refused, unreachable, aborted) ran no tool.
    const taken = Promise.withResolvers<void>()
    taken.promise.catch(() => undefined) // no checkpoint waiting on it (none here, or its tracker made): not unhandled
    const sent = () => taken.resolve()
    const unsent = () => taken.reject(new Error("the step ended before the server took its request"))
    const checkpoint = checkpoints === undefined ? undefined : yield* checkpoints.begin(cwd, { after: taken.promise })

    // On interrupt or error: stop running tools (bounded wait), then close whatever is still open. Then, the step's
    // tools done however they ended, what they changed in the project is stored with the step (a patch part); a step
    // that ran no tool records nothing (what changed meanwhile was not its doing: the next checkpoint starts after it).
    const cleanup = Effect.gen(function* () {
      yield* Effect.timeoutOption(FiberSet.clear(running), STRAGGLER_WAIT_MS)
      const cut = cutOff(state, yield* Clock.currentTimeMillis)
      state = cut.state
      const open = cut.changed
      if (open.length > 0) yield* store.putParts(open)
      for (const part of open) yield* bus.publish({ type: "part.updated", part })
      if (checkpoint === undefined || state.calls.size === 0) return
      const files = yield* checkpoint.end
      if (files.length > 0) yield* save({ id: yield* ids.next("prt"), ...base, type: "patch", files, directory: cwd })
    }).pipe(Effect.ignore)

    const result = yield* provider.stream({ ...request, sent }).pipe(
      // a retry's notice is the provider's own (an attempt failed): not a sign the server took the request
      Stream.runForEach((event) => (event.type === "retry" ? handle(event) : Effect.andThen(Effect.sync(sent), handle(event)))),
      // every call has ended, or one failed (its store write did)
      Effect.andThen(Effect.raceFirst(FiberSet.awaitEmpty(running), FiberSet.join(running))),
      Effect.ensuring(Effect.andThen(Effect.sync(unsent), cleanup)),
      Effect.onInterrupt(() =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => stopped(at, { reason: "interrupted", message: "Interrupted by the user." })).pipe(Effect.ignore)
      ),
      Effect.result
    )

    const completed = yield* Clock.currentTimeMillis
    if (result._tag === "Failure") {
      const error = result.failure as ProviderError | StoreError
      // an answer stopped for its size is kept cut (its start and end): sent back whole, it would fill any window
      if (error._tag === "ProviderError" && error.reason === "too-long")
        for (const part of state.texts.values())
          if (part.text.length > KEPT_OF_TOO_LONG) yield* save({ ...part, text: cutAnswer(part.text) }).pipe(Effect.ignore)
      yield* stopped(completed, { reason: error._tag === "ProviderError" ? error.reason : `store-${error.reason}`, message: error.message })
      return yield* Effect.fail(error)
    }
    const delegated = delegatedBy(state.calls.values())
    const outcome: StepOutcome = { ...state.outcome, toolCalls: state.calls.size, ...(delegated !== undefined ? { delegated } : {}) }
    yield* save({ id: yield* ids.next("prt"), ...base, type: "step-finish", reason: outcome.finish, usage: outcome.usage, cost: outcome.cost })
    yield* saveMessage({ ...assistant, time: { ...assistant.time, completed }, finish: outcome.finish, usage: outcome.usage, cost: outcome.cost })
    return outcome
  })

  return { step }
})

export type Processor = Effect.Success<typeof makeProcessor>

/** The step processor as a service: one step of a turn at a time, given its assistant message and request. */
export class SessionProcessor extends Context.Service<SessionProcessor, Processor>()("reins/session/SessionProcessor") {
  static readonly layer = Layer.effect(SessionProcessor, makeProcessor)
}
