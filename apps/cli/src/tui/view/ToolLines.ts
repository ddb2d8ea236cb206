import type { ToolPart } from "@reins/domain"
import { diffOf, renderDiff } from "../../present/Diff.ts"
import { spinnerFrame } from "../../present/Spinner.ts"
import { toolLine, toolSubject } from "../../present/ToolSummary.ts"
import type { Style } from "../../present/Style.ts"
import { elapsed } from "../../present/Units.ts"
import { indent, truncate, wrap } from "./Lines.ts"
import { toAscii, type Theme } from "./Theme.ts"

/** Lines of a running bash command's output shown under its line. */
export const LIVE_TAIL_LINES = 5
/** Lines of a finished bash command's output shown when collapsed. */
export const RESULT_TAIL_LINES = 3
/** Diff lines shown when collapsed. */
export const DIFF_LINES = 20
/** Output lines shown when expanded (the rest is in the session). */
export const EXPANDED_LINES = 400

const lastLines = (text: string, n: number): ReadonlyArray<string> => {
  const lines = text.replace(/\s+$/, "").split("\n")
  return lines.length === 1 && lines[0] === "" ? [] : lines.slice(-n)
}

// bash's output ends with notes for the model ("(exit code 0)", a timeout); the line above says the same
const withoutTrailer = (output: string) => output.replace(/\n*(?:The command timed out after \d+ ms and was killed\.\n)?\(exit code [^)]*\)\s*$/, "")

/** A one-file diff without its file headers (the call's line names the file); several files keep theirs. */
const singleFileBody = (diff: string) => {
  const lines = diff.split("\n")
  if (lines.filter((l) => l.startsWith("--- ")).length !== 1) return diff
  const hunk = lines.findIndex((l) => l.startsWith("@@"))
  return hunk > 0 && lines.slice(0, hunk).every((l) => /^(--- |\+\+\+ |Index: |=+$|diff )/.test(l) || l === "") ? lines.slice(hunk).join("\n") : diff
}

/** What a running call's progress says, as lines: bash's last lines of output. */
export const liveTail = (part: ToolPart, n = LIVE_TAIL_LINES): ReadonlyArray<string> => {
  if (part.state.status !== "running") return []
  const tail = part.state.metadata?.tail
  return typeof tail === "string" ? lastLines(tail, n) : []
}

/** The session's plan as the todo tools hold it: one line per item, its state marked. */
const todoLines = (todos: ReadonlyArray<unknown>, style: Style): ReadonlyArray<string> =>
  todos.flatMap((t) => {
    if (typeof t !== "object" || t === null) return []
    const { content, status } = t as { content?: unknown; status?: unknown }
    if (typeof content !== "string") return []
    switch (status) {
      case "completed":
        return [style.dim(`${style.green("[x]")} ${content}`)]
      case "in_progress":
        return [style.bold(`${style.yellow("[~]")} ${content}`)]
      case "cancelled":
        return [style.dim(`[-] ${content}`)]
      default:
        return [`[ ] ${content}`]
    }
  })

/** The lines under a finished call's line: bash's last lines, an edit's diff, the plan of a todo tool, or (expanded) the output. */
export const resultLines = (part: ToolPart, expanded: boolean, style: Style): ReadonlyArray<string> => {
  const s = part.state
  if (s.status === "error") {
    const lines = s.error.split("\n")
    return expanded ? lines.slice(0, EXPANDED_LINES) : lines.length > 1 ? lines.slice(1, 1 + RESULT_TAIL_LINES) : []
  }
  if (s.status !== "completed") return []
  const diff = diffOf(s.metadata)
  if (diff !== undefined) return renderDiff(singleFileBody(diff), style, expanded ? EXPANDED_LINES : DIFF_LINES)
  if (part.tool === "write" && s.metadata.exists !== true && typeof s.input.content === "string") {
    // a new file without a diff in its metadata: all of it is added
    const added = s.input.content.replace(/\n$/, "").split("\n")
    const max = expanded ? EXPANDED_LINES : DIFF_LINES
    const shown = added.slice(0, max).map((l) => style.green(`+${l}`))
    const hidden = added.length - shown.length
    return hidden > 0 ? [...shown, style.dim(`${style.glyphs.ellipsis} ${hidden} more line${hidden === 1 ? "" : "s"}`)] : shown
  }
  if ((part.tool === "todowrite" || part.tool === "todoread") && Array.isArray(s.metadata.todos)) return todoLines(s.metadata.todos, style)
  if (part.tool === "bash") {
    const output = withoutTrailer(s.output)
    return expanded ? lastLines(output, EXPANDED_LINES) : lastLines(output, RESULT_TAIL_LINES)
  }
  return expanded ? lastLines(s.output, EXPANDED_LINES) : []
}

/** How a tool call is drawn. */
export interface ToolLineOptions {
  readonly theme: Theme
  readonly width: number
  readonly expanded: boolean
  /** The time now, for a running call's spinner and elapsed time. */
  readonly now: number
  /** A permission question for this call is open. */
  readonly waiting?: boolean
  /** Printed for good (in the scrollback): a call still open there was cut off with its turn. */
  readonly final?: boolean
  /** Paths inside it are shown relative. */
  readonly cwd?: string
}

/**
 * One tool call as lines: while it runs, one line (spinner, name, subject, elapsed time) and bash's
 * live tail; when done, present's one-line result and under it bash's last lines or the diff;
 * expanded, the whole output.
 */
export const toolLines = (part: ToolPart, o: ToolLineOptions): Array<string> => {
  const { style, glyphs } = o.theme
  const s = part.state
  const fit = (line: string) => truncate(o.theme.unicode ? line : toAscii(line), o.width, style.glyphs.ellipsis)
  if (s.status === "pending" || s.status === "running") {
    const start = s.status === "running" ? s.time.start : undefined
    const frame = o.final ? style.yellow(style.glyphs.fail) : style.cyan(spinnerFrame(style, o.now))
    const subject = toolSubject(part, o.cwd)
    const detail = o.final
      ? style.yellow("no result (the turn ended)")
      : o.waiting
        ? style.yellow("waiting for your answer")
        : start === undefined
          ? style.dim(`preparing${style.glyphs.ellipsis}`)
          : style.dim(elapsed(o.now - start))
    const tail = o.final ? [] : liveTail(part)
    return [
      fit(`${frame} ${style.bold(part.tool)}${subject ? ` ${subject}` : ""} ${style.dim(style.glyphs.dot)} ${detail}`),
      ...tail.map((line) => fit(`  ${style.dim(glyphs.quote)} ${style.dim(line)}`))
    ]
  }
  const lines = resultLines(part, o.expanded, style)
  const isDiff = s.status === "completed" && (diffOf(s.metadata) !== undefined || part.tool === "write")
  const marker = style.dim(o.expanded ? glyphs.expanded : glyphs.collapsed)
  const body = lines.map((line) => (isDiff ? line : style.dim(line)))
  // collapsed, each line is cut to the width; expanded, long lines wrap
  const shown = o.expanded
    ? body.flatMap((line) => wrap(line, Math.max(1, o.width - 4), true))
    : body.map((line) => truncate(line, Math.max(1, o.width - 4), style.glyphs.ellipsis))
  return [fit(toolLine(part, style, o.cwd === undefined ? {} : { cwd: o.cwd })), ...(shown.length > 0 ? indent(shown, `  ${marker} `, "    ") : [])]
}
