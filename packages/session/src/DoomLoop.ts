import { Context } from "effect"
import { userFlag, type ToolPart } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"

/** One tool call of a turn as the guard sees it. */
export interface ToolCall {
  /** The tool part's id. */
  readonly id?: string
  readonly tool: string
  /** The arguments as canonical JSON (keys sorted), so equal inputs compare equal. */
  readonly input: string
  /** The output, or the error text; absent while the call has no outcome. */
  readonly result?: string
}

/** When a run of calls counts as a loop (config `doom_loop`). */
export interface DoomLoopLimits {
  /** The same call (tool + arguments) this many times in one turn, anywhere in it. */
  readonly identical: number
  /** A cycle of 2–4 calls repeated this many times at the end of the turn. */
  readonly cycles: number
  /** The same call getting the same result this many times. */
  readonly pairs: number
}

export const defaultDoomLoopLimits: DoomLoopLimits = { identical: 3, cycles: 3, pairs: 3 }

/** The doom-loop limits in force; the runtime sets them from `doom_loop` in config. */
export const DoomLoopSettings = Context.Reference<DoomLoopLimits>("reins/session/DoomLoop", {
  defaultValue: () => defaultDoomLoopLimits
})

/** A loop found in a turn: what kind, which tools, how many repeats, and one line saying so. */
export interface DoomLoop {
  readonly kind: "identical" | "cycle" | "pairs"
  readonly tools: ReadonlyArray<string>
  readonly count: number
  readonly message: string
}

/** JSON with object keys sorted at every level. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  ) ?? "null"

/**
 * The tool calls of the current turn in order: every tool part of every assistant message after
 * the last user message that starts a turn (a compaction's synthetic "continue" and a message
 * queued into the running turn do not). `start` identifies the turn, so a caller can tell when a
 * new one began.
 */
export const turnCalls = (messages: ReadonlyArray<MessageWithParts>): { readonly start: string | undefined; readonly calls: ReadonlyArray<ToolCall> } => {
  const startIndex = turnStart(messages)
  return { start: messages[startIndex]?.info.id, calls: callsAfter(messages, startIndex, toolCall) }
}

/** Where the current turn starts: its user message's index (-1 when there is none). */
const turnStart = (messages: ReadonlyArray<MessageWithParts>) =>
  messages.findLastIndex((m) => m.info.role === "user" && !userFlag(m.info, "compaction_continue") && !userFlag(m.info, "queued"))

/** The tool calls of the assistant messages after `startIndex`, in order. */
const callsAfter = (messages: ReadonlyArray<MessageWithParts>, startIndex: number, callOf: (part: ToolPart) => ToolCall) => {
  const calls: Array<ToolCall> = []
  for (let i = startIndex + 1; i < messages.length; i++) {
    const m = messages[i]!
    if (m.info.role !== "assistant") continue
    for (const part of m.parts) if (part.type === "tool") calls.push(callOf(part))
  }
  return calls
}

const toolCall = (part: ToolPart): ToolCall => {
  const state = part.state
  const result = state.status === "completed" ? state.output : state.status === "error" ? state.error : undefined
  return { id: part.id, tool: part.tool, input: canonical(state.input), ...(result !== undefined ? { result } : {}) }
}

// a call's key is made once per call object (a guard keeps its settled calls across steps)
const callKeys = new WeakMap<ToolCall, string>()
const callKey = (call: ToolCall) => {
  let key = callKeys.get(call)
  if (key === undefined) callKeys.set(call, (key = `${call.tool}\u0000${call.input}`))
  return key
}

const distinct = (tools: ReadonlyArray<string>) => [...new Set(tools)]

/** The loop that the call at `k` completes, looking back no further than `from`. */
const completedAt = (calls: ReadonlyArray<ToolCall>, keys: ReadonlyArray<string>, from: number, k: number, limits: DoomLoopLimits): DoomLoop | undefined => {
  const call = calls[k]!
  const key = keys[k]!
  let same = 0
  let sameResult = 0
  for (let i = from; i <= k; i++) {
    if (keys[i] !== key) continue
    same++
    if (call.result !== undefined && calls[i]!.result === call.result) sameResult++
  }
  if (call.result !== undefined && sameResult >= limits.pairs) {
    return {
      kind: "pairs",
      tools: [call.tool],
      count: sameResult,
      message: `The model called ${call.tool} with the same arguments ${sameResult} times in this turn and got the same result each time`
    }
  }
  if (same >= limits.identical) {
    return { kind: "identical", tools: [call.tool], count: same, message: `The model called ${call.tool} with the same arguments ${same} times in this turn` }
  }
  // period 1 is the identical rule; a period of 4 made of a repeated pair is found as period 2 first
  for (let period = 2; period <= 4; period++) {
    if (k - from + 1 < period * limits.cycles) continue
    const block = keys.slice(k - period + 1, k + 1)
    if (block.every((b) => b === block[0])) continue
    let start = k - period + 1
    while (start - 1 >= from && keys[start - 1] === keys[start - 1 + period]) start--
    const count = Math.floor((k - start + 1) / period)
    if (count < limits.cycles) continue
    const tools = calls.slice(k - period + 1, k + 1).map((c) => c.tool)
    return {
      kind: "cycle",
      tools: distinct(tools),
      count,
      message: `The model repeated the same cycle of ${period} calls (${tools.join(" → ")}) ${count} times in this turn`
    }
  }
  return undefined
}

/**
 * T6: the first loop completed by a call at or after `checked`, counting only calls from `from` on
 * (the point where a person last let the turn go on). Calls before `checked` were already judged,
 * so a loop is reported once.
 */
export const detect = (calls: ReadonlyArray<ToolCall>, limits: DoomLoopLimits = defaultDoomLoopLimits, from = 0, checked = from): DoomLoop | undefined => {
  const keys = calls.map(callKey)
  for (let k = Math.max(from, checked); k < calls.length; k++) {
    const found = completedAt(calls, keys, from, k, limits)
    if (found) return found
  }
  return undefined
}

/**
 * The guard of one turn: checks the calls added since the last check; `allow` restarts the count.
 * It keeps the turn's calls itself, so calls a compaction moved out of the messages it is given
 * (the loop reads from the last summary on) still count.
 */
export interface DoomLoopGuard {
  check(messages: ReadonlyArray<MessageWithParts>): DoomLoop | undefined
  allow(): void
}

export const makeDoomLoopGuard = (limits: DoomLoopLimits = defaultDoomLoopLimits): DoomLoopGuard => {
  let turn: string | undefined
  let calls = new Map<string, ToolCall>()
  let from = 0
  let checked = 0
  // the turn's calls that have their outcome, by part id: read from storage again at every step, a settled call is
  // not serialised again (its input and result no longer change), so a step costs what its own calls do
  let settled = new Map<string, ToolCall>()
  const callOf = (part: ToolPart) => {
    const known = settled.get(part.id)
    if (known !== undefined) return known
    const call = toolCall(part)
    if (part.state.status === "completed" || part.state.status === "error") settled.set(part.id, call)
    return call
  }
  return {
    check: (messages) => {
      const startIndex = turnStart(messages)
      const start = messages[startIndex]?.info.id
      // A newer turn start is a new turn; an older one only means the turn's own start was summarised.
      if (start !== undefined && (turn === undefined || start > turn)) {
        turn = start
        calls = new Map()
        settled = new Map()
        from = 0
        checked = 0
      }
      const current = callsAfter(messages, startIndex, callOf)
      // Map order is first insertion: a call keeps its place as its result arrives.
      for (const [i, call] of current.entries()) calls.set(call.id ?? `#${i}`, call)
      const all = [...calls.values()]
      const found = detect(all, limits, from, checked)
      checked = all.length
      return found
    },
    allow: () => {
      from = checked
    }
  }
}
