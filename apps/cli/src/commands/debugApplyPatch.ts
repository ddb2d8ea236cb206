import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { applyPatchText, changeDiff, planPatch, summarize } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { failure, usage } from "../CliError.ts"

/** The patch text from PATCHFILE, or stdin for `-`; a terminal on stdin is a usage error, not a hang. */
const readPatch = (name: string) =>
  Effect.gen(function* () {
    if (name === "-") {
      if (process.stdin.isTTY) return yield* usage("Give a PATCHFILE, or pipe the patch in: reins debug apply-patch - < change.patch")
      return yield* Effect.tryPromise({ try: () => Bun.stdin.text(), catch: (e) => failure(`Could not read stdin: ${(e as Error).message}`) })
    }
    return yield* Effect.try({
      try: () => fs.readFileSync(name, "utf8"),
      catch: (e) => usage(`Could not read ${name}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`)
    })
  })

/** `reins debug apply-patch`: applies (or with --dry-run checks) a patch in the apply_patch format. */
export const applyPatchCommand = Command.make(
  "apply-patch",
  {
    cwd: Flag.String("cwd").pipe(Flag.withDescription("The directory the patch's paths are relative to (default: the current one)"), Flag.optional),
    dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("Check that every hunk applies and show the changes, without writing"), Flag.withDefault(false)),
    format: Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const)),
    patch: Argument.String("patchfile").pipe(Argument.withDescription("The patch file; - reads stdin"))
  },
  (opts) =>
    Effect.gen(function* () {
      const cwd = path.resolve(Option.getOrElse(opts.cwd, () => process.cwd()))
      if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) return yield* usage(`--cwd ${cwd} is not a directory`)
      const text = yield* readPatch(opts.patch)
      const outcome = yield* Effect.result(opts.dryRun ? planPatch(cwd, text) : applyPatchText(cwd, text))
      if (outcome._tag === "Failure") {
        if (opts.format === "json") yield* Console.log(JSON.stringify({ ok: false, message: outcome.failure.message }, null, 2))
        return yield* failure(outcome.failure.message)
      }
      const plan = outcome.success
      if (opts.format === "json") {
        const files = plan.changes.map((c) => ({
          path: c.path,
          type: c.type,
          ...(c.movePath !== undefined ? { movePath: c.movePath } : {}),
          diff: changeDiff(cwd, c)
        }))
        return yield* Console.log(JSON.stringify({ ok: true, applied: !opts.dryRun, files }, null, 2))
      }
      yield* Console.log(summarize(plan, opts.dryRun ? "Would apply (dry run, nothing written)" : "Applied patch"))
    })
).pipe(Command.withDescription("Apply a patch in the apply_patch format (all or nothing), or check it with --dry-run"))
