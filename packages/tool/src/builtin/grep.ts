import { Effect, Result, Schema } from "effect"
import { define, render } from "../Tool.ts"
import {
  dirGlob, displayPath, fail, hasBinaryExtension, isBinary, isExistingFile, mtimeOf, pathNeeds, readBytes, resolvePath,
  SEARCH_SKIP, statPath, unreadableNote, walkFiles, type Entry
} from "./Files.ts"
import template from "./grep.txt" with { type: "text" }

export const LIMIT = 100
export const MAX_FILE_BYTES = 5 * 1024 * 1024
const MAX_LINE_LENGTH = 2000

const Parameters = Schema.Struct({
  pattern: Schema.String.annotate({ description: "The regular expression (JavaScript syntax) to search for in file contents" }),
  path: Schema.optionalKey(
    Schema.String.annotate({ description: "The directory or file to search in (default: the project directory)" })
  ),
  include: Schema.optionalKey(
    Schema.String.annotate({ description: "A glob for the files to search, e.g. *.ts or *.{ts,tsx}" })
  )
})

interface FileMatches {
  readonly path: string
  readonly mtime: number
  readonly count: number
  readonly lines: ReadonlyArray<{ readonly n: number; readonly text: string }>
}

/** Matching lines of one file (at most LIMIT kept); undefined when skipped (binary, unreadable). */
const searchFile = Effect.fnUntraced(function* (file: string, regex: RegExp) {
  const bytes = yield* Effect.result(readBytes(file))
  if (Result.isFailure(bytes)) return { unreadable: true as const }
  if (isBinary(file, bytes.success)) return undefined
  const lines = new TextDecoder().decode(bytes.success).split(/\r?\n/)
  const found: Array<{ n: number; text: string }> = []
  let count = 0
  lines.forEach((line, index) => {
    if (!regex.test(line)) return
    count++
    if (found.length < LIMIT) found.push({ n: index + 1, text: line.length > MAX_LINE_LENGTH ? `${line.slice(0, MAX_LINE_LENGTH)}…` : line })
  })
  if (count === 0) return undefined
  const mtime = yield* mtimeOf(file)
  return { path: file, mtime, count, lines: found } satisfies FileMatches
})

/** The files to search: the one file given, or every file below the directory that passes `include`. */
const candidates = Effect.fnUntraced(function* (target: string, include: string | undefined) {
  const stat = yield* statPath(target)
  if (stat === undefined) return yield* fail(`Path not found: ${target}. Check it with the list or glob tool.`)
  if (!stat.isDirectory()) return { files: [target], unreadable: 0 }
  const walked = yield* walkFiles(target, (entry) => SEARCH_SKIP.has(entry.name))
  const matcher = include === undefined ? undefined : new Bun.Glob(include)
  const byPath = include?.includes("/") ?? false
  const wanted = (entry: Entry) => matcher === undefined || matcher.match(byPath ? entry.rel : entry.name)
  const files: Array<string> = []
  for (const entry of walked.files) {
    if (!wanted(entry) || hasBinaryExtension(entry.path)) continue
    const size = (yield* statPath(entry.path))?.size ?? 0
    if (size <= MAX_FILE_BYTES) files.push(entry.path)
  }
  return { files, unreadable: walked.unreadable }
})

/** The `grep` tool: a regex over file contents, in TypeScript (no ripgrep), newest files first. */
export const grep = define("grep", {
  description: render(template, { limit: LIMIT, maxFileMb: MAX_FILE_BYTES / 1024 / 1024 }),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const target = resolvePath(ctx, args.path)
    const kind = isExistingFile(target) ? "file" : "directory"
    return pathNeeds(ctx, "grep", target, { kind, always: [dirGlob(target, kind)], title: `Grep ${args.pattern} in ${target}` })
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const regex = yield* Effect.try({
        try: () => new RegExp(args.pattern),
        catch: (e) =>
          fail(
            `The pattern is not a valid JavaScript regular expression (${e instanceof Error ? e.message : String(e)}). ` +
              "Fix the syntax, or escape special characters such as ( [ { . * + ? | with a backslash to match them literally."
          )
      })
      const target = resolvePath(ctx, args.path)
      const { files, unreadable } = yield* candidates(target, args.include)
      const results: Array<FileMatches> = []
      let unreadableFiles = 0
      for (const file of files) {
        const found = yield* searchFile(file, regex)
        if (found === undefined) continue
        if ("unreadable" in found) unreadableFiles++
        else results.push(found)
      }
      results.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path))
      const total = results.reduce((sum, r) => sum + r.count, 0)
      const title = `${args.pattern} in ${displayPath(ctx, target)}`
      const skipped = unreadableNote(unreadable) + (unreadableFiles > 0 ? `\n(${unreadableFiles} files could not be read and were skipped.)` : "")
      if (total === 0) return { title, output: `No files found${skipped}`, metadata: { matches: 0, truncated: false } }
      const groups: Array<string> = []
      let shown = 0
      for (const result of results) {
        if (shown >= LIMIT) break
        const lines = result.lines.slice(0, LIMIT - shown)
        shown += lines.length
        groups.push(`${result.path}:\n${lines.map((l) => `  Line ${l.n}: ${l.text}`).join("\n")}`)
      }
      const header = total > LIMIT ? `Found ${total} matches (showing first ${LIMIT})` : `Found ${total} match${total === 1 ? "" : "es"}`
      const note = total > LIMIT ? `\n\n(Results are truncated: ${total - LIMIT} more matches not shown. Use a more specific pattern, path or include.)` : ""
      return {
        title,
        output: `${header}\n\n${groups.join("\n\n")}${note}${skipped}`,
        metadata: { matches: total, files: results.length, truncated: total > LIMIT }
      }
    })
})
