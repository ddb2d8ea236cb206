/** Helpers shared by the test-runner reducers: a report builder and failure-block trimming. */
import type { ReasonCode, Reduction } from "../../Reducer.ts"
import { hasLocation, toLines } from "../../Text.ts"

/** Lines longer than this are clipped in the middle (huge `actual:` dumps, minified sources). */
const MAX_LINE = 400
/** A run of unchanged diff context (or other plain lines) longer than this is collapsed. */
const RUN_LIMIT = 12
const RUN_KEEP = 4
/** A failure block longer than this (after trimming) has its middle cut. */
const BLOCK_LIMIT = 80
const BLOCK_HEAD = 40
const BLOCK_TAIL = 20
/** Location lines rescued from a cut middle, at most. */
const BLOCK_RESCUE = 12
/** Unrecognised lines that look like errors are kept, at most this many. */
const OTHER_LIMIT = 40

/**
 * How many lines, starting at `i`, form one stack frame that is not the user's (runner, standard
 * library, node_modules); 0 when `lines[i]` is not such a frame.
 */
export type FrameSpan = (lines: ReadonlyArray<string>, i: number) => number

export interface BlockOptions {
  readonly internalFrame?: FrameSpan
}

/** Collects what a reducer keeps, and renders it with a one-line header. */
export class Report {
  passed = 0
  skipped = 0
  readonly failures: Array<Array<string>> = []
  readonly summary: Array<string> = []
  readonly other: Array<string> = []
  readonly reasons = new Set<ReasonCode>()

  constructor(readonly runner: string) {}

  /** Notes that something was dropped, by default as noise. */
  drop(reason: ReasonCode = "noise_dropped") {
    this.reasons.add(reason)
  }

  /** Keeps one failure block, trimmed. */
  fail(block: ReadonlyArray<string>, options: BlockOptions = {}) {
    const trimmed = trimBlock(block, options, this.reasons)
    if (trimmed.length > 0) this.failures.push(trimmed)
  }

  /** A line the reducer does not understand: kept when it looks like an error, else dropped. */
  stray(line: string) {
    if (line.trim() === "") return
    if (this.other.length < OTHER_LIMIT && ERRORISH.test(line)) this.other.push(clip(line, this.reasons))
    else this.drop()
  }

  render(): Reduction {
    const parts: Array<string> = []
    if (this.passed > 0) {
      parts.push(`${this.passed} passing test${this.passed === 1 ? "" : "s"} not shown`)
      this.reasons.add("passing_tests_counted")
    }
    if (this.skipped > 0) parts.push(`${this.skipped} skipped not shown`)
    if (this.failures.length > 0) {
      parts.push(`${this.failures.length} failure${this.failures.length === 1 ? "" : "s"} kept`)
      this.reasons.add("failures_kept")
    }
    const out: Array<string> = [`${this.runner}: ${parts.length > 0 ? parts.join("; ") : "output reduced"}`]
    for (const group of alike(this.failures)) {
      const [first, ...rest] = group
      out.push("", ...first!)
      if (rest.length === 0) continue
      this.reasons.add("noise_dropped")
      out.push("", `(${rest.length} more failures like this one: only their lines that differ from it are shown)`)
      for (const block of rest) out.push(...block.filter((line, i) => line !== first![i]))
    }
    if (this.other.length > 0) out.push("", ...this.other)
    if (this.summary.length > 0) out.push("", ...this.summary.map((l) => clip(l, this.reasons)))
    const order: ReadonlyArray<ReasonCode> = ["passing_tests_counted", "failures_kept", "stack_trimmed", "middle_dropped", "noise_dropped"]
    const reasons = [...order.filter((r) => this.reasons.has(r)), ...[...this.reasons].filter((r) => !order.includes(r))]
    return { text: `${squeezeBlank(out).join("\n")}\n`, reasons }
  }
}

/** Failures of the same shape this many times or more are shown as one and what the others change. */
const ALIKE_MIN = 3

/** A line with its values (numbers, quoted strings) blanked: two failures whose lines all match differ only in values. */
const shapeOf = (line: string) => line.replace(/\d+(?:\.\d+)?/g, "#").replace(/'[^'\n]*'|"[^"\n]*"/g, "'…'")

/**
 * The failures in groups, in the order each group first appears: blocks of the same length whose every line has
 * the same shape (a parametrized test failing for each value) form one group when there are ALIKE_MIN or more;
 * any other block is a group of its own. No line is lost: the others' lines are shown where they differ.
 */
const alike = (failures: ReadonlyArray<ReadonlyArray<string>>): Array<Array<ReadonlyArray<string>>> => {
  const byShape = new Map<string, Array<ReadonlyArray<string>>>()
  for (const block of failures) {
    const key = block.map(shapeOf).join("\n")
    const group = byShape.get(key)
    if (group) group.push(block)
    else byShape.set(key, [block])
  }
  return [...byShape.values()].flatMap((group) => (group.length >= ALIKE_MIN ? [group] : group.map((block) => [block])))
}

const ERRORISH =
  /\b(?:error|Error|ERROR|ERR_[A-Z_]+|panic|panicked|fatal|Fatal|FATAL|FAIL|FAILED|Exception|Traceback|Unhandled|Segmentation fault|timed? ?out)\b/

/** Removes blank lines at both ends and runs of blank lines. */
export const squeezeBlank = (lines: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (const line of lines) {
    const blank = line.trim() === ""
    if (blank && (out.length === 0 || out[out.length - 1]!.trim() === "")) continue
    out.push(blank ? "" : line)
  }
  while (out.length > 0 && out[out.length - 1] === "") out.pop()
  return out
}

/** Clips an over-long line in the middle. */
export const clip = (line: string, reasons?: Set<ReasonCode>) => {
  if (line.length <= MAX_LINE) return line
  reasons?.add("middle_dropped")
  return `${line.slice(0, 300)}…[${line.length - 380} chars]…${line.slice(line.length - 80)}`
}

/** A diff line: `- x`, `+ x`, `? ^`, also behind pytest's `E` prefix or indentation. */
export const isDiffLine = (line: string) => /^(?:E\s)?\s*(?:[-+?](?:\s|$)|[-+]\S)/.test(line) && !/^\s*[-+]{3}\s/.test(line)

/** Lines that carry the failure's message, never collapsed as context. */
const MESSAGE =
  /error|Error|ERROR|assert|Assert|expect|Expect|[Rr]eceived|[Aa]ctual|[Dd]iffer|!==?|===?|panic|want|got\b|left|right|Exception|FAIL|[Ff]ail|[Mm]ismatch|^\s*(?:at |>|\^|---- |thread ')/

/** Plain lines are neither locations, diff lines nor message lines: unchanged context, dumps, blank lines. */
const isPlain = (line: string) => !hasLocation(line) && !isDiffLine(line) && !MESSAGE.test(line)

/**
 * Trims one failure block: internal stack frames out, long lines clipped, long runs of plain
 * lines (unchanged diff context) collapsed, and a still-huge block cut in the middle, keeping
 * its first lines (name, message) and the locations from the cut part.
 */
export const trimBlock = (block: ReadonlyArray<string>, options: BlockOptions, reasons: Set<ReasonCode>): Array<string> => {
  let lines = squeezeBlank(block.map((l) => clip(l, reasons)))
  if (options.internalFrame) lines = dropFrames(lines, options.internalFrame, reasons)
  lines = collapseRuns(lines, reasons)
  if (lines.length > BLOCK_LIMIT) lines = cutKeepingLocations(lines, reasons)
  return lines
}

const dropFrames = (lines: ReadonlyArray<string>, span: FrameSpan, reasons: Set<ReasonCode>) => {
  const out: Array<string> = []
  let i = 0
  while (i < lines.length) {
    let dropped = 0
    let n: number
    let last = ""
    const indent = /^\s*/.exec(lines[i]!)![0]
    while (i < lines.length && (n = span(lines, i)) > 0) {
      last = lines[i + n - 1]!
      i += n
      dropped++
    }
    if (dropped > 0) {
      reasons.add("stack_trimmed")
      // node prints the error's own properties after the last frame: `at x (node:…) {`
      const opens = / \{$/.test(last) ? " {" : ""
      out.push(`${indent}… ${dropped} internal frame${dropped === 1 ? "" : "s"}${opens}`)
      continue
    }
    out.push(lines[i]!)
    i++
  }
  return out
}

const collapseRuns = (lines: ReadonlyArray<string>, reasons: Set<ReasonCode>) => {
  const out: Array<string> = []
  let i = 0
  while (i < lines.length) {
    if (!isPlain(lines[i]!)) {
      out.push(lines[i]!)
      i++
      continue
    }
    let j = i
    while (j < lines.length && isPlain(lines[j]!)) j++
    const run = lines.slice(i, j)
    if (run.length > RUN_LIMIT) {
      reasons.add("middle_dropped")
      const indent = /^(?:E\s)?\s*/.exec(run[RUN_KEEP]!)![0]
      out.push(...run.slice(0, RUN_KEEP), `${indent}… ${run.length - 2 * RUN_KEEP} unchanged lines …`, ...run.slice(run.length - RUN_KEEP))
    } else out.push(...run)
    i = j
  }
  return out
}

const cutKeepingLocations = (lines: ReadonlyArray<string>, reasons: Set<ReasonCode>) => {
  reasons.add("middle_dropped")
  const middle = lines.slice(BLOCK_HEAD, lines.length - BLOCK_TAIL)
  const rescued = middle.filter(hasLocation).slice(0, BLOCK_RESCUE)
  return [
    ...lines.slice(0, BLOCK_HEAD),
    `…${middle.length - rescued.length} lines truncated…`,
    ...rescued,
    ...(rescued.length > 0 ? ["…"] : []),
    ...lines.slice(lines.length - BLOCK_TAIL)
  ]
}

/** JavaScript stack frames that are not the user's: node internals, node_modules, native code. */
export const jsInternalFrame: FrameSpan = (lines, i) => (lines[i]!.length < 1000 && JS_INTERNAL.test(lines[i]!) ? 1 : 0)
const JS_INTERNAL =
  /^\s*at (?:.*[(\s])?(?:node:|internal\/(?:modules|process|timers|main|streams|test_runner|util)\/|<anonymous>\)?(?: \{)?$|native\)?(?: \{)?$|\[native code\]|[^\s()]*node_modules[\\/])|^\s*at (?:async )?Promise\.(?:all|allSettled|any|race) \(index \d+\)$/

/**
 * Drops the context lines of a code frame, keeping the line that failed and its caret.
 * `frame` matches a code-frame line; `caret` the caret line under the failing line; `marked`,
 * when given, the failing line itself (jest's `> 18 |`).
 */
export const trimCodeFrame = (block: ReadonlyArray<string>, frame: RegExp, caret: RegExp, reasons: Set<ReasonCode>, marked?: RegExp): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < block.length; i++) {
    const line = block[i]!
    if (caret.test(line)) {
      out.push(line)
      continue
    }
    if (frame.test(line)) {
      const next = block[i + 1]
      if (marked?.test(line) || (next !== undefined && caret.test(next))) out.push(line)
      else reasons.add("noise_dropped")
      continue
    }
    out.push(line)
  }
  return out
}

/** Whether any of the last lines (within the last 16 KB) matches: where runners print summaries. */
export const sniffEnd = (text: string, pattern: RegExp) => {
  const tail = text.length > 16_384 ? text.slice(text.length - 16_384) : text
  return toLines(tail).some((line) => pattern.test(line))
}
