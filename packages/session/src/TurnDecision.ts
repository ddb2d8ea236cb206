import { compacted, isStalled, noStall, nothingCompacted, stepFitted, stepOverflowed, type Stall } from "@reins/compaction"
import { userFlag, type TurnResult } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"
import type { BudgetStop } from "./Budget.ts"
import type { DoomLoop } from "./DoomLoop.ts"
import type { PromptError } from "./Errors.ts"

/**
 * The turn's decisions, pure: what happened is folded into a `TurnState` (`foldTurn`), and the
 * next move is decided from that state and the session as stored (`decide`). The loop
 * (`TurnLoop.ts`) does the moves and reports what happened; nothing here does I/O.
 */

/** What the turn did last, as far as its next move depends on it. */
export type LastAction =
  | { readonly _tag: "Started" }
  /** A step ran; `overflowed`: its usage says the next request would not fit; `tokens`: that usage. */
  | { readonly _tag: "Stepped"; readonly final: boolean; readonly overflowed: boolean; readonly tokens: number }
  /** A step failed; `tokens`: the estimate of the messages it sent, `request`: of all it sent. */
  | { readonly _tag: "StepFailed"; readonly error: PromptError; readonly tokens: number; readonly request: number }
  /** A compaction ran; `failed`: the provider's overflow that nothing could be summarised for. */
  | { readonly _tag: "Compacted"; readonly wrote: boolean; readonly failed?: PromptError }
  /** The turn looked done but a message was queued meanwhile: the session was not let go. */
  | { readonly _tag: "ReleaseRefused" }
  /** A doom loop was found and the person let the turn go on. */
  | { readonly _tag: "LoopAllowed" }
  /** A doom loop was found and the turn may not go on. */
  | { readonly _tag: "LoopRejected"; readonly loop: DoomLoop }

/** What the turn carries from one move to the next. */
export interface TurnState {
  /** Steps taken (each a model call). */
  readonly steps: number
  /** The step limit (T1), when set: the last allowed step is asked for an answer without tools. */
  readonly maxSteps: number | undefined
  /** Whether a provider's "context too long" is compacted (else it is the turn's error). */
  readonly autoCompact: boolean
  /** Compactions in a row after which the next request still overflows end the turn with a clear error instead of looping. */
  readonly stall: Stall
  /** A step of this turn succeeded: a compaction then continues the work instead of replaying the request. */
  readonly worked: boolean
  /** Queued messages this run has read. */
  readonly queuedSeen: number
  /** User messages that appeared since the last step (T5): the next step shows them last. */
  readonly fresh: ReadonlySet<string>
  readonly last: LastAction
}

/** What happened, as the loop reports it. */
export type TurnFact =
  /** The window was read: the user messages new to the turn, and how many of them were queued. */
  | { readonly _tag: "Read"; readonly fresh: ReadonlyArray<string>; readonly queued: number }
  | { readonly _tag: "Stepped"; readonly final: boolean; readonly overflowed: boolean; readonly tokens: number }
  | { readonly _tag: "StepFailed"; readonly error: PromptError; readonly tokens: number; readonly request: number }
  | { readonly _tag: "Compacted"; readonly wrote: boolean }
  | { readonly _tag: "ReleaseRefused" }
  | { readonly _tag: "LoopAllowed" }
  | { readonly _tag: "LoopRejected"; readonly loop: DoomLoop }

/** Why a turn stops other than by finishing its work. */
export type StopReason =
  /** The last allowed step ran (its answer is the turn's result). */
  | { readonly _tag: "MaxSteps" }
  /** A doom loop the turn may not go on with (stored on its last message). */
  | { readonly _tag: "DoomLoop"; readonly loop: DoomLoop }
  /** Compacting does not make the request fit: `tokens` it still needs. */
  | { readonly _tag: "Stalled"; readonly tokens: number }
  /** A step (or the compaction after it) failed with this error. */
  | { readonly _tag: "Failed"; readonly error: PromptError }
  /** A spend cap was reached: no further model call. */
  | { readonly _tag: "Budget"; readonly stop: BudgetStop }

/** The turn's next move. */
export type Move =
  /** Take a step; `final`: the last the step limit allows. */
  | { readonly _tag: "Step"; readonly final: boolean }
  /** Compact the session and write the message the turn goes on with. */
  | { readonly _tag: "Compact"; readonly reason: "overflow" | "provider"; readonly tokens: number; readonly progressed: boolean }
  /** Ask whether the turn may go on with the loop found in its calls (T6). */
  | { readonly _tag: "AskLoop"; readonly loop: DoomLoop }
  /** The work is done (`answered`, or its last message ended with an error, e.g. `interrupted`): let the session go. */
  | { readonly _tag: "Finish"; readonly why: "answered" | "error" | "interrupted" }
  | { readonly _tag: "Stop"; readonly why: StopReason }

/** What `decide` reads besides the state: the window as stored, a loop found in its calls since the last look, a spend cap reached. */
export interface TurnWindow {
  readonly messages: ReadonlyArray<MessageWithParts>
  readonly loop?: DoomLoop | undefined
  readonly budget?: BudgetStop | undefined
}

/** The state of a turn that has not moved yet. */
export const startTurn = (settings: { readonly maxSteps?: number | undefined; readonly autoCompact: boolean }): TurnState => ({
  steps: 0,
  maxSteps: settings.maxSteps,
  autoCompact: settings.autoCompact,
  stall: noStall,
  worked: false,
  queuedSeen: 0,
  fresh: new Set(),
  last: { _tag: "Started" }
})

/**
 * T1: the turn ends only when the newest assistant message is newer than the last user message,
 * finished for a reason other than tool calls, and made no tool calls.
 */
export const turnDone = (messages: ReadonlyArray<MessageWithParts>) => {
  const lastUser = messages.findLast((m) => m.info.role === "user")
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant") return false
  if (lastUser && last.info.id < lastUser.info.id) return false
  if (last.info.error) return true
  if (last.parts.some((p) => p.type === "tool")) return false
  return last.info.finish !== undefined && last.info.finish !== "tool-calls" && last.info.finish !== "unknown"
}

/** The result of a finished turn: its last assistant message and that message's text. */
export const turnResult = (sessionID: string, steps: number, messages: ReadonlyArray<MessageWithParts>): TurnResult | undefined => {
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant") return undefined
  const text = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
  return { sessionID, steps, assistant: last.info, text }
}

/**
 * T5: the user messages of `messages` the turn has not seen (`known` gains them), and how many of
 * those were queued by another caller.
 */
export const freshUsers = (
  messages: ReadonlyArray<MessageWithParts>,
  known: Set<string>
): { readonly fresh: ReadonlyArray<string>; readonly queued: number } => {
  const fresh: Array<string> = []
  let queued = 0
  for (const m of messages) {
    if (m.info.role !== "user" || known.has(m.info.id)) continue
    known.add(m.info.id)
    fresh.push(m.info.id)
    if (userFlag(m.info, "queued")) queued++
  }
  return { fresh, queued }
}

const isOverflow = (error: PromptError) => error._tag === "ProviderError" && error.reason === "overflow"

/** The turn's state after something happened. */
export const foldTurn = (state: TurnState, fact: TurnFact): TurnState => {
  switch (fact._tag) {
    case "Read":
      return fact.fresh.length === 0 ? state : { ...state, fresh: new Set([...state.fresh, ...fact.fresh]), queuedSeen: state.queuedSeen + fact.queued }
    case "Stepped":
      return {
        ...state,
        steps: state.steps + 1,
        fresh: new Set(),
        worked: true,
        stall: fact.overflowed ? stepOverflowed(state.stall) : stepFitted(state.stall),
        last: fact
      }
    case "StepFailed":
      return {
        ...state,
        steps: state.steps + 1,
        fresh: new Set(),
        stall: isOverflow(fact.error) && state.autoCompact ? stepOverflowed(state.stall) : state.stall,
        last: fact
      }
    case "Compacted": {
      const failed = !fact.wrote && state.last._tag === "StepFailed" ? state.last.error : undefined
      return {
        ...state,
        stall: fact.wrote ? compacted(state.stall) : nothingCompacted(state.stall),
        last: { _tag: "Compacted", wrote: fact.wrote, ...(failed ? { failed } : {}) }
      }
    }
    case "ReleaseRefused":
    case "LoopAllowed":
    case "LoopRejected":
      return { ...state, last: fact }
  }
}

/** Why a done turn ended: its last assistant message's error, if any. */
const finishedWhy = (messages: ReadonlyArray<MessageWithParts>): "answered" | "error" | "interrupted" => {
  const last = messages.findLast((m) => m.info.role === "assistant")
  const error = last?.info.role === "assistant" ? last.info.error : undefined
  return error === undefined ? "answered" : error.reason === "interrupted" ? "interrupted" : "error"
}

/** The turn's next move, from its state and the window as stored now: no model call (a step or a compaction) once a cap is reached. */
export const decide = (state: TurnState, window: TurnWindow): Move => {
  const move = nextMove(state, window)
  return window.budget !== undefined && (move._tag === "Step" || move._tag === "Compact")
    ? { _tag: "Stop", why: { _tag: "Budget", stop: window.budget } }
    : move
}

const nextMove = (state: TurnState, window: TurnWindow): Move => {
  const last = state.last
  switch (last._tag) {
    case "StepFailed":
      // A provider's "context too long" is compacted, never retried as is (T7, T23).
      if (isOverflow(last.error) && state.autoCompact) {
        return isStalled(state.stall)
          ? { _tag: "Stop", why: { _tag: "Stalled", tokens: last.request } }
          : { _tag: "Compact", reason: "provider", tokens: last.tokens, progressed: state.worked }
      }
      return { _tag: "Stop", why: { _tag: "Failed", error: last.error } }
    case "Compacted":
      // With nothing to summarise (one huge first message) the provider's own error says it best.
      if (last.failed) return { _tag: "Stop", why: { _tag: "Failed", error: last.failed } }
      break
    case "Stepped":
      if (last.final) return { _tag: "Stop", why: { _tag: "MaxSteps" } }
      // A finished turn leaves compaction to the next one: nothing is waiting to continue.
      if (last.overflowed && !turnDone(window.messages)) {
        return isStalled(state.stall)
          ? { _tag: "Stop", why: { _tag: "Stalled", tokens: last.tokens } }
          : { _tag: "Compact", reason: "overflow", tokens: last.tokens, progressed: state.worked }
      }
      break
    case "LoopRejected":
      return { _tag: "Stop", why: { _tag: "DoomLoop", loop: last.loop } }
  }
  // Done once a step answered and nothing new was queued since it (else the turn answers that too).
  if (state.steps > 0 && state.fresh.size === 0 && turnDone(window.messages)) return { _tag: "Finish", why: finishedWhy(window.messages) }
  if (state.steps > 0 && window.loop !== undefined && last._tag !== "LoopAllowed") return { _tag: "AskLoop", loop: window.loop }
  return { _tag: "Step", final: state.maxSteps !== undefined && state.steps + 1 >= state.maxSteps }
}
