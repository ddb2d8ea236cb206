import {
  addUsage,
  emptyUsage,
  isOpenTool,
  spendingOf,
  type Part,
  type ReasoningPart,
  type Spending,
  type TextPart,
  type ToolPart,
  type Usage
} from "@reins/domain"

/** What one step produced, for the loop to decide whether to go on (T1). */
export interface StepOutcome {
  readonly finish: string
  readonly toolCalls: number
  readonly usage: Usage
  readonly cost: number
  /** What its tools spent on models of their own (the sub-agents of its `task` calls); absent when nothing. */
  readonly delegated?: Spending
}

/**
 * A streaming text or reasoning part is stored again once it has grown by a quarter since it was
 * last stored, and by at least this many characters: bytes written stay linear in its length (not
 * one whole copy per delta). It is stored whole when it ends or the step is cut off.
 */
export const TEXT_STORE_MIN_GROWTH = 4096

/** What a step knows so far: its streaming texts (by stream id), its tool calls (by call id), its outcome. */
export interface StepState {
  readonly texts: ReadonlyMap<string, TextPart | ReasoningPart>
  /** How much of each streaming text the store holds. */
  readonly stored: ReadonlyMap<string, number>
  readonly calls: ReadonlyMap<string, ToolPart>
  readonly outcome: StepOutcome
}

export const emptyStep: StepState = {
  texts: new Map(),
  stored: new Map(),
  calls: new Map(),
  outcome: { finish: "unknown", toolCalls: 0, usage: emptyUsage, cost: 0 }
}

/** What changes a step's state; ids and times are given (the processor draws them). */
export type StepEvent =
  | { readonly type: "text-start"; readonly key: string; readonly part: TextPart | ReasoningPart }
  /** `metadata`: the provider's metadata of a reasoning part, merged into what it has (a thinking signature comes last). */
  | { readonly type: "text-delta"; readonly key: string; readonly text: string; readonly metadata?: ProviderMetadata }
  /** The text was stored as it is now. */
  | { readonly type: "text-stored"; readonly key: string }
  | { readonly type: "text-end"; readonly key: string; readonly end: number; readonly metadata?: ProviderMetadata }
  /** A tool part, new or in a new state. */
  | { readonly type: "tool"; readonly part: ToolPart }
  | { readonly type: "tool-input-delta"; readonly callID: string; readonly delta: string }
  | { readonly type: "finish"; readonly outcome: StepOutcome }

/** Provider metadata by provider key, as the model stream gives it. */
export type ProviderMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>

/** A part with more provider metadata merged in, key by key (only reasoning parts keep it). */
export const withMetadata = <P extends TextPart | ReasoningPart>(part: P, metadata: ProviderMetadata | undefined): P => {
  if (metadata === undefined || part.type !== "reasoning") return part
  const merged: Record<string, Record<string, unknown>> = { ...part.providerMetadata }
  for (const [key, value] of Object.entries(metadata)) merged[key] = { ...merged[key], ...value }
  return { ...part, providerMetadata: merged }
}

const set = <K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> => new Map(map).set(key, value)

/** The step's state after an event. Pure: the processor stores and publishes what changed. */
export const foldStep = (state: StepState, event: StepEvent): StepState => {
  switch (event.type) {
    case "text-start":
      return { ...state, texts: set(state.texts, event.key, event.part) }
    case "text-delta": {
      const prev = state.texts.get(event.key)
      return prev ? { ...state, texts: set(state.texts, event.key, withMetadata({ ...prev, text: prev.text + event.text }, event.metadata)) } : state
    }
    case "text-stored": {
      const part = state.texts.get(event.key)
      return part ? { ...state, stored: set(state.stored, event.key, part.text.length) } : state
    }
    case "text-end": {
      const prev = state.texts.get(event.key)
      return prev
        ? { ...state, texts: set(state.texts, event.key, withMetadata({ ...prev, time: { start: prev.time?.start ?? 0, end: event.end } }, event.metadata)) }
        : state
    }
    case "tool":
      return { ...state, calls: set(state.calls, event.part.callID, event.part) }
    case "tool-input-delta": {
      const part = state.calls.get(event.callID)
      if (part?.state.status !== "pending") return state
      return { ...state, calls: set(state.calls, event.callID, { ...part, state: { ...part.state, raw: part.state.raw + event.delta } }) }
    }
    case "finish":
      return { ...state, outcome: event.outcome }
  }
}

/** What the step's finished tool calls spent on models of their own (`spendingOf` their metadata); undefined when nothing. */
export const delegatedBy = (calls: Iterable<ToolPart>): Spending | undefined => {
  let total: Spending | undefined
  for (const part of calls) {
    const spent = part.state.status === "completed" || part.state.status === "error" ? spendingOf(part.state.metadata) : undefined
    if (spent !== undefined) total = total === undefined ? spent : { usage: addUsage(total.usage, spent.usage), cost: total.cost + spent.cost }
  }
  return total
}

/** Whether a streaming text has grown enough since it was last stored to be stored again. */
export const textDue = (state: StepState, key: string): boolean => {
  const part = state.texts.get(key)
  if (!part) return false
  const stored = state.stored.get(key) ?? 0
  return part.text.length - stored >= Math.max(TEXT_STORE_MIN_GROWTH, stored / 4)
}

/**
 * The error state of a call cut off by an interrupt. What the tool reported while running
 * (bash: the last lines and where the full output is) is kept, so the model sees how far it got.
 */
export const interruptedState = (state: ToolPart["state"], end: number): ToolPart["state"] => {
  const start = state.status === "running" ? state.time.start : end
  const metadata = state.status === "running" ? state.metadata : undefined
  const tail = typeof metadata?.tail === "string" && metadata.tail.length > 0 ? `\nOutput so far (last lines):\n${metadata.tail}` : ""
  const file = typeof metadata?.outputPath === "string" ? `\nThe output so far is saved in ${metadata.outputPath}.` : ""
  return {
    status: "error",
    input: state.input,
    error: `The tool call was interrupted before it finished.${tail}${file}`,
    interrupted: true,
    ...(metadata ? { metadata } : {}),
    time: { start, end }
  }
}

/** A step cut off at `end`: its open tool calls interrupted and its unfinished texts ended, with the parts that changed. */
export const cutOff = (state: StepState, end: number): { readonly state: StepState; readonly changed: ReadonlyArray<Part> } => {
  const calls = new Map(state.calls)
  const changed: Array<Part> = []
  for (const [callID, part] of state.calls) {
    if (!isOpenTool(part)) continue
    const closed: ToolPart = { ...part, state: interruptedState(part.state, end) }
    calls.set(callID, closed)
    changed.push(closed)
  }
  for (const part of state.texts.values()) {
    if (part.time && part.time.end === undefined) changed.push({ ...part, time: { start: part.time.start, end } })
  }
  return { state: { ...state, calls }, changed }
}
