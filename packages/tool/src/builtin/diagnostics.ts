import { Effect, Schema } from "effect"
import { define, render } from "../Tool.ts"
import { Diagnostics, type FileCheck, MAX_PROBLEM_LINES, problemLine, shownPath } from "./DiagnosticsPort.ts"
import { pathNeeds, resolvePath } from "./Files.ts"
import template from "./diagnostics.txt" with { type: "text" }

const Parameters = Schema.Struct({
  path: Schema.optionalKey(Schema.String.annotate({ description: "A file (default: the files edited in this session)" }))
})

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Each file's errors (capped over all files), with its warnings counted; a server too slow said so. */
const report = (cwd: string, checks: ReadonlyArray<FileCheck>) => {
  const lines: Array<string> = []
  let room = MAX_PROBLEM_LINES
  let errors = 0
  for (const check of checks) {
    if (check.status === "timeout") {
      lines.push(`${shownPath(cwd, check.path)}: ${check.server} gave no diagnostics within ${Math.round(check.waitedMs / 1000)} s.`)
      continue
    }
    const found = check.problems.filter((p) => p.severity === 1)
    const warnings = check.problems.filter((p) => p.severity === 2).length
    errors += found.length
    const listed = found.slice(0, room)
    room -= listed.length
    const more = found.length - listed.length
    lines.push(
      `${shownPath(cwd, check.path)}: ${plural(found.length, "error")}, ${plural(warnings, "warning")} (${check.server})`,
      ...listed.map((p) => `  ${problemLine(cwd, check.path, p)}`),
      ...(more > 0 ? [`  … and ${plural(more, "more error")}`] : [])
    )
  }
  return { text: lines.join("\n"), errors }
}

/** `diagnostics`: what the language servers report now, for a file or the files the session edited. */
export const diagnostics = Effect.gen(function* () {
  const port = yield* Diagnostics
  return yield* define("diagnostics", {
    description: render(template, {}),
    parameters: Parameters,
    truncate: false,
    permissions: (args, ctx) => {
      if (args.path === undefined) return []
      const target = resolvePath(ctx, args.path)
      return pathNeeds(ctx, "read", target, { kind: "file", always: [target], title: `Diagnostics of ${target}` })
    },
    execute: (args, ctx) =>
      Effect.map(port.check(ctx.sessionID, args.path === undefined ? undefined : [resolvePath(ctx, args.path)]), (checks) => {
        if (checks.length === 0)
          return {
            title: "no diagnostics",
            output: args.path === undefined ? "No file edited in this session has a language server: give a path." : `No language server serves ${args.path}.`,
            metadata: { errors: 0 }
          }
        const { text, errors } = report(ctx.cwd, checks)
        return { title: plural(errors, "error"), output: text, metadata: { errors } }
      })
  })
})
