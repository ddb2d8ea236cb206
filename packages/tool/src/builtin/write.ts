import { Effect, Schema } from "effect"
import { FileAccess } from "../FileAccess.ts"
import { define, render } from "../Tool.ts"
import { Diagnostics, withDiagnostics } from "./DiagnosticsPort.ts"
import { lineDiff, MAX_PREVIEW_BYTES } from "./Diff.ts"
import { displayPath, fail, isBinary, pathNeeds, resolvePath, statPath } from "./Files.ts"
import { decodeBytes, decodeText, unwritableReason } from "./TextFile.ts"
import template from "./write.txt" with { type: "text" }

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "The path of the file to write (absolute, or relative to the project directory)" }),
  content: Schema.String.annotate({ description: "The full content of the file" })
})

/** The text a write replaces, for the diff people see: "" for a new file, undefined for a binary or huge one. */
const replacedText = Effect.fnUntraced(function* (target: string, stat: { readonly size: number } | undefined) {
  if (stat === undefined) return ""
  const bytes = stat.size > MAX_PREVIEW_BYTES ? undefined : yield* (yield* FileAccess).read(target).pipe(Effect.orElseSucceed(() => undefined))
  return bytes === undefined || isBinary(target, bytes) ? undefined : decodeBytes(bytes).text
})

/** The `write` tool: the whole content of one file, parent directories created; the new errors a language server reports follow. */
export const write = Effect.flatMap(Effect.service(Diagnostics), (diagnostics) =>
  define("write", {
    description: render(template, {}),
    parameters: Parameters,
    truncate: false,
    permissions: (args, ctx) => {
      const target = resolvePath(ctx, args.filePath)
      return pathNeeds(ctx, "edit", target, { kind: "file", always: [target], title: `Write ${target}` })
    },
    preview: (args, ctx) =>
      Effect.gen(function* () {
        const target = resolvePath(ctx, args.filePath)
        const stat = yield* statPath(target)
        if (stat?.isDirectory()) return []
        const before = yield* replacedText(target, stat)
        const diff = before === undefined ? "" : lineDiff(target, before, decodeText(args.content).text)
        return [{ path: target, diff, ...(stat === undefined ? { created: true } : {}) }]
      }),
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const target = resolvePath(ctx, args.filePath)
        const files = yield* FileAccess
        const stat = yield* statPath(target)
        if (stat?.isDirectory()) {
          return yield* fail(`${target} is a directory. Give the path of a file inside it.`)
        }
        // written in place like edit and apply_patch: a FIFO, a device or a read-only file is refused
        const unwritable = stat === undefined ? undefined : yield* unwritableReason(target, stat)
        if (unwritable !== undefined) return yield* fail(`Cannot write ${target}: ${unwritable}; nothing was changed.`)
        // the text it replaces, for the diff people see (edit and apply_patch have one too); none for a binary or huge file
        const before = yield* replacedText(target, stat)
        yield* files.write(target, args.content)
        const bytes = Buffer.byteLength(args.content)
        // a file new or empty has no old errors to tell apart
        const written = { path: target, ...(before !== undefined && before !== "" ? { before } : {}) }
        return yield* withDiagnostics(diagnostics, ctx, [written], {
          title: displayPath(ctx, target),
          output: `${stat ? "Overwrote" : "Created"} ${target} (${bytes} bytes).`,
          metadata: {
            filePath: target,
            exists: stat !== undefined,
            ...(before === undefined ? {} : { diff: lineDiff(target, before, decodeText(args.content).text) })
          }
        })
      })
  })
)
