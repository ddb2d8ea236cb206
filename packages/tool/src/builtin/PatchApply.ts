import { Effect, Random, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { noteTemp } from "@reins/domain"
import type { ToolError } from "../Tool.ts"
import { diffStat, lineDiff } from "./Diff.ts"
import { plainPunctuation } from "./Punctuation.ts"
import { FileAccess } from "../FileAccess.ts"
import { fail, isBinary, isInside, statPath } from "./Files.ts"
import { oldLinesOf, parsePatch, touchedPaths, type FileOp, type Hunk } from "./Patch.ts"
import { decodeBytes, encodeText, keepFinalNewline, unwritableReason, withFileLocks } from "./TextFile.ts"

// ---------------------------------------------------------------------------------------------
// Seeking: where a hunk's lines are in a file

/** Maps typographic dashes, quotes and spaces to ASCII and trims: the loosest rung of the fuzz ladder. */
export const normalise = (line: string) => plainPunctuation(line).trim()

/** The fuzz ladder, strictest first; a match is sought at every position on one rung before the next. */
export const FUZZ = [
  { name: "exact", key: (s: string) => s },
  { name: "ignoring trailing whitespace", key: (s: string) => s.trimEnd() },
  { name: "ignoring surrounding whitespace", key: (s: string) => s.trim() },
  { name: "ignoring unicode punctuation", key: normalise }
] as const

/** Where `pattern` occurs in `lines` at or after `start` (only at the very end when `eof`), and on which fuzz rung. */
export const seekSequence = (
  lines: ReadonlyArray<string>,
  pattern: ReadonlyArray<string>,
  start: number,
  eof: boolean
): { readonly index: number; readonly fuzz: number } | undefined => {
  if (pattern.length === 0) return { index: start, fuzz: 0 }
  const last = lines.length - pattern.length
  const from = eof ? last : start
  if (last < 0 || from < start) return undefined
  for (const [fuzz, rung] of FUZZ.entries()) {
    const keys = lines.map(rung.key)
    const want = pattern.map(rung.key)
    for (let i = from; i <= last; i++) {
      if (want.every((w, k) => keys[i + k] === w)) return { index: i, fuzz }
    }
  }
  return undefined
}

const SHOWN_LINES = 6

const quoteLines = (lines: ReadonlyArray<string>) => {
  const shown = lines.slice(0, SHOWN_LINES).map((l) => `  ${l}`)
  const more = lines.length - SHOWN_LINES
  return [...shown, ...(more > 0 ? [`  … (${more} more line${more === 1 ? "" : "s"})`] : [])].join("\n")
}

const reread = (file: string) =>
  `Re-read ${file} with the read tool and send the whole patch again with context lines copied exactly from the file; nothing was changed.`

/** The text of a file after its hunks, applied in order; the loosest fuzz rung used; or an error naming the hunk. */
export const applyHunks = (
  text: string,
  hunks: ReadonlyArray<Hunk>,
  file: string
): Result.Result<{ readonly text: string; readonly fuzz: number }, ToolError> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  const replacements: Array<{ start: number; count: number; lines: ReadonlyArray<string> }> = []
  let at = 0
  let fuzz = 0
  for (const [n, hunk] of hunks.entries()) {
    const where = `Hunk ${n + 1} of the update of ${file} (line ${hunk.line} of the patch)`
    if (hunk.header !== undefined) {
      const found = seekSequence(lines, [hunk.header], at, false)
      if (!found)
        return Result.fail(
          fail(`${where}: could not find its "@@ ${hunk.header}" line in the file${at > 0 ? " after the previous hunk" : ""}. ${reread(file)}`)
        )
      at = found.index + 1
      fuzz = Math.max(fuzz, found.fuzz)
    }
    const oldLines = oldLinesOf(hunk)
    if (oldLines.length === 0) {
      // A pure addition goes after its @@ line, or at the end of the file.
      replacements.push({ start: hunk.header !== undefined ? at : lines.length, count: 0, lines: hunk.lines.map((l) => l.text) })
      continue
    }
    let body = hunk.lines
    let found = seekSequence(lines, oldLines, at, hunk.endOfFile)
    const closing = body[body.length - 1]
    if (!found && closing?.kind === " " && closing.text === "" && oldLines.length > 1) {
      // A blank line closing a hunk is often spacing in the patch, not a line of the file.
      body = body.slice(0, -1)
      found = seekSequence(lines, oldLinesOf({ lines: body }), at, hunk.endOfFile)
    }
    if (!found) {
      const place = hunk.endOfFile ? " at the end of the file (the hunk is marked *** End of File)" : at > 0 ? " after the previous hunk" : ""
      return Result.fail(fail(`${where}: could not find these lines in the file${place}:\n${quoteLines(oldLines)}\n${reread(file)}`))
    }
    // Context lines keep the file's own text, so a fuzzy match never rewrites the lines around a change.
    const start = found.index
    let offset = 0
    const replacement: Array<string> = []
    for (const l of body) {
      if (l.kind === " ") replacement.push(lines[start + offset]!)
      if (l.kind !== "+") offset++
      if (l.kind === "+") replacement.push(l.text)
    }
    replacements.push({ start, count: offset, lines: replacement })
    at = start + offset
    fuzz = Math.max(fuzz, found.fuzz)
  }
  // Apply from the bottom up so earlier positions stay valid; a stable sort keeps same-position insertions in order.
  const ordered = replacements.map((r, order) => ({ ...r, order })).sort((a, b) => a.start - b.start || a.order - b.order)
  for (const r of ordered.reverse()) lines.splice(r.start, r.count, ...r.lines)
  const joined = lines.length === 0 ? "" : `${lines.join("\n")}\n`
  return Result.succeed({ text: keepFinalNewline(text, joined), fuzz })
}

// ---------------------------------------------------------------------------------------------
// Planning: every file read and every new content computed, nothing written

/** One file's change in a plan; paths are absolute, texts use LF. */
export interface FileChange {
  readonly type: "add" | "delete" | "update" | "move"
  readonly path: string
  readonly movePath?: string
  readonly before: string
  readonly after: string
  readonly hunks: number
  /** The loosest fuzz rung any hunk needed (index into FUZZ). */
  readonly fuzz: number
}

/**
 * A file to write: its encoded content, the mode to give a new file, and the bytes it replaces.
 * A write with `original` replaces an existing file's content (through a symlink, keeping its mode,
 * owner and hard links); one without creates the file.
 */
interface Write {
  readonly target: string
  readonly content: string
  readonly mode?: number
  readonly original?: Uint8Array
}

/** A path to delete, and what puts it back: its bytes and mode, or the link it was (a symlink is removed, not its target). */
interface Removal {
  readonly target: string
  readonly original: Uint8Array
  readonly mode: number
  readonly link?: string
}

/** The removal of `target`, remembering a symbolic link as a link. */
const removal = (target: string, original: Uint8Array, mode: number) =>
  Effect.map(
    Effect.tryPromise(() => fs.promises.readlink(target)).pipe(Effect.orElseSucceed(() => undefined)),
    (link): Removal => ({ target, original, mode, ...(link !== undefined ? { link } : {}) })
  )

/** A validated patch: what changes, and the writes and removals that make it so. */
export interface Plan {
  readonly cwd: string
  readonly changes: ReadonlyArray<FileChange>
  readonly writes: ReadonlyArray<Write>
  readonly removals: ReadonlyArray<Removal>
}

/** How a path is shown: relative when inside `cwd`. */
const shown = (cwd: string, target: string) => (isInside(cwd, target) ? path.relative(cwd, target) || "." : target)

/** The absolute paths a patch's operations touch (sources and move destinations). */
export const patchTargets = (cwd: string, ops: ReadonlyArray<FileOp>) => touchedPaths(ops).map((p) => path.resolve(cwd, p))

const existingFile = Effect.fnUntraced(function* (target: string, file: string, missing: string) {
  const stat = yield* statPath(target)
  if (stat === undefined) return yield* fail(missing)
  if (stat.isDirectory()) return yield* fail(`${file} is a directory, not a file. Fix the path in the patch; nothing was changed.`)
  // Files are changed in place, as edit does: a read-only file is refused, never replaced.
  const unwritable = yield* unwritableReason(target, stat)
  if (unwritable !== undefined) return yield* fail(`Cannot change ${file}: ${unwritable}; nothing was changed.`)
  return stat
})

const planOp = Effect.fnUntraced(function* (cwd: string, op: FileOp) {
  const target = path.resolve(cwd, op.path)
  const file = shown(cwd, target)
  if (op.type === "add") {
    const stat = yield* statPath(target)
    if (stat !== undefined) {
      return yield* fail(`Cannot add ${file}: it already exists; use *** Update File: ${op.path} to change it. Nothing was changed.`)
    }
    const after = op.lines.length === 0 ? "" : `${op.lines.join("\n")}\n`
    const change: FileChange = { type: "add", path: target, before: "", after, hunks: 0, fuzz: 0 }
    return { change, writes: [{ target, content: after }], removals: [] }
  }
  if (op.type === "delete") {
    const stat = yield* existingFile(target, file, `Cannot delete ${file}: the file does not exist. Check the path with the glob tool; nothing was changed.`)
    const bytes = yield* (yield* FileAccess).read(target)
    const before = isBinary(target, bytes) ? "" : decodeBytes(bytes).text
    const change: FileChange = { type: "delete", path: target, before, after: "", hunks: 0, fuzz: 0 }
    return { change, writes: [], removals: [yield* removal(target, bytes, stat.mode)] }
  }
  const stat = yield* existingFile(
    target,
    file,
    `Cannot update ${file}: the file does not exist. Check the path with the glob tool, or use *** Add File: ${op.path} to create it; nothing was changed.`
  )
  // through the editor when one is connected (ACP), as edit reads and writes it
  const bytes = yield* (yield* FileAccess).read(target)
  if (isBinary(target, bytes)) return yield* fail(`${file} is a binary file and cannot be patched as text. Nothing was changed.`)
  const decoded = decodeBytes(bytes)
  const applied = applyHunks(decoded.text, op.hunks, file)
  if (Result.isFailure(applied)) return yield* applied.failure
  const { text: after, fuzz } = applied.success
  const content = encodeText(decoded, after)
  const dest = op.movePath === undefined ? undefined : path.resolve(cwd, op.movePath)
  if (dest === undefined || dest === target) {
    const change: FileChange = { type: "update", path: target, before: decoded.text, after, hunks: op.hunks.length, fuzz }
    return { change, writes: [{ target, content, original: bytes }], removals: [] }
  }
  if ((yield* statPath(dest)) !== undefined) {
    return yield* fail(
      `Cannot move ${file} to ${shown(cwd, dest)}: the destination already exists. Move to a new path, or delete it first; nothing was changed.`
    )
  }
  const change: FileChange = { type: "move", path: target, movePath: dest, before: decoded.text, after, hunks: op.hunks.length, fuzz }
  return { change, writes: [{ target: dest, content, mode: stat.mode }], removals: [yield* removal(target, bytes, stat.mode)] }
})

/** Plans already-parsed operations: reads and validates every file and computes every new content; writes nothing. */
export const planOps = Effect.fn("PatchApply.plan")(function* (cwd: string, ops: ReadonlyArray<FileOp>) {
  const seen = new Set<string>()
  for (const target of patchTargets(cwd, ops)) {
    if (seen.has(target)) {
      return yield* fail(
        `${shown(cwd, target)} appears in more than one operation of the patch. Put all changes to a file in one *** Update File section; nothing was changed.`
      )
    }
    seen.add(target)
  }
  const planned = yield* Effect.forEach(ops, (op) => planOp(cwd, op))
  const plan: Plan = {
    cwd,
    changes: planned.map((p) => p.change),
    writes: planned.flatMap((p) => p.writes),
    removals: planned.flatMap((p) => p.removals)
  }
  return plan
})

/** Parses and plans a patch against the files under `cwd`: validates everything, computes every new content, writes nothing. */
export const planPatch = (cwd: string, patchText: string): Effect.Effect<Plan, ToolError> =>
  Effect.suspend(() => {
    const parsed = parsePatch(patchText)
    return Result.isFailure(parsed) ? Effect.fail(parsed.failure) : planOps(cwd, parsed.success)
  })

// ---------------------------------------------------------------------------------------------
// Committing: new files staged beside their targets, existing files replaced, undoing on any failure

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const io = <A>(what: string, run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: (e) => fail(`${what}: ${describe(e)}`) })

/** Runs a clean-up step, answering whether it worked: its failure must not hide the error that caused it. */
const attempt = (run: () => Promise<unknown>) => attemptEffect(io("clean-up", run))

const attemptEffect = (step: Effect.Effect<unknown, ToolError>) =>
  step.pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )

interface Staged extends Write {
  readonly temp: string
}

/** Writes each new file to a temp file beside it, so no half-written file ever appears under its name. */
const stage = Effect.fnUntraced(function* (writes: ReadonlyArray<Write>, staged: Array<Staged>, createdDirs: Array<string>) {
  for (const write of writes) {
    const dir = path.dirname(write.target)
    const created = yield* io(`Could not create the directory ${dir}`, () => fs.promises.mkdir(dir, { recursive: true }))
    if (created !== undefined) {
      // mkdir answers the top-most directory it made; remember every one down to `dir`, deepest first.
      for (let d = dir; d.length >= created.length; d = path.dirname(d)) createdDirs.push(d)
    }
    const suffix = (yield* Random.nextIntBetween(0, 36 ** 8, { halfOpen: true })).toString(36)
    const temp = path.join(dir, `.${path.basename(write.target)}.reins-patch-${process.pid}-${suffix}`)
    noteTemp(temp)
    yield* io(`Could not write ${write.target}`, () =>
      fs.promises.writeFile(temp, write.content, { flag: "wx", ...(write.mode !== undefined ? { mode: write.mode } : {}) })
    )
    staged.push({ ...write, temp })
    // writeFile's mode is filtered by the umask; chmod gives a moved file the original's exact mode.
    if (write.mode !== undefined) yield* io(`Could not set the mode of ${write.target}`, () => fs.promises.chmod(temp, write.mode! & 0o7777))
  }
})

/**
 * Writes a plan to disk: new files staged and renamed in, existing files replaced through their
 * symlinks keeping their mode (`replaceContent`), then removals; any failure undoes what was done.
 */
export const commitPlan = Effect.fn("PatchApply.commit")(function* (plan: Plan) {
  const staged: Array<Staged> = []
  const createdDirs: Array<string> = []
  // existing files are rewritten through the file access (an editor's buffers over ACP), new and removed ones on disk
  const files = yield* FileAccess
  const undo: Array<{ readonly target: string; readonly run: Effect.Effect<unknown, ToolError> }> = []
  const rollback = Effect.gen(function* () {
    const unrestored: Array<string> = []
    for (const step of [...undo].reverse()) if (!(yield* attemptEffect(step.run))) unrestored.push(step.target)
    for (const s of staged) yield* attempt(() => fs.promises.rm(s.temp, { force: true }))
    for (const dir of createdDirs) yield* attempt(() => fs.promises.rmdir(dir))
    return unrestored
  })
  yield* Effect.gen(function* () {
    yield* stage(
      plan.writes.filter((w) => w.original === undefined),
      staged,
      createdDirs
    )
    for (const w of plan.writes) {
      const original = w.original
      if (original === undefined) continue
      // registered first: a write that fails half-way has already changed the file
      undo.push({ target: w.target, run: files.write(w.target, original) })
      yield* files.write(w.target, w.content)
    }
    for (const s of staged) {
      yield* io(`Could not create ${s.target}`, () => fs.promises.rename(s.temp, s.target))
      undo.push({ target: s.target, run: io("clean-up", () => fs.promises.unlink(s.target)) })
    }
    for (const r of plan.removals) {
      yield* io(`Could not delete ${r.target}`, () => fs.promises.unlink(r.target))
      const link = r.link
      undo.push({
        target: r.target,
        run: io(
          "clean-up",
          link !== undefined ? () => fs.promises.symlink(link, r.target) : () => fs.promises.writeFile(r.target, r.original, { mode: r.mode })
        )
      })
    }
  }).pipe(
    Effect.catch((e) =>
      Effect.flatMap(rollback, (unrestored) =>
        Effect.fail(
          fail(
            unrestored.length === 0
              ? `${e.message.replace(/\.$/, "")}. The patch was not applied; nothing was changed.`
              : `${e.message.replace(/\.$/, "")}. The patch was not applied, but these files could not be restored and may be changed: ${unrestored.join(", ")}. Check them with the read tool.`
          )
        )
      )
    ),
    Effect.uninterruptible
  )
})

/** Parses, validates and applies a patch under the locks of every path it touches; all files change or none. */
export const applyPatchText = (cwd: string, patchText: string): Effect.Effect<Plan, ToolError> =>
  Effect.suspend(() => {
    const parsed = parsePatch(patchText)
    if (Result.isFailure(parsed)) return Effect.fail(parsed.failure)
    const ops = parsed.success
    return withFileLocks(
      patchTargets(cwd, ops),
      Effect.tap(planOps(cwd, ops), (plan) => commitPlan(plan))
    )
  })

// ---------------------------------------------------------------------------------------------
// Reporting

const LETTER = { add: "A", delete: "D", update: "M", move: "M" } as const

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const label = (cwd: string, change: FileChange) =>
  `${LETTER[change.type]} ${shown(cwd, change.path)}${change.movePath !== undefined ? ` → ${shown(cwd, change.movePath)}` : ""}`

/** A unified diff of one change, named by its path (old and new names for a move). */
export const changeDiff = (cwd: string, change: FileChange) => {
  const from = shown(cwd, change.path)
  const to = change.movePath !== undefined ? shown(cwd, change.movePath) : from
  const diff = lineDiff(from, change.before, change.after)
  if (diff === "") return to === from ? "" : `--- ${from}\n+++ ${to}`
  return to === from ? diff : diff.replace(`\n+++ ${from}\n`, `\n+++ ${to}\n`)
}

/** The lines of one change's details: added/removed line counts, hunks and any fuzz used. */
const detail = (cwd: string, change: FileChange) => {
  const { added, removed } = diffStat(changeDiff(cwd, change))
  const parts =
    change.type === "add"
      ? [plural(added, "line")]
      : change.type === "delete"
        ? []
        : [plural(change.hunks, "hunk"), `+${added} -${removed}`, ...(change.fuzz > 0 ? [`matched ${FUZZ[change.fuzz]!.name}`] : [])]
  return `  ${label(cwd, change)}${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`
}

/** A short report of a plan: one headline naming every file (A/M/D), then per-file counts. */
export const summarize = (plan: Plan, heading = "Applied patch") =>
  [`${heading}: ${plan.changes.map((c) => label(plan.cwd, c)).join(", ")}`, ...plan.changes.map((c) => detail(plan.cwd, c))].join("\n")
