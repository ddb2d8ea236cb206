import { Effect, Schema } from "effect"
import * as path from "node:path"
import { define, render } from "../Tool.ts"
import { dirGlob, displayPath, fail, isInside, mtimeOf, pathNeeds, resolvePath, searchRoot } from "./Files.ts"
import { walkNotes, walkSearch } from "./Search.ts"
import template from "./glob.txt" with { type: "text" }

export const LIMIT = 100

const Parameters = Schema.Struct({
  pattern: Schema.String.annotate({ description: "The glob pattern to match file paths against, e.g. **/*.ts" }),
  path: Schema.optionalKey(Schema.String.annotate({ description: "The directory to search in (default: the project directory)" })),
  include_ignored: Schema.optionalKey(Schema.Boolean.annotate({ description: "Also list files that .gitignore ignores (default false)" }))
})

/** The pattern relative to `dir`: a leading `./` dropped, an absolute pattern inside `dir` made relative. */
const relativePattern = (pattern: string, dir: string) => {
  if (path.isAbsolute(pattern)) return isInside(dir, pattern) ? path.relative(dir, pattern).split(path.sep).join("/") : undefined
  return pattern.replace(/^(\.\/)+/, "")
}

/** The `glob` tool: file paths matching a pattern, newest first. */
export const glob = define("glob", {
  description: render(template, { limit: LIMIT }),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const dir = resolvePath(ctx, args.path)
    return pathNeeds(ctx, "glob", dir, { kind: "directory", always: [dirGlob(dir, "directory")], title: `Glob ${args.pattern} in ${dir}` })
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const dir = yield* searchRoot(resolvePath(ctx, args.path))
      const pattern = relativePattern(args.pattern, dir)
      if (pattern === undefined || pattern === "") {
        return yield* fail(`The pattern ${args.pattern} is not inside ${dir}. Put the directory in 'path' and give a relative pattern such as **/*.ts.`)
      }
      const matcher = new Bun.Glob(pattern)
      const walked = yield* walkSearch(ctx, dir, { tool: "glob", includeIgnored: args.include_ignored === true, wanted: (file) => matcher.match(file.rel) })
      const matched = walked.files
      const dated = yield* Effect.forEach(matched, (file) => Effect.map(mtimeOf(file.path), (mtime) => ({ path: file.path, mtime })))
      dated.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path))
      const shown = dated.slice(0, LIMIT).map((file) => file.path)
      const notes: Array<string> = []
      if (dated.length > LIMIT) {
        notes.push(`(Showing the ${LIMIT} most recently modified of ${dated.length} matches. Use a more specific pattern or path.)`)
      }
      notes.push(...walkNotes(ctx, walked, { empty: dated.length === 0 }))
      const body = shown.length === 0 ? "No files found" : shown.join("\n")
      return {
        title: `${args.pattern} in ${displayPath(ctx, dir)}`,
        output: `${body}${notes.length > 0 ? `\n\n${notes.join("\n")}` : ""}`,
        metadata: { count: dated.length, truncated: dated.length > LIMIT, skippedByRules: walked.guarded.length, ignored: walked.ignored }
      }
    })
})
