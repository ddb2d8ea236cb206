import type { ToolPart } from "@reins/domain"
import { diffOf, diffStat, formatStat } from "./Diff.ts"
import { plain, type Style } from "./Style.ts"
import { duration, elapsed, firstLine, plural } from "./Units.ts"

type Metadata = Readonly<Record<string, unknown>>

/** How a tool call stands, for its icon and colour: a non-zero bash exit is `failed`, a tool error `error`. */
export type ToolOutcome = "pending" | "running" | "ok" | "failed" | "error" | "interrupted"

const num = (metadata: Metadata | undefined, key: string) => {
  const value = metadata?.[key]
  return typeof value === "number" ? value : undefined
}

const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm

/** A path shown relative to `cwd` when it is inside it. */
const relative = (value: string, cwd: string | undefined) => (cwd !== undefined && value.startsWith(`${cwd}/`) ? value.slice(cwd.length + 1) : value)

/**
 * What a tool call acts on, in one short line: the command for bash, the file for edit/write/read,
 * the pattern for grep/glob, the files of a patch; paths inside `cwd` are shown relative to it.
 */
export const toolSubject = (part: ToolPart, cwd?: string, max = 80): string => {
  const input = part.state.input
  if (part.tool === "apply_patch" && typeof input.patchText === "string") {
    const files = [...input.patchText.matchAll(PATCH_FILE)].map((m) => relative(m[1]!.trim(), cwd))
    return files.length === 1 ? firstLine(files[0]!, max) : plural(files.length, "file", "files")
  }
  if ((part.tool === "grep" || part.tool === "glob") && typeof input.pattern === "string") {
    const where = typeof input.path === "string" ? ` in ${relative(input.path, cwd)}` : ""
    return firstLine(`${input.pattern}${where}`, max)
  }
  const value = input.command ?? input.filePath ?? input.pattern ?? input.path ?? input.url ?? input.query ?? input.description
  return typeof value === "string" ? firstLine(relative(value, cwd), max) : ""
}

/** The call's outcome: see `ToolOutcome`. */
export const toolOutcome = (part: ToolPart): ToolOutcome => {
  const s = part.state
  switch (s.status) {
    case "pending":
    case "running":
      return s.status
    case "error":
      return s.interrupted ? "interrupted" : "error"
    case "completed": {
      const exit = s.metadata.exitCode
      if (part.tool === "bash" && (exit !== 0 || s.metadata.timedOut === true)) return "failed"
      return "ok"
    }
  }
}

/** How long the call ran (finished calls), or has been running at `now`. */
export const toolDuration = (part: ToolPart, now?: number): number | undefined => {
  const s = part.state
  if (s.status === "completed" || s.status === "error") return s.time.end - s.time.start
  if (s.status === "running" && now !== undefined) return now - s.time.start
  return undefined
}

/** What a finished call found or changed, by tool: exit code, diff stat, match and file counts. */
const completedDetail = (part: ToolPart, metadata: Metadata, style: Style): Array<string> => {
  switch (part.tool) {
    case "bash": {
      const exit = metadata.exitCode
      const timedOut = metadata.timedOut === true
      const code = typeof exit === "number" ? `exit ${exit}` : "killed"
      const text = timedOut ? `timed out (${code})` : code
      return [exit === 0 && !timedOut ? style.green(text) : style.red(text)]
    }
    case "edit":
    case "write":
    case "apply_patch": {
      const diff = diffOf(metadata)
      const files = Array.isArray(metadata.files) && metadata.files.length > 1 ? [plural(metadata.files.length, "file", "files")] : []
      if (diff !== undefined) return [...files, formatStat(diffStat(diff), style)]
      if (part.tool === "write") return [metadata.exists === true ? "overwritten" : "created"]
      return files
    }
    case "grep": {
      const matches = num(metadata, "matches")
      const files = num(metadata, "files")
      if (matches === undefined) return []
      if (matches === 0) return ["no matches"]
      return [`${plural(matches, "match", "matches")}${files === undefined ? "" : ` in ${plural(files, "file", "files")}`}`]
    }
    case "glob": {
      const found = num(metadata, "count")
      return found === undefined ? [] : [found === 0 ? "no files" : plural(found, "file", "files")]
    }
    case "todowrite":
    case "todoread": {
      const todos = Array.isArray(metadata.todos) ? (metadata.todos as ReadonlyArray<{ readonly status?: unknown }>) : undefined
      return todos === undefined ? [] : [`${todos.filter((t) => t.status === "completed").length}/${todos.length} done`]
    }
    case "webfetch": {
      const bytes = num(metadata, "bytes")
      if (bytes === undefined) return []
      const size =
        bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : plural(bytes, "byte", "bytes")
      const type = metadata.contentType
      return [typeof type === "string" && type !== "" ? `${type}, ${size}` : size]
    }
    case "list": {
      const found = num(metadata, "count")
      return found === undefined ? [] : [plural(found, "entry", "entries")]
    }
    case "read": {
      const lines = num(metadata, "lines")
      const total = num(metadata, "totalLines")
      if (lines === undefined) return []
      return [total !== undefined && total > lines ? `${plural(lines, "line", "lines")} of ${total}` : plural(lines, "line", "lines")]
    }
    default:
      return []
  }
}

/**
 * The part after the subject: for a finished call what it did and how long it took, for a failed
 * one the first line of the error, for a running one the elapsed time (given `now`).
 */
export const toolDetail = (part: ToolPart, style: Style = plain, now?: number): string => {
  const s = part.state
  const took = toolDuration(part, now)
  const time = took === undefined ? [] : [s.status === "running" ? elapsed(took) : duration(took)]
  const sep = ` ${style.glyphs.dot} `
  switch (s.status) {
    case "pending":
      return ""
    case "running":
      return style.dim(time.join(sep))
    case "error":
      return s.interrupted
        ? style.yellow(`interrupted${took === undefined ? "" : ` after ${duration(took)}`}`)
        : [style.red(firstLine(s.error, 160, style.glyphs.ellipsis)), ...time.map(style.dim)].join(sep)
    case "completed":
      return [...completedDetail(part, s.metadata, style), ...time.map(style.dim)].join(sep)
  }
}

/** The icon of an outcome: ✓ green, ✗ red, interrupted yellow, running/pending a dim dot. */
export const toolIcon = (outcome: ToolOutcome, style: Style = plain): string => {
  switch (outcome) {
    case "ok":
      return style.green(style.glyphs.ok)
    case "failed":
    case "error":
      return style.red(style.glyphs.fail)
    case "interrupted":
      return style.yellow(style.glyphs.fail)
    case "pending":
    case "running":
      return style.dim(style.glyphs.running)
  }
}

export interface ToolLineOptions {
  /** Paths inside it are shown relative. */
  readonly cwd?: string
  /** The time now, for a running call's elapsed time. */
  readonly now?: number
  /** Replaces the icon (a spinner frame for a running call). */
  readonly icon?: string
}

/**
 * One line for a tool call: icon, name, subject and detail, e.g.
 * `✓ bash npm test · exit 0 · 1.2s`, `✓ edit src/a.ts · +3 −1 · 12ms`, `✗ read x.ts · File not found`.
 */
export const toolLine = (part: ToolPart, style: Style = plain, options: ToolLineOptions = {}): string => {
  const icon = options.icon ?? toolIcon(toolOutcome(part), style)
  const subject = toolSubject(part, options.cwd)
  const detail = toolDetail(part, style, options.now)
  const sep = ` ${style.glyphs.dot} `
  return `${icon} ${style.bold(part.tool)}${subject === "" ? "" : ` ${subject}`}${detail === "" ? "" : `${sep}${detail}`}`
}
