import { Effect, Schema } from "effect"
import * as path from "node:path"
import { define, render } from "../Tool.ts"
import {
  dirGlob,
  displayPath,
  fail,
  hasBinaryExtension,
  isExistingFile,
  notRegular,
  pathNeeds,
  resolvePath,
  specialKind,
  statPath,
  type Entry
} from "./Files.ts"
import { grepFiles } from "./GrepProcess.ts"
import { walkNotes, walkSearch } from "./Search.ts"
import template from "./grep.txt" with { type: "text" }

export const LIMIT = 100
export const MAX_FILE_BYTES = 5 * 1024 * 1024
const MAX_LINE_LENGTH = 2000
/** Lines the engine gave up on that the output names one by one. */
const GAVE_UP_SHOWN = 10

const Parameters = Schema.Struct({
  pattern: Schema.String.annotate({ description: "The regular expression (JavaScript syntax) to search for in file contents" }),
  path: Schema.optionalKey(Schema.String.annotate({ description: "The directory or file to search in (default: the project directory)" })),
  include: Schema.optionalKey(Schema.String.annotate({ description: "A glob for the files to search, e.g. *.ts or *.{ts,tsx}" })),
  include_ignored: Schema.optionalKey(Schema.Boolean.annotate({ description: "Also search files that .gitignore ignores (default false)" }))
})

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Says which lines the regex engine gave up on: "no match" for them would be a guess. */
const gaveUpNote = (lines: ReadonlyArray<string>) => {
  const shown = lines.slice(0, GAVE_UP_SHOWN).join(", ")
  const more = lines.length > GAVE_UP_SHOWN ? ` and ${lines.length - GAVE_UP_SHOWN} more` : ""
  return (
    `(The regex engine gave up on ${plural(lines.length, "line")} before deciding whether ${lines.length === 1 ? "it matches" : "they match"}: ${shown}${more}. ` +
    "It stops after a fixed amount of backtracking, so these lines may match and are not counted above. " +
    "The pattern backtracks catastrophically (nested or overlapping repetition such as (a+)+ or (.*)*): use a simpler pattern, or read those lines.)"
  )
}

/** The `grep` tool: a regex over file contents in a child process (no ripgrep), newest files first. */
export const grep = define("grep", {
  description: render(template, { limit: LIMIT, maxFileMb: MAX_FILE_BYTES / 1024 / 1024 }),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const target = resolvePath(ctx, args.path)
    const kind = isExistingFile(target) ? "file" : "directory"
    const title = `Grep ${args.pattern} in ${target}`
    // grep reads contents: the read rules hold for what it searches, as for the read tool (a
    // directory's files are judged one by one during the walk)
    return [
      ...pathNeeds(ctx, "grep", target, { kind, always: [dirGlob(target, kind)], title }),
      ...pathNeeds(ctx, "read", target, { kind, always: [dirGlob(target, kind)], title }).filter((need) => need.permission === "read")
    ]
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      yield* Effect.try({
        try: () => new RegExp(args.pattern),
        catch: (e) =>
          fail(
            `The pattern is not a valid JavaScript regular expression (${e instanceof Error ? e.message : String(e)}). ` +
              "Fix the syntax, or escape special characters such as ( [ { . * + ? | with a backslash to match them literally."
          )
      })
      const target = resolvePath(ctx, args.path)
      const stat = yield* statPath(target)
      if (stat === undefined) return yield* fail(`Path not found: ${target}. Check it with the list or glob tool.`)
      const kind = specialKind(stat)
      if (kind !== undefined && !stat.isDirectory()) return yield* notRegular(target, kind)
      const matcher = args.include === undefined ? undefined : new Bun.Glob(args.include)
      const byPath = args.include?.includes("/") ?? false
      const wanted = (entry: Entry) => !hasBinaryExtension(entry.path) && (matcher === undefined || matcher.match(byPath ? entry.rel : entry.name))
      const walked = stat.isDirectory()
        ? yield* walkSearch(ctx, target, { tool: "grep", includeIgnored: args.include_ignored === true, wanted })
        : { files: [{ path: target, rel: path.basename(target), name: path.basename(target), isDirectory: false }], unreadable: 0, ignored: 0, guarded: [] }
      const found = yield* grepFiles({
        pattern: args.pattern,
        files: walked.files.map((f) => f.path),
        limit: LIMIT,
        maxLineLength: MAX_LINE_LENGTH,
        maxFileBytes: MAX_FILE_BYTES
      })
      const results = [...found.matches].sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path))
      const total = results.reduce((sum, r) => sum + r.count, 0)
      const title = `${args.pattern} in ${displayPath(ctx, target)}`
      const notes = walkNotes(ctx, walked, { empty: total === 0 })
      if (found.unreadable > 0) notes.push(`(${found.unreadable} files could not be read and were skipped.)`)
      const gaveUp = results.flatMap((r) => (r.gaveUp ?? []).map((line) => `${r.path}:${line}`))
      if (gaveUp.length > 0) notes.push(gaveUpNote(gaveUp))
      const tail = notes.length > 0 ? `\n\n${notes.join("\n")}` : ""
      const metadata = {
        files: results.filter((r) => r.count > 0).length,
        skippedByRules: walked.guarded.length,
        ignored: walked.ignored,
        gaveUp: gaveUp.length
      }
      if (total === 0) {
        const none =
          gaveUp.length === 0 ? "No files found" : `No matches found, but the regex engine gave up on ${plural(gaveUp.length, "line")} that may match`
        return { title, output: `${none}${tail}`, metadata: { ...metadata, matches: 0, truncated: false } }
      }
      const groups: Array<string> = []
      let shown = 0
      for (const result of results) {
        if (shown >= LIMIT) break
        if (result.count === 0) continue
        const lines = result.lines.slice(0, LIMIT - shown)
        shown += lines.length
        groups.push(`${result.path}:\n${lines.map(([n, text]) => `  Line ${n}: ${text}`).join("\n")}`)
      }
      const header = total > LIMIT ? `Found ${total} matches (showing first ${LIMIT})` : `Found ${total} match${total === 1 ? "" : "es"}`
      const note = total > LIMIT ? `\n\n(Results are truncated: ${total - LIMIT} more matches not shown. Use a more specific pattern, path or include.)` : ""
      return {
        title,
        output: `${header}\n\n${groups.join("\n\n")}${note}${tail}`,
        metadata: { ...metadata, matches: total, truncated: total > LIMIT }
      }
    })
})
