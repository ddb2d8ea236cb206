import { Effect } from "effect"
import type { Event, ToolPart, TurnResult } from "@reins/domain"
import { liveLine } from "./LiveLine.ts"
import { compactionSummary, count, outputNote } from "./Output.ts"
import type { Style } from "./present/Style.ts"
import { plainStream, visible } from "./present/Terminal.ts"
import { toolLine, toolSubject } from "./present/ToolSummary.ts"
import { duration, firstLine } from "./present/Units.ts"
import { addStep, emptyTotals, usageLine, type UsageTotals } from "./present/Usage.ts"

export interface TextPrinterOptions {
  readonly style: Style
  /** Draw the spinner on the error stream: a real terminal (not a pipe, not TERM=dumb). */
  readonly live: boolean
  /** stdout is a terminal too: no spinner while the answer's line is open there. */
  readonly outIsTTY: boolean
  /** Paths inside it are shown relative in tool lines. */
  readonly cwd: string
  readonly columns?: () => number
  readonly now?: () => number
}

/** A running call as the spinner names it: `bash npm test`. */
const runningLabel = (parts: ReadonlyArray<ToolPart>, cwd: string) => {
  const first = parts[0]
  if (first === undefined) return "thinking"
  const subject = toolSubject(first, cwd)
  const more = parts.length > 1 ? ` (+${parts.length - 1} more)` : ""
  return `${first.tool}${subject === "" ? "" : ` ${subject}`}${more}`
}

/** When a call started running (now for one still pending). */
const startOf = (part: ToolPart, now: number) => (part.state.status === "running" ? part.state.time.start : now)

/**
 * `reins run`'s text mode: the answer streams to stdout and nothing else goes there. On stderr: one
 * line per finished tool call (`✓ bash npm test · exit 0 · 1.2s`), status lines (retries,
 * compaction, grants), and on a terminal a spinner with the elapsed time while the model or a tool
 * is working, erased before anything else is written. The closing line and the interrupt hint
 * come from `closing` and `interrupted`.
 */
export const textPrinter = (out: (s: string) => void, err: (s: string) => void, options: TextPrinterOptions) => {
  const { style, cwd } = options
  const now = options.now ?? Date.now
  const started = now()
  // plain output: escape sequences removed, also when one is cut between two deltas
  const stripped = plainStream()
  const live = liveLine(err, { style, enabled: options.live, columns: options.columns ?? (() => 80), now })
  let atLineStart = true
  let printedText = false
  // the spinner is held while the answer's line is open on the same terminal
  let heldForText = false
  let totals: UsageTotals = emptyTotals
  const steps = new Set<string>()
  const running = new Map<string, ToolPart>()
  const finished = new Set<string>()

  // the answer is streaming: no spinner between its deltas on the same terminal (it would flicker at each new line)
  let streaming = false
  const syncTextHold = () => {
    const hold = options.outIsTTY && (streaming || !atLineStart)
    if (hold && !heldForText) live.hold()
    if (!hold && heldForText) live.release()
    heldForText = hold
  }
  const writeOut = (s: string) => {
    if (s.length === 0) return
    live.clear()
    // the model's text: escaped on a terminal, its control sequences removed elsewhere
    out(options.outIsTTY ? visible(s) : stripped.write(s))
    printedText = true
    atLineStart = s.endsWith("\n")
    syncTextHold()
  }
  // the answer's open line is ended before a status line or a tool call (the spinner may then show)
  const endLine = () => {
    if (atLineStart) return
    out("\n")
    atLineStart = true
    syncTextHold()
  }
  const writeErr = (s: string) => {
    live.clear()
    endLine()
    err(`${s}\n`)
  }
  const working = () => live.set(runningLabel([...running.values()], cwd))

  const onTool = (part: ToolPart) => {
    const s = part.state
    if (s.status === "pending" || s.status === "running") {
      if (finished.has(part.callID)) return
      running.set(part.callID, part)
      endLine()
      return working()
    }
    running.delete(part.callID)
    // a finished call is printed once, whatever repeats its state
    if (finished.has(part.callID)) return
    finished.add(part.callID)
    writeErr(toolLine(part, style, { cwd }))
    const note = s.status === "completed" ? outputNote(s.metadata) : undefined
    if (note) writeErr(`  ${style.dim(note)}`)
    working()
  }

  const handler = (event: Event) =>
    Effect.sync(() => {
      switch (event.type) {
        case "part.delta":
          // streamed answer text; synthetic text (the continuation after a compaction) is never streamed
          if (event.partType === "text") {
            streaming = true
            live.set("writing")
            writeOut(event.delta)
          }
          return
        case "part.updated": {
          const part = event.part
          // a text part is published whole when it ends: the spinner may come back (after the line is ended)
          if (part.type === "text" && part.time?.end !== undefined && streaming) {
            streaming = false
            syncTextHold()
          }
          if (part.type === "tool") {
            streaming = false
            return onTool(part)
          }
          if (part.type === "step-finish" && streaming) {
            streaming = false
            syncTextHold()
          }
          if (part.type === "step-finish" && !steps.has(part.id)) {
            steps.add(part.id)
            totals = addStep(totals, part.usage, part.cost)
            working()
          }
          return
        }
        case "session.status":
          if (event.status === "busy") working()
          if (event.status === "retry") {
            writeErr(
              style.yellow(
                `! ${firstLine(event.message ?? "provider error")}; retrying in ${Math.ceil((event.next ?? 0) / 100) / 10}s (attempt ${(event.attempt ?? 0) + 1})`
              )
            )
            live.set("waiting to retry")
          }
          return
        case "permission.replied":
          if (event.by === "policy" && event.reply === "reject") {
            writeErr(style.red(`${style.glyphs.fail} permission denied by the non-interactive policy (use --permission allow or --yolo)`))
          }
          if (event.granted)
            writeErr(style.green(`${style.glyphs.ok} always allowed for this ${event.persisted ? "project" : "session"}: ${event.granted.join(", ")}`))
          return
        case "compaction.started":
          writeErr(`compacting context (${event.reason}, ~${count(event.tokens)} tokens)…`)
          live.set("compacting")
          return
        case "compaction.completed":
          writeErr(`compacted: ${compactionSummary(event)}`)
          working()
          return
        default:
          return
      }
    })

  const spent = (): UsageTotals => totals
  return {
    handler,
    /** Starts the spinner: the turn is on its way to the model. */
    begin: working,
    /** Ends the answer's line and erases the spinner; may run twice (after the answer, then on the way out). */
    finish: () => {
      live.stop()
      if (heldForText) live.release()
      heldForText = false
      if (printedText && !atLineStart) out("\n")
      atLineStart = true
    },
    /** Stops the spinner while something else owns the terminal (a permission question). */
    hold: live.hold,
    release: live.release,
    /** Tokens and cost of the steps seen so far. */
    spent,
    /** The closing line: `session ses_… · 3 steps · 12k in / 830 out · $0.01 · cache 84% · 5.2s`. */
    closing: (turn: Pick<TurnResult, "sessionID" | "steps">) =>
      `${style.dim("session")} ${turn.sessionID} ${style.dim(`${style.glyphs.dot} `)}${usageLine({ ...totals, steps: turn.steps }, style, now() - started)}`,
    /** After Ctrl+C: the calls it cut off, what the turn cost so far, and how to continue it. */
    interrupted: (sessionID: string | undefined) => {
      const at = now()
      const cut = [...running.values()].map((part) =>
        toolLine(
          {
            ...part,
            state: { status: "error", input: part.state.input, error: "interrupted", interrupted: true, time: { start: startOf(part, at), end: at } }
          },
          style,
          { cwd }
        )
      )
      const spentSoFar = totals.steps === 0 ? "" : ` ${style.dim(`${style.glyphs.dot} `)}${usageLine(totals, style)}`
      const head = `${style.yellow(`${style.glyphs.fail} interrupted after ${duration(at - started)}`)}${spentSoFar}`
      const hint =
        sessionID === undefined
          ? []
          : [
              `Continue with: ${style.bold(`reins run --session ${sessionID} "…"`)}`,
              `           or: ${style.bold(`reins run -c "…"`)} ${style.dim("(the latest session here)")}`
            ]
      return [...cut, head, ...hint].join("\n")
    }
  }
}

export type TextPrinter = ReturnType<typeof textPrinter>
