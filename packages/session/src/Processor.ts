import { Cause, Clock, Context, Effect, FiberSet, Layer, Semaphore, Stream } from "effect"
import { Bus, Ids, emptyUsage, isOpenTool, type AssistantMessage, type Part, type ReasoningPart, type TextPart, type ToolPart, type Usage } from "@reins/domain"
import { Provider, type ModelEvent, type ProviderError, type ProviderRequest } from "@reins/provider"
import { SessionStore, type StoreError } from "@reins/storage"
import { ToolRegistry } from "@reins/tool"

/** What one step produced, for the loop to decide whether to go on (T1). */
export interface StepOutcome {
  readonly finish: string
  readonly toolCalls: number
  readonly usage: Usage
  readonly cost: number
}

export interface StepInput {
  readonly assistant: AssistantMessage
  readonly request: ProviderRequest
  readonly cwd: string
}

/** How long cleanup waits for interrupted tools before marking them errored (T3). */
export const STRAGGLER_WAIT_MS = 250
/** Independent tool calls of one step run concurrently, this many at a time. */
export const TOOL_CONCURRENCY = 4
/**
 * A streaming text or reasoning part is stored again once it has grown by a quarter since it was
 * last stored, and by at least this many characters: bytes written stay linear in its length (not
 * one whole copy per delta). It is stored whole when it ends or the step is cut off.
 */
export const TEXT_STORE_MIN_GROWTH = 4096

/**
 * The error state of a call cut off by an interrupt. What the tool reported while running
 * (bash: the last lines and where the full output is) is kept, so the model sees how far it got.
 */
export const interruptedState = (state: ToolPart["state"], end: number): ToolPart["state"] => {
  const start = state.status === "running" ? state.time.start : end
  const metadata = state.status === "running" ? state.metadata : undefined
  const tail = typeof metadata?.["tail"] === "string" && metadata["tail"].length > 0 ? `\nOutput so far (last lines):\n${metadata["tail"]}` : ""
  const file = typeof metadata?.["outputPath"] === "string" ? `\nThe output so far is saved in ${metadata["outputPath"]}.` : ""
  return {
    status: "error",
    input: state.input,
    error: `The tool call was interrupted before it finished.${tail}${file}`,
    interrupted: true,
    ...(metadata ? { metadata } : {}),
    time: { start, end }
  }
}

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

  const save = (part: Part) => store.putPart(part).pipe(Effect.andThen(bus.publish({ type: "part.updated", part })))

  const saveMessage = (message: AssistantMessage) =>
    store.putMessage(message).pipe(Effect.andThen(bus.publish({ type: "message.updated", message })))

  const step = Effect.fn("SessionProcessor.step")(function* (input: StepInput) {
    return yield* Effect.scoped(stepScoped(input))
  })

  const stepScoped = Effect.fnUntraced(function* (input: StepInput) {
    const { assistant, request, cwd } = input
    // Only what this model was offered may run: a GPT model calling `edit` gets the unknown-tool answer.
    const offered = registry.forModel(request.model.modelID)
    const base = { sessionID: assistant.sessionID, messageID: assistant.id }
    const texts = new Map<string, TextPart | ReasoningPart>()
    // how much of each streaming text the store holds
    const storedLength = new Map<string, number>()
    const calls = new Map<string, { part: ToolPart }>()
    // The step's tool calls, one fiber each: awaited together, interrupted together.
    const running = yield* FiberSet.make<void, StoreError>()
    let outcome: StepOutcome = { finish: "unknown", toolCalls: 0, usage: emptyUsage, cost: 0 }

    const setTool = (callID: string, part: ToolPart) =>
      Effect.suspend(() => {
        const entry = calls.get(callID)
        if (entry) entry.part = part
        return save(part)
      })

    const runTool = (callID: string, input: Record<string, unknown>) =>
      Effect.gen(function* () {
        const entry = calls.get(callID)!
        const tool = offered.find((t) => t.id === entry.part.tool)
        const start = yield* Clock.currentTimeMillis
        if (!tool) {
          const names = offered.map((t) => t.id).join(", ")
          yield* setTool(callID, {
            ...entry.part,
            state: { status: "error", input, error: `There is no tool named "${entry.part.tool}". Available tools: ${names}.`, time: { start, end: start } }
          })
          return
        }
        yield* setTool(callID, { ...entry.part, state: { status: "running", input, time: { start } } })
        const progress = (metadata: Record<string, unknown>) =>
          Effect.suspend(() => {
            const part = calls.get(callID)!.part
            if (part.state.status !== "running") return Effect.void
            return setTool(callID, { ...part, state: { ...part.state, metadata } })
          }).pipe(Effect.ignore)
        const exit = yield* Effect.exit(tool.execute(input, { sessionID: assistant.sessionID, messageID: assistant.id, callID, cwd, progress }))
        const end = yield* Clock.currentTimeMillis
        const current = calls.get(callID)!.part
        if (exit._tag === "Success") {
          const r = exit.value
          yield* setTool(callID, {
            ...current,
            state: { status: "completed", input, output: r.output, title: r.title, metadata: r.metadata ?? {}, time: { start, end } }
          })
        } else {
          const error = Cause.findErrorOption(exit.cause)
          const message = error._tag === "Some" ? error.value.message : `The tool crashed: ${Cause.pretty(exit.cause).split("\n")[0]}`
          yield* setTool(callID, { ...current, state: { status: "error", input, error: message, time: { start, end } } })
        }
      }).pipe(
        Effect.onInterrupt(() => markInterrupted(callID)),
        Semaphore.withPermits(slots, 1)
      )

    const markInterrupted = (callID: string) =>
      Effect.gen(function* () {
        const part = calls.get(callID)?.part
        if (!part || !isOpenTool(part)) return
        const end = yield* Clock.currentTimeMillis
        yield* setTool(callID, { ...part, state: interruptedState(part.state, end) })
      })

    const ensureTool = (callID: string, name: string) =>
      Effect.gen(function* () {
        const existing = calls.get(callID)
        if (existing) return existing
        const part: ToolPart = { id: yield* ids.next("prt"), ...base, type: "tool", callID, tool: name, state: { status: "pending", input: {}, raw: "" } }
        const entry = { part }
        calls.set(callID, entry)
        yield* save(part)
        return entry
      })

    const handle = (event: ModelEvent): Effect.Effect<void, StoreError> =>
      Effect.gen(function* () {
        switch (event.type) {
          case "start-step":
            yield* save({ id: yield* ids.next("prt"), ...base, type: "step-start" })
            return
          case "text-start":
          case "reasoning-start": {
            const part = { id: yield* ids.next("prt"), ...base, type: event.type === "text-start" ? "text" : "reasoning", text: "", time: { start: yield* Clock.currentTimeMillis } } as TextPart | ReasoningPart
            texts.set(`${event.type[0]}:${event.id}`, part)
            yield* save(part)
            return
          }
          case "text-delta":
          case "reasoning-delta": {
            const key = `${event.type[0]}:${event.id}`
            const prev = texts.get(key)
            if (!prev) return
            const part = { ...prev, text: prev.text + event.text }
            texts.set(key, part)
            const stored = storedLength.get(key) ?? 0
            if (part.text.length - stored >= Math.max(TEXT_STORE_MIN_GROWTH, stored / 4)) {
              storedLength.set(key, part.text.length)
              yield* store.putPart(part)
            }
            yield* bus.publish({ type: "part.delta", partID: part.id, partType: part.type, delta: event.text })
            return
          }
          case "text-end":
          case "reasoning-end": {
            const key = `${event.type[0]}:${event.id}`
            const prev = texts.get(key)
            if (!prev) return
            const part = { ...prev, time: { start: prev.time?.start ?? 0, end: yield* Clock.currentTimeMillis } }
            texts.set(key, part)
            yield* save(part)
            return
          }
          case "tool-input-start":
            yield* ensureTool(event.callID, event.name)
            return
          case "tool-input-delta": {
            const entry = calls.get(event.callID)
            if (entry && entry.part.state.status === "pending") {
              entry.part = { ...entry.part, state: { ...entry.part.state, raw: entry.part.state.raw + event.delta } }
            }
            return
          }
          case "tool-input-end":
            return
          case "tool-call": {
            const entry = yield* ensureTool(event.callID, event.name)
            const input = typeof event.input === "object" && event.input !== null && !Array.isArray(event.input) ? (event.input as Record<string, unknown>) : {}
            // A call to a tool this model was not offered gets the no-such-tool answer from runTool,
            // whether or not the provider flagged it invalid.
            if (event.invalid && offered.some((t) => t.id === event.name)) {
              const now = yield* Clock.currentTimeMillis
              yield* setTool(event.callID, {
                ...entry.part,
                state: {
                  status: "error",
                  input,
                  error: `The ${event.name} tool call could not be used: ${event.invalid}. Call an existing tool with valid JSON arguments.`,
                  time: { start: now, end: now }
                }
              })
              return
            }
            yield* FiberSet.run(running, runTool(event.callID, input))
            return
          }
          case "finish-step":
            outcome = { finish: event.finishReason, toolCalls: calls.size, usage: event.usage, cost: event.cost }
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

    // On interrupt or error: stop running tools (bounded wait), then close whatever is still open.
    const cleanup = Effect.gen(function* () {
      yield* Effect.timeoutOption(FiberSet.clear(running), STRAGGLER_WAIT_MS)
      const end = yield* Clock.currentTimeMillis
      const open: Array<Part> = []
      for (const [callID, entry] of calls) {
        if (!isOpenTool(entry.part)) continue
        entry.part = { ...entry.part, state: interruptedState(entry.part.state, end) }
        calls.set(callID, entry)
        open.push(entry.part)
      }
      for (const part of texts.values()) {
        if (part.time && part.time.end === undefined) open.push({ ...part, time: { start: part.time.start, end } })
      }
      if (open.length > 0) yield* store.putParts(open)
      for (const part of open) yield* bus.publish({ type: "part.updated", part })
    }).pipe(Effect.ignore)

    const result = yield* provider.stream(request).pipe(
      Stream.runForEach(handle),
      // every call has ended, or one failed (its store write did)
      Effect.andThen(Effect.raceFirst(FiberSet.awaitEmpty(running), FiberSet.join(running))),
      Effect.ensuring(cleanup),
      Effect.onInterrupt(() =>
        Effect.gen(function* () {
          const completed = yield* Clock.currentTimeMillis
          yield* saveMessage({ ...assistant, time: { ...assistant.time, completed }, error: { reason: "interrupted", message: "Interrupted by the user." } })
        }).pipe(Effect.ignore)
      ),
      Effect.result
    )

    const completed = yield* Clock.currentTimeMillis
    if (result._tag === "Failure") {
      const error = result.failure as ProviderError | StoreError
      yield* saveMessage({ ...assistant, time: { ...assistant.time, completed }, error: { reason: error._tag === "ProviderError" ? error.reason : `store-${error.reason}`, message: error.message } })
      return yield* Effect.fail(error)
    }
    outcome = { ...outcome, toolCalls: calls.size }
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
