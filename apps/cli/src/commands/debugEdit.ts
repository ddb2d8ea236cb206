import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { decodeBytes, editDecoded, encodeText } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { failure, usage } from "../CliError.ts"

/** The text of `--NAME TEXT` or `--NAME-file F`: exactly one of the two. */
const oneOf = (name: string, text: Option.Option<string>, file: Option.Option<string>) =>
  Effect.gen(function* () {
    if (Option.isSome(text) && Option.isSome(file)) return yield* usage(`Give either --${name} or --${name}-file, not both.`)
    if (Option.isSome(text)) return text.value
    if (Option.isNone(file)) return yield* usage(`Give the ${name} text with --${name} TEXT or --${name}-file FILE.`)
    return yield* Effect.try({
      try: () => fs.readFileSync(file.value, "utf8"),
      catch: (e) =>
        usage(`Could not read --${name}-file ${file.value}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`)
    })
  })

/** `reins debug edit`: what the edit tool would make of a file, written only with --write. */
export const editCommand = Command.make(
  "edit",
  {
    old: Flag.String("old").pipe(Flag.withDescription("The text to replace (oldString)"), Flag.optional),
    oldFile: Flag.String("old-file").pipe(Flag.withDescription("Read oldString from this file"), Flag.optional),
    new: Flag.String("new").pipe(Flag.withDescription("The replacement (newString)"), Flag.optional),
    newFile: Flag.String("new-file").pipe(Flag.withDescription("Read newString from this file"), Flag.optional),
    all: Flag.Boolean("all").pipe(Flag.withDescription("Replace every occurrence (replaceAll)"), Flag.withDefault(false)),
    write: Flag.Boolean("write").pipe(Flag.withDescription("Write the result to FILE (default: only print it)"), Flag.withDefault(false)),
    format: Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const)),
    file: Argument.String("file").pipe(Argument.withDescription("The file to edit"))
  },
  (opts) =>
    Effect.gen(function* () {
      const oldString = yield* oneOf("old", opts.old, opts.oldFile)
      const newString = yield* oneOf("new", opts.new, opts.newFile)
      const target = path.resolve(opts.file)
      const bytes = yield* Effect.try({
        try: () => fs.readFileSync(target),
        catch: (e) => usage(`Could not read ${opts.file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`)
      })
      if (bytes.subarray(0, 8192).includes(0)) return yield* failure(`${opts.file} is a binary file and cannot be edited as text.`)
      const decoded = decodeBytes(bytes)
      const result = editDecoded(decoded, oldString, newString, { file: opts.file, replaceAll: opts.all })
      if (!result.ok) {
        if (opts.format === "json") yield* Console.log(JSON.stringify({ ok: false, reason: result.reason, message: result.message }, null, 2))
        return yield* failure(result.message)
      }
      // Printed as it would be written: the file's line endings and BOM restored.
      const written = encodeText(decoded, result.text)
      if (opts.write) {
        yield* Effect.try({ try: () => fs.writeFileSync(target, written), catch: (e) => failure(`Could not write ${opts.file}: ${(e as Error).message}`) })
      }
      if (opts.format === "json") {
        const { ok, replacer, replacements, lines } = result
        return yield* Console.log(JSON.stringify({ ok, replacer, replacements, lines, written: opts.write, text: written }, null, 2))
      }
      yield* Effect.sync(() => process.stdout.write(written))
      const where = result.replacements === 1 ? `line ${result.lines[0]}` : `lines ${result.lines.join(", ")}`
      const saved = opts.write ? `written to ${opts.file}` : "not written: add --write to save it"
      yield* Effect.sync(() =>
        process.stderr.write(
          `(matched by the ${result.replacer} matcher: ${result.replacements} replacement${result.replacements === 1 ? "" : "s"} at ${where}; ${saved})\n`
        )
      )
    })
).pipe(Command.withDescription("Show what the edit tool makes of FILE with --old/--new: the resulting text and the matcher used"))
