import { Effect, Schema } from "effect"
import { FileAccess } from "../FileAccess.ts"
import { define, render } from "../Tool.ts"
import { Diagnostics, withDiagnostics } from "./DiagnosticsPort.ts"
import { lineDiff, MAX_PREVIEW_BYTES } from "./Diff.ts"
import { displayPath, fail, isBinary, pathNeeds, resolvePath, statPath } from "./Files.ts"
import { editDecoded } from "./Replace.ts"
import { decodeBytes, encodeText, unwritableReason, withFileLocks } from "./TextFile.ts"
import template from "./edit.txt" with { type: "text" }

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "The path of the file to modify (absolute, or relative to the project directory)" }),
  oldString: Schema.String.annotate({ description: "The text to replace (empty to create a new file)" }),
  newString: Schema.String.annotate({ description: "The text to replace it with (must differ from oldString)" }),
  replaceAll: Schema.optionalKey(Schema.Boolean.annotate({ description: "Replace every occurrence of oldString (default false)" }))
})

const createFile = Effect.fnUntraced(function* (target: string, content: string, existed: boolean, title: string) {
  yield* (yield* FileAccess).write(target, content)
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

/** The edit's result, and the file's text before it (for a language server's baseline; none for a file created). */
const editFile = Effect.fnUntraced(function* (target: string, args: EditArgs, title: string) {
  const stat = yield* statPath(target)
  if (stat?.isDirectory()) return yield* fail(`${target} is a directory. Give the path of a file inside it.`)
  // Written in place (through a symlink, keeping the mode), so a read-only file is refused, not replaced.
  const unwritable = stat === undefined ? undefined : yield* unwritableReason(target, stat)
  if (unwritable !== undefined) return yield* fail(`Cannot edit ${target}: ${unwritable}; nothing was changed.`)
  if (args.oldString === "") {
    if (stat === undefined || stat.size === 0) return { result: yield* createFile(target, args.newString, stat !== undefined, title), before: undefined }
    return yield* fail(
      `${target} already exists and is not empty, so an empty oldString cannot be used. Give the text to replace as oldString, or use the write tool to replace the whole file.`
    )
  }
  if (stat === undefined) {
    return yield* fail(`File not found: ${target}. Check the path with the glob tool, or create the file with the write tool.`)
  }
  const files = yield* FileAccess
  const bytes = yield* files.read(target)
  if (isBinary(target, bytes)) return yield* fail(`${target} is a binary file and cannot be edited as text.`)
  // Matching works on LF text; the file's CRLF endings and BOM are restored on write.
  const file = decodeBytes(bytes)
  const result = editDecoded(file, args.oldString, args.newString, { file: target, ...(args.replaceAll !== undefined ? { replaceAll: args.replaceAll } : {}) })
  if (!result.ok) return yield* fail(result.message)
  const updated = result.text
  yield* files.write(target, encodeText(file, updated))
  const count = result.replacements
  const where = count === 1 ? `line ${result.lines[0]}` : `lines ${result.lines.join(", ")}`
  return {
    result: {
      title,
      output: `Edited ${target}: replaced ${count} occurrence${count === 1 ? "" : "s"} at ${where} (matched by the ${result.replacer} matcher).`,
      metadata: { filePath: target, replacer: result.replacer, replacements: count, diff: lineDiff(target, file.text, updated) }
    },
    // as a server reads the file (BOM and CRLF kept)
    before: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
  }
})

/** What the edit would change, for its permission question; nothing when it would fail. */
const previewEdit = Effect.fnUntraced(function* (target: string, args: EditArgs) {
  if (args.oldString === args.newString) return []
  const stat = yield* statPath(target)
  // a file too big to diff quickly is asked about by name
  if (stat !== undefined && stat.size > MAX_PREVIEW_BYTES) return []
  if (args.oldString === "") {
    if (stat !== undefined && stat.size > 0) return []
    return [{ path: target, diff: lineDiff(target, "", args.newString), ...(stat === undefined ? { created: true } : {}) }]
  }
  if (stat === undefined || !stat.isFile()) return []
  const bytes = yield* (yield* FileAccess).read(target)
  if (isBinary(target, bytes)) return []
  const file = decodeBytes(bytes)
  const result = editDecoded(file, args.oldString, args.newString, { file: target, ...(args.replaceAll !== undefined ? { replaceAll: args.replaceAll } : {}) })
  return result.ok ? [{ path: target, diff: lineDiff(target, file.text, result.text) }] : []
})

/** The `edit` tool: replaces a unique (or every) occurrence of a string in a file; the new errors a language server reports follow. */
export const edit = Effect.flatMap(Effect.service(Diagnostics), (diagnostics) =>
  define("edit", {
    description: render(template, {}),
    parameters: Parameters,
    truncate: false,
    permissions: (args, ctx) => {
      const target = resolvePath(ctx, args.filePath)
      return pathNeeds(ctx, "edit", target, { kind: "file", always: [target], title: `Edit ${target}` })
    },
    preview: (args, ctx) => previewEdit(resolvePath(ctx, args.filePath), args),
    execute: (args, ctx) =>
      Effect.gen(function* () {
        if (args.oldString === args.newString) {
          return yield* fail("oldString and newString are identical, so there is nothing to change. Give the new text as newString.")
        }
        const target = resolvePath(ctx, args.filePath)
        const { result, before } = yield* withFileLocks([target], editFile(target, args, displayPath(ctx, target)))
        // after the lock: waiting for a server never holds the file
        return yield* withDiagnostics(diagnostics, ctx, [{ path: target, ...(before !== undefined ? { before } : {}) }], result)
      })
  })
)
