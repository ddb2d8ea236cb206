import { Effect, Result, Schema } from "effect"
import * as fs from "node:fs"
import { MAX_PREVIEW_BYTES } from "./Diff.ts"
import * as path from "node:path"
import { Diagnostics, withDiagnostics } from "./DiagnosticsPort.ts"
import { define, render } from "../Tool.ts"
import { displayPath, pathNeeds } from "./Files.ts"
import { parsePatch, type FileOp } from "./Patch.ts"
import { applyPatchText, changeDiff, patchTargets, planPatch, summarize } from "./PatchApply.ts"
import template from "./apply_patch.txt" with { type: "text" }

const Parameters = Schema.Struct({
  patchText: Schema.String.annotate({
    description: "The whole patch, from *** Begin Patch to *** End Patch, in the format described above"
  })
})

const verb = { add: "Add", delete: "Delete", update: "Update" } as const

/** Titles for the permission question, one per path the operation touches. */
const titles = (op: FileOp): ReadonlyArray<string> =>
  op.type === "update" && op.movePath !== undefined
    ? [`Update ${op.path} and move it to ${op.movePath}`, `Move ${op.path} to ${op.movePath}`]
    : [`${verb[op.type]} ${op.path}`]

/** Whether a file the patch touches is over MAX_PREVIEW_BYTES (its diff is not worked out for the question). */
const tooBig = (patchText: string, cwd: string) =>
  Effect.sync(() => {
    const parsed = parsePatch(patchText)
    if (Result.isFailure(parsed)) return false
    return patchTargets(cwd, parsed.success).some((target) => {
      try {
        return fs.statSync(target).size > MAX_PREVIEW_BYTES
      } catch {
        return false
      }
    })
  })

/** The `apply_patch` tool: adds, deletes, updates and moves files from one patch, all or nothing; the new errors a language server reports follow. */
export const applyPatch = Effect.flatMap(Effect.service(Diagnostics), (diagnostics) =>
  define("apply_patch", {
    description: render(template, {}),
    parameters: Parameters,
    truncate: false,
    permissions: (args, ctx) => {
      // A patch that does not parse needs nothing: execute fails with the parse error and writes nothing.
      const parsed = parsePatch(args.patchText)
      if (Result.isFailure(parsed)) return []
      return parsed.success.flatMap((op) => {
        const targets = patchTargets(ctx.cwd, [op])
        const named = titles(op)
        return targets.flatMap((target, i) => pathNeeds(ctx, "edit", target, { kind: "file", always: [target], title: named[i]! }))
      })
    },
    // a patch that would not apply shows no diff (execute reports why), nor one over a file too big to diff quickly
    preview: (args, ctx) =>
      Effect.flatMap(tooBig(args.patchText, ctx.cwd), (big) =>
        big
          ? Effect.succeed([])
          : Effect.map(planPatch(ctx.cwd, args.patchText), (plan) =>
              plan.changes.map((change) => ({
                path: change.movePath ?? change.path,
                diff: changeDiff(plan.cwd, change),
                ...(change.type === "add" ? { created: true } : {})
              }))
            )
      ),
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const plan = yield* applyPatchText(ctx.cwd, args.patchText)
        const files = plan.changes.map((change) => ({
          path: change.path,
          type: change.type,
          ...(change.movePath !== undefined ? { movePath: change.movePath } : {}),
          diff: changeDiff(plan.cwd, change)
        }))
        const only = plan.changes.length === 1 ? plan.changes[0] : undefined
        // an updated or moved file's old text is its server's baseline; a deleted or moved-away one is closed there
        const written = plan.changes
          .filter((change) => change.type !== "delete")
          .map((change) => ({
            path: path.resolve(plan.cwd, change.movePath ?? change.path),
            ...(change.type !== "add" && change.before !== "" ? { before: change.before } : {})
          }))
        const removed = plan.changes
          .filter((change) => change.type === "delete" || (change.movePath !== undefined && change.movePath !== change.path))
          .map((change) => path.resolve(plan.cwd, change.path))
        return yield* withDiagnostics(
          diagnostics,
          ctx,
          written,
          {
            title: only ? displayPath(ctx, only.movePath ?? only.path) : `${files.length} files`,
            output: summarize(plan),
            metadata: {
              files,
              diff: files
                .map((f) => f.diff)
                .filter((d) => d !== "")
                .join("\n")
            }
          },
          removed
        )
      })
  })
)
