import { Effect, Schema, Semaphore } from "effect"
import { define, render } from "../Tool.ts"
import { lineDiff } from "./Diff.ts"
import { displayPath, fail, isBinary, pathNeeds, readBytes, resolvePath, statPath, writeText } from "./Files.ts"
import { applySpans, replacers } from "./Replacers.ts"
import template from "./edit.txt" with { type: "text" }

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "The path of the file to modify (absolute, or relative to the project directory)" }),
  oldString: Schema.String.annotate({ description: "The text to replace (empty to create a new file)" }),
  newString: Schema.String.annotate({ description: "The text to replace it with (must differ from oldString)" }),
  replaceAll: Schema.optionalKey(Schema.Boolean.annotate({ description: "Replace every occurrence of oldString (default false)" }))
})

// One lock per file, so two edits of the same file never interleave their read and write.
const locks = new Map<string, Semaphore.Semaphore>()

const lockFor = Effect.fnUntraced(function* (target: string) {
  const existing = locks.get(target)
  if (existing) return existing
  const made = yield* Semaphore.make(1)
  const raced = locks.get(target)
  if (raced) return raced
  locks.set(target, made)
  return made
})

/** Gives `text` the file's line endings. */
const withEndings = (text: string, crlf: boolean) => (crlf ? text.replace(/\r?\n/g, "\r\n") : text.replace(/\r\n/g, "\n"))

const createFile = Effect.fnUntraced(function* (target: string, content: string, existed: boolean, title: string) {
  yield* writeText(target, content)
  return {
    title,
    output: `${existed ? "Wrote" : "Created"} ${target} with the given newString.`,
    metadata: { filePath: target, replacer: "create", replacements: 0, diff: lineDiff(target, "", content) }
  }
})

interface EditArgs {
  readonly oldString: string
  readonly newString: string
  readonly replaceAll?: boolean
}

const editFile = Effect.fnUntraced(function* (target: string, args: EditArgs, title: string) {
  const stat = yield* statPath(target)
  if (stat?.isDirectory()) return yield* fail(`${target} is a directory. Give the path of a file inside it.`)
  if (args.oldString === "") {
    if (stat === undefined || stat.size === 0) return yield* createFile(target, args.newString, stat !== undefined, title)
    return yield* fail(
      `${target} already exists and is not empty, so an empty oldString cannot be used. Give the text to replace as oldString, or use the write tool to replace the whole file.`
    )
  }
  if (stat === undefined) {
    return yield* fail(`File not found: ${target}. Check the path with the glob tool, or create the file with the write tool.`)
  }
  const bytes = yield* readBytes(target)
  if (isBinary(target, bytes)) return yield* fail(`${target} is a binary file and cannot be edited as text.`)
  const content = new TextDecoder().decode(bytes)
  const crlf = content.includes("\r\n")
  const oldString = withEndings(args.oldString, crlf)
  const newString = withEndings(args.newString, crlf)
  for (const replacer of replacers) {
    const spans = replacer.find(content, oldString)
    if (spans.length === 0) continue
    if (spans.length > 1 && args.replaceAll !== true) {
      return yield* fail(
        `Found multiple matches for oldString. Provide more surrounding context to make the match unique, or set replaceAll. (${spans.length} matches in ${target}, found by the ${replacer.name} matcher.)`
      )
    }
    const updated = applySpans(content, spans, newString)
    if (updated === content) {
      return yield* fail(`The edit would leave ${target} unchanged: the matched text already equals newString. Re-read the file to check its current content.`)
    }
    yield* writeText(target, updated)
    const count = spans.length
    return {
      title,
      output: `Edited ${target}: replaced ${count} occurrence${count === 1 ? "" : "s"} (matched by the ${replacer.name} matcher).`,
      metadata: { filePath: target, replacer: replacer.name, replacements: count, diff: lineDiff(target, content, updated) }
    }
  }
  return yield* fail(
    `Could not find oldString in ${target}. Re-read the file with the read tool and copy the exact text, including whitespace.`
  )
})

/** The `edit` tool: replaces a unique (or every) occurrence of a string in a file. */
export const edit = define("edit", {
  description: render(template, {}),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const target = resolvePath(ctx, args.filePath)
    return pathNeeds(ctx, "edit", target, { kind: "file", always: [target], title: `Edit ${target}` })
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      if (args.oldString === args.newString) {
        return yield* fail("oldString and newString are identical, so there is nothing to change. Give the new text as newString.")
      }
      const target = resolvePath(ctx, args.filePath)
      const lock = yield* lockFor(target)
      return yield* lock.withPermits(1)(editFile(target, args, displayPath(ctx, target)))
    })
})
