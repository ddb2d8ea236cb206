import { Box, Text } from "ink"
import { memo } from "react"
import type { ToolPart } from "@reins/domain"
import { diffOf, renderDiff } from "../../present/Diff.ts"
import { spinnerFrame } from "../../present/Spinner.ts"
import { toolLine, toolSubject } from "../../present/ToolSummary.ts"
import type { Style } from "../../present/Style.ts"
import { elapsed } from "../../present/Units.ts"
import { useTheme } from "./Theme.ts"

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
const withoutTrailer = (output: string) =>
  output.replace(/\n*(?:The command timed out after \d+ ms and was killed\.\n)?\(exit code [^)]*\)\s*$/, "")

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
  const tail = part.state.metadata?.["tail"]
  return typeof tail === "string" ? lastLines(tail, n) : []
}

/** The lines under a finished call's line: bash's last lines, an edit's diff, or (expanded) the output. */
export const resultLines = (part: ToolPart, expanded: boolean, style: Style): ReadonlyArray<string> => {
  const s = part.state
  if (s.status === "error") {
    const lines = s.error.split("\n")
    return expanded ? lines.slice(0, EXPANDED_LINES) : lines.length > 1 ? lines.slice(1, 1 + RESULT_TAIL_LINES) : []
  }
  if (s.status !== "completed") return []
  const diff = diffOf(s.metadata)
  if (diff !== undefined) return renderDiff(singleFileBody(diff), style, expanded ? EXPANDED_LINES : DIFF_LINES)
  if (part.tool === "write" && s.metadata["exists"] !== true && typeof s.input["content"] === "string") {
    // a new file without a diff in its metadata: all of it is added
    const added = s.input["content"].replace(/\n$/, "").split("\n")
    const max = expanded ? EXPANDED_LINES : DIFF_LINES
    const shown = added.slice(0, max).map((l) => style.green(`+${l}`))
    const hidden = added.length - shown.length
    return hidden > 0 ? [...shown, style.dim(`${style.glyphs.ellipsis} ${hidden} more line${hidden === 1 ? "" : "s"}`)] : shown
  }
  if (part.tool === "bash") {
    const output = withoutTrailer(s.output)
    return expanded ? lastLines(output, EXPANDED_LINES) : lastLines(output, RESULT_TAIL_LINES)
  }
  return expanded ? lastLines(s.output, EXPANDED_LINES) : []
}

export interface ToolViewProps {
  readonly part: ToolPart
  readonly expanded: boolean
  readonly now: number
  /** A permission question for this call is open. */
  readonly waiting?: boolean
  /** Printed for good (in the scrollback): a call still open there was cut off with its turn. */
  readonly final?: boolean
  readonly cwd?: string
}

/**
 * One tool call: while it runs, one line (spinner, name, subject, elapsed time) and bash's live
 * tail; when done, present's one-line result and under it bash's last lines or the diff; expanded,
 * the whole output.
 */
export const ToolView = memo((props: ToolViewProps) => {
  const { style, glyphs } = useTheme()
  const { part, now } = props
  const s = part.state
  const opts = props.cwd === undefined ? {} : { cwd: props.cwd }
  if (s.status === "pending" || s.status === "running") {
    const start = s.status === "running" ? s.time.start : undefined
    const frame = props.final ? style.yellow(style.glyphs.fail) : style.cyan(spinnerFrame(style, now))
    const subject = toolSubject(part, props.cwd)
    const detail = props.final
      ? style.yellow("no result (the turn ended)")
      : props.waiting
        ? style.yellow("waiting for your answer")
        : start === undefined
          ? style.dim(`preparing${style.glyphs.ellipsis}`)
          : style.dim(elapsed(now - start))
    const tail = props.final ? [] : liveTail(part)
    return (
      <Box flexDirection="column">
        <Text wrap="truncate-end">{`${frame} ${style.bold(part.tool)}${subject ? ` ${subject}` : ""} ${style.dim(style.glyphs.dot)} ${detail}`}</Text>
        {tail.map((line, i) => (
          <Text key={i} wrap="truncate-end">
            {`  ${style.dim(glyphs.quote)} ${style.dim(line)}`}
          </Text>
        ))}
      </Box>
    )
  }
  const lines = resultLines(part, props.expanded, style)
  const isDiff = s.status === "completed" && (diffOf(s.metadata) !== undefined || part.tool === "write")
  const marker = lines.length > 0 ? style.dim(props.expanded ? glyphs.expanded : glyphs.collapsed) : " "
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">{toolLine(part, style, opts)}</Text>
      {lines.map((line, i) => (
        <Text key={i} wrap={props.expanded ? "wrap" : "truncate-end"}>
          {`  ${i === 0 ? marker : " "} ${isDiff ? line : style.dim(line)}`}
        </Text>
      ))}
    </Box>
  )
})
