import { Effect } from "effect"
import type { Event } from "@reins/domain"
import { count } from "./present/Units.ts"

type CompactionCompleted = Extract<Event, { type: "compaction.completed" }>

const kib = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`)

/** One line on what happened to a tool's output: reduced (by what) or cut, and where it all is. */
export const outputNote = (metadata: Record<string, unknown>) => {
  const r = metadata.reduction as { reducer: string; originalBytes: number; compactedBytes: number; reasons: ReadonlyArray<string> } | undefined
  const file = typeof metadata.outputPath === "string" ? `; full output in ${metadata.outputPath}` : ""
  if (r) return `↳ reduced by ${r.reducer}: ${kib(r.originalBytes)} → ${kib(r.compactedBytes)} (${r.reasons.join(", ")})${file}`
  if (metadata.truncated === true) return `↳ output cut to the limits${file}`
  return undefined
}

export { count } from "./present/Units.ts"

/** `1 message`, `2 messages`. */
export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** What a compaction did, in one phrase: `14,200 → 3,100 tokens; 12 messages summarised, 5 tool outputs pruned`. */
export const compactionSummary = (event: Pick<CompactionCompleted, "tokensBefore" | "tokensAfter" | "summarised" | "pruned">) =>
  `${count(event.tokensBefore)} → ${count(event.tokensAfter)} tokens; ${plural(event.summarised.length, "message", "messages")} summarised, ` +
  `${plural(event.pruned.length, "tool output", "tool outputs")} pruned`

type PartDelta = Extract<Event, { type: "part.delta" }>

/** `--format json` sends the deltas of one part that arrive within this window as one line. */
export const DELTA_WINDOW_MS = 100
/** …and sends them sooner once this many characters are waiting. */
export const DELTA_MAX_CHARS = 16 * 1024

/**
 * `--format json`: one event object per line on stdout (compaction events included). A model
 * streams a few characters per delta, so deltas of one part are joined for up to
 * `DELTA_WINDOW_MS`; any other event sends them first, so the order of events is kept.
 */
export const jsonPrinter = (write: (s: string) => void) => {
  let pending: PartDelta | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const line = (event: Event) => write(`${JSON.stringify(event)}\n`)
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    const held = pending
    pending = undefined
    if (held) line(held)
  }
  const handler = (event: Event) =>
    Effect.sync(() => {
      if (event.type !== "part.delta") {
        flush()
        return line(event)
      }
      if (pending && pending.partID === event.partID) {
        pending = { ...pending, delta: pending.delta + event.delta }
      } else {
        flush()
        pending = event
        timer = setTimeout(flush, DELTA_WINDOW_MS)
      }
      if (pending.delta.length >= DELTA_MAX_CHARS) flush()
    })
  return { handler, finish: flush }
}
