import { Result } from "effect"
import type { ToolError } from "../Tool.ts"
import { fail } from "./Files.ts"

/** One line of a hunk: context (` `), removed (`-`) or added (`+`), without its prefix. */
export interface HunkLine {
  readonly kind: " " | "-" | "+"
  readonly text: string
}

/** One hunk of an update. */
export interface Hunk {
  /** The text after `@@`, sought as one line before the hunk's own lines. */
  readonly header?: string
  readonly lines: ReadonlyArray<HunkLine>
  /** `*** End of File` followed the hunk: it must match at the end of the file. */
  readonly endOfFile: boolean
  /** 1-based line of the patch where the hunk starts, for messages. */
  readonly line: number
}

/** One file operation of a patch; paths are as written in the patch. */
export type FileOp =
  | { readonly type: "add"; readonly path: string; readonly lines: ReadonlyArray<string> }
  | { readonly type: "delete"; readonly path: string }
  | { readonly type: "update"; readonly path: string; readonly movePath?: string; readonly hunks: ReadonlyArray<Hunk> }

const BEGIN = "*** Begin Patch"
const END = "*** End Patch"
const ADD = "*** Add File: "
const DELETE = "*** Delete File: "
const UPDATE = "*** Update File: "
const MOVE = "*** Move to: "
const END_OF_FILE = "*** End of File"

const VALID_HEADERS = `Valid file headers are "${ADD}<path>", "${DELETE}<path>" and "${UPDATE}<path>" (optionally followed by "${MOVE}<path>"); inside an update, hunks start with "@@" (optionally "@@ <a line of the file>") and every hunk line starts with " " (context), "-" (removed) or "+" (added).`

const RESEND = "Fix the patch and send it again; nothing was changed."

const isMarker = (trimmed: string) =>
  trimmed === BEGIN ||
  trimmed === END ||
  trimmed === END_OF_FILE ||
  trimmed.startsWith(ADD) ||
  trimmed.startsWith(DELETE) ||
  trimmed.startsWith(UPDATE) ||
  trimmed.startsWith(MOVE)

const isHunkHeader = (trimmed: string) => trimmed === "@@" || trimmed.startsWith("@@ ")

/**
 * The text after `@@`, or undefined for a bare `@@`. A unified-diff range (`@@ -3,4 +3,5 @@ fn x`)
 * is dropped, keeping only the section text after it.
 */
const headerText = (trimmed: string): string | undefined => {
  const rest = trimmed.slice(2).trim()
  const range = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$/.exec(rest)
  const text = range ? range[1]!.trim() : rest
  return text === "" ? undefined : text
}

const takePath = (trimmed: string, prefix: string, lineNo: number): Result.Result<string, ToolError> => {
  const p = trimmed.slice(prefix.length).trim()
  return p === "" ? Result.fail(fail(`Line ${lineNo} of the patch, "${trimmed}", has no path. ${RESEND}`)) : Result.succeed(p)
}

/** The patch body between `*** Begin Patch` and `*** End Patch` (or the end of the text). */
const body = (text: string): Result.Result<{ lines: ReadonlyArray<string>; first: number }, ToolError> => {
  if (text.trim() === "") {
    return Result.fail(fail(`The patch is empty. Send a patch that starts with "${BEGIN}", lists file operations and ends with "${END}".`))
  }
  const all = text.split(/\r?\n/)
  const begin = all.findIndex((l) => l.trim() === BEGIN)
  if (begin === -1) {
    return Result.fail(fail(`The patch does not contain a "${BEGIN}" line. Start the patch with "${BEGIN}" and end it with "${END}".`))
  }
  const endOffset = all.slice(begin + 1).findIndex((l) => l.trim() === END)
  let end = endOffset === -1 ? all.length : begin + 1 + endOffset
  if (endOffset === -1) {
    // Tolerate a missing End: drop trailing blank lines and a heredoc terminator (`apply_patch <<'EOF'` … `EOF`).
    const opener = begin > 0 ? /<<-?\s*['"]?(\w+)['"]?/.exec(all[begin - 1]!) : null
    while (end > begin + 1 && all[end - 1]!.trim() === "") end--
    if (opener && end > begin + 1 && all[end - 1]!.trim() === opener[1]) end--
  }
  return Result.succeed({ lines: all.slice(begin + 1, end), first: begin + 2 })
}

/** Parses a patch in the Codex `*** Begin Patch` format into file operations, or the first error found. */
export const parsePatch = (text: string): Result.Result<ReadonlyArray<FileOp>, ToolError> => {
  const parsed = body(text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const { lines, first } = parsed.success
  const ops: Array<FileOp> = []
  let i = 0
  const lineNo = (index: number) => first + index
  const invalid = (index: number, what: string) =>
    Result.fail(fail(`Invalid ${what} at line ${lineNo(index)} of the patch: "${lines[index]}". ${VALID_HEADERS} ${RESEND}`))

  while (i < lines.length) {
    const trimmed = lines[i]!.trim()
    if (trimmed === "") {
      i++
      continue
    }
    if (trimmed.startsWith(ADD)) {
      const p = takePath(trimmed, ADD, lineNo(i))
      if (Result.isFailure(p)) return Result.fail(p.failure)
      i++
      const added: Array<string> = []
      while (i < lines.length) {
        const line = lines[i]!
        if (line.startsWith("+")) {
          added.push(line.slice(1))
          i++
          continue
        }
        // A blank line between `+` lines is an empty line of the file; before the next header it is spacing.
        if (line.trim() === "") {
          let next = i
          while (next < lines.length && lines[next]!.trim() === "") next++
          if (next < lines.length && lines[next]!.startsWith("+")) {
            for (; i < next; i++) added.push("")
            continue
          }
        }
        break
      }
      ops.push({ type: "add", path: p.success, lines: added })
      continue
    }
    if (trimmed.startsWith(DELETE)) {
      const p = takePath(trimmed, DELETE, lineNo(i))
      if (Result.isFailure(p)) return Result.fail(p.failure)
      ops.push({ type: "delete", path: p.success })
      i++
      continue
    }
    if (trimmed.startsWith(UPDATE)) {
      const p = takePath(trimmed, UPDATE, lineNo(i))
      if (Result.isFailure(p)) return Result.fail(p.failure)
      const updateLine = lineNo(i)
      i++
      let movePath: string | undefined
      if (i < lines.length && lines[i]!.trim().startsWith(MOVE)) {
        const m = takePath(lines[i]!.trim(), MOVE, lineNo(i))
        if (Result.isFailure(m)) return Result.fail(m.failure)
        movePath = m.success
        i++
      }
      const hunks = parseHunks(lines, i, lineNo, p.success)
      if (Result.isFailure(hunks)) return Result.fail(hunks.failure)
      i = hunks.success.next
      if (hunks.success.hunks.length === 0) {
        return Result.fail(
          fail(
            `The update of ${p.success} (line ${updateLine} of the patch) has no hunks. Add at least one hunk of " ", "-" and "+" lines, or remove the operation. ${RESEND}`
          )
        )
      }
      ops.push({ type: "update", path: p.success, ...(movePath !== undefined ? { movePath } : {}), hunks: hunks.success.hunks })
      continue
    }
    return invalid(i, "file operation header")
  }
  if (ops.length === 0) {
    return Result.fail(fail(`The patch contains no file operations. ${VALID_HEADERS}`))
  }
  return Result.succeed(ops)
}

interface Building {
  header?: string
  lines: Array<HunkLine>
  endOfFile: boolean
  line: number
}

/** The hunks of one update, from `start` up to the next file header. */
const parseHunks = (
  lines: ReadonlyArray<string>,
  start: number,
  lineNo: (index: number) => number,
  file: string
): Result.Result<{ hunks: ReadonlyArray<Hunk>; next: number }, ToolError> => {
  const hunks: Array<Building> = []
  let current: Building | undefined
  const open = (index: number, header?: string) => {
    current = { ...(header !== undefined ? { header } : {}), lines: [], endOfFile: false, line: lineNo(index) }
    hunks.push(current)
    return current
  }
  let i = start
  for (; i < lines.length; i++) {
    const line = lines[i]!
    const trimmed = line.trim()
    if (isHunkHeader(trimmed)) {
      open(i, headerText(trimmed))
      continue
    }
    // A file header (or an unknown `***` line, reported by the caller) ends the update.
    if (line.startsWith("***") || (line !== trimmed && isMarker(trimmed))) {
      if (trimmed === END_OF_FILE) {
        if (!current) {
          return Result.fail(fail(`"${END_OF_FILE}" at line ${lineNo(i)} of the patch does not follow a hunk of ${file}. ${RESEND}`))
        }
        current.endOfFile = true
        current = undefined
        continue
      }
      break
    }
    // Blank lines between the file header and its first hunk are spacing.
    if (hunks.length === 0 && trimmed === "") continue
    const hunk = current ?? (hunks.length === 0 ? open(i) : undefined)
    if (!hunk) {
      // After `*** End of File` only a new hunk or file header may follow.
      if (trimmed === "") continue
      return Result.fail(
        fail(
          `Invalid hunk line at line ${lineNo(i)} of the patch: "${line}". After "${END_OF_FILE}" start a new hunk with "@@" or a new file operation. ${VALID_HEADERS} ${RESEND}`
        )
      )
    }
    if (line === "") hunk.lines.push({ kind: " ", text: "" })
    else if (line.startsWith(" ") || line.startsWith("-") || line.startsWith("+")) {
      hunk.lines.push({ kind: line[0] as HunkLine["kind"], text: line.slice(1) })
    } else {
      return Result.fail(
        fail(
          `Invalid line in hunk ${hunks.length} of the update of ${file}, at line ${lineNo(i)} of the patch: "${line}". ${VALID_HEADERS} Context lines need a leading space. ${RESEND}`
        )
      )
    }
  }
  // Blank lines before the next file header were read as empty context: they are spacing, drop them.
  const last = hunks[hunks.length - 1]
  if (last && !last.endOfFile) {
    for (let k = i - 1; k >= start && lines[k] === "" && last.lines.at(-1)?.kind === " " && last.lines.at(-1)?.text === ""; k--) {
      last.lines.pop()
    }
  }
  const empty = hunks.findIndex((h) => h.lines.length === 0)
  if (empty !== -1) {
    return Result.fail(fail(`Hunk ${empty + 1} of the update of ${file} (line ${hunks[empty]!.line} of the patch) has no lines. ${RESEND}`))
  }
  return Result.succeed({
    hunks: hunks.map((h) => ({
      ...(h.header !== undefined ? { header: h.header } : {}),
      lines: h.lines,
      endOfFile: h.endOfFile,
      line: h.line
    })),
    next: i
  })
}

/** The lines a hunk expects in the file: context and removed lines, in order. */
export const oldLinesOf = (hunk: Pick<Hunk, "lines">) => hunk.lines.filter((l) => l.kind !== "+").map((l) => l.text)

/** Every path the operations touch, as written: sources, and move destinations. */
export const touchedPaths = (ops: ReadonlyArray<FileOp>): ReadonlyArray<string> =>
  ops.flatMap((op) => (op.type === "update" && op.movePath !== undefined ? [op.path, op.movePath] : [op.path]))
