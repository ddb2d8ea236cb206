import { Cause, Effect, Exit, Option } from "effect"
import type { Event, TurnResult, Usage } from "@reins/domain"
import { jsonPrinter } from "./Output.ts"

/** How a run ended: its answer, a failure, Ctrl+C (or SIGTERM/SIGHUP), or its message queued for another process's turn. */
export type RunStatus = "ok" | "error" | "interrupted" | "queued"

/** Tokens of the turn's steps, sub-agents' included (as the text view's closing line counts them). */
export type TurnUsage = Pick<Usage, "input" | "output" | "reasoning" | "cacheRead" | "cacheWrite">

/**
 * The last line of `reins run --format json`, whatever ended the run: the status and exit code it
 * ends with, the final assistant text (what was written so far when it failed or was stopped), the
 * tokens and cost, and the session to continue.
 */
export interface TurnResultLine {
  readonly type: "turn.result"
  readonly status: RunStatus
  readonly exitCode: number
  readonly sessionID: string | null
  readonly text: string
  readonly steps: number
  readonly usage: TurnUsage
  readonly cost: number
  readonly error?: { readonly reason?: string; readonly message: string }
}

/** How a run ended, as `run` knows it: the turn's result, a failure's line and code, or an interrupt. */
export type RunEnd =
  | { readonly _tag: "Finished"; readonly turn: TurnResult }
  | { readonly _tag: "Queued" }
  | { readonly _tag: "Failed"; readonly message: string; readonly code: number }
  | { readonly _tag: "Interrupted" }

/**
 * Watches a run's events (every event `--format json` prints) and makes its `turn.result` line: the
 * steps' usage and cost, the session's newest assistant text and the error saved on it.
 */
export const turnResultRecorder = () => {
  let sessionID: string | undefined
  const steps = new Map<string, { readonly usage: Usage; readonly cost: number }>()
  const texts = new Map<string, { readonly messageID: string; readonly text: string }>()
  let lastAssistant: { readonly id: string; readonly error?: { readonly reason: string; readonly message: string } } | undefined

  const observe = (event: Event) => {
    if (event.type === "message.updated" && event.message.role === "assistant" && event.message.sessionID === sessionID) lastAssistant = event.message
    if (event.type !== "part.updated") return
    const part = event.part
    if (part.type === "step-finish") steps.set(part.id, { usage: part.usage, cost: part.cost })
    if (part.type === "text" && part.sessionID === sessionID) texts.set(part.id, { messageID: part.messageID, text: part.text })
  }

  const line = (end: RunEnd): TurnResultLine => {
    const spent = [...steps.values()]
    const sum = (pick: (step: { readonly usage: Usage; readonly cost: number }) => number) => spent.reduce((total, step) => total + pick(step), 0)
    const answer = lastAssistant === undefined ? "" : [...texts.values()].flatMap((t) => (t.messageID === lastAssistant!.id ? [t.text] : [])).join("")
    const saved = lastAssistant?.error
    const base = {
      type: "turn.result" as const,
      sessionID: (end._tag === "Finished" ? end.turn.sessionID : sessionID) ?? null,
      text: end._tag === "Finished" ? end.turn.text : answer,
      steps: spent.length,
      usage: {
        input: sum((s) => s.usage.input),
        output: sum((s) => s.usage.output),
        reasoning: sum((s) => s.usage.reasoning),
        cacheRead: sum((s) => s.usage.cacheRead),
        cacheWrite: sum((s) => s.usage.cacheWrite)
      },
      cost: sum((s) => s.cost)
    }
    switch (end._tag) {
      case "Finished": {
        const error = end.turn.assistant.error
        // a turn the loop ended on purpose (a doom loop) is a failed run
        return error
          ? { ...base, status: "error", exitCode: 1, error: { reason: error.reason, message: error.message } }
          : { ...base, status: "ok", exitCode: 0 }
      }
      case "Queued":
        return { ...base, status: "queued", exitCode: 0 }
      case "Failed":
        return { ...base, status: "error", exitCode: end.code, error: { ...(saved ? { reason: saved.reason } : {}), message: end.message } }
      case "Interrupted":
        return { ...base, status: "interrupted", exitCode: 130 }
    }
  }

  /** The run's own session, once known: its text and errors are the answer; sub-agents' are not. */
  const session = (id: string) => void (sessionID = id)

  return { observe, line, session }
}

/**
 * `reins run --format json` (local or attached): the printer, its events watched, and `report`, which
 * writes the `turn.result` line when the run's effect ends, as its exit code will say (a CliError's
 * code, 130 for an interrupt, else what `ended` was told).
 */
export const jsonRun = (out: (s: string) => void) => {
  const recorder = turnResultRecorder()
  const json = jsonPrinter(out)
  let end: RunEnd | undefined
  const report = <A, E extends { readonly message: string; readonly code: number }, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        const failed = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
        const how: RunEnd = Option.isSome(failed)
          ? { _tag: "Failed", message: failed.value.message, code: failed.value.code }
          : Exit.hasInterrupts(exit)
            ? { _tag: "Interrupted" }
            : (end ?? { _tag: "Failed", message: "the run ended without a result", code: 1 })
        json.finish()
        out(`${JSON.stringify(recorder.line(how))}\n`)
      })
    )
  return {
    printer: {
      ...json,
      handler: (event: Event) =>
        Effect.andThen(
          Effect.sync(() => recorder.observe(event)),
          json.handler(event)
        )
    },
    session: recorder.session,
    ended: (how: RunEnd) => void (end = how),
    report
  }
}

/** What `jsonRun` gives a run. */
export type JsonRun = ReturnType<typeof jsonRun>

/** `json.report` when the run prints json, else the run as it is. */
export const reportTurnResult =
  (json: JsonRun | undefined) =>
  <A, E extends { readonly message: string; readonly code: number }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    json ? json.report(effect) : effect
