import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { builtinReducers, evidenceLine, runReducers } from "@reins/reduce"
import { cut, MAX_BYTES, MAX_LINES } from "@reins/truncate"
import * as fs from "node:fs"
import { failure, usage } from "../CliError.ts"
import { applyPatchCommand } from "./debugApplyPatch.ts"
import { configCommand } from "./debugConfig.ts"
import { editCommand } from "./debugEdit.ts"
import { permission } from "./debugPermission.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
const input = Argument.String("file").pipe(Argument.withDescription("The output to work on; - or nothing reads stdin"), Argument.optional)
const maxLines = Flag.Int("max-lines").pipe(Flag.withDescription(`Line limit (default ${MAX_LINES})`), Flag.optional)
const maxBytes = Flag.Int("max-bytes").pipe(Flag.withDescription(`Byte limit (default ${MAX_BYTES})`), Flag.optional)

/** The text of FILE, or of stdin for `-` or no FILE; a terminal on stdin is a usage error, not a hang. */
const readInput = (file: Option.Option<string>) =>
  Effect.gen(function* () {
    const name = Option.getOrElse(file, () => "-")
    if (name === "-") {
      if (process.stdin.isTTY) return yield* Effect.fail(usage("Give a FILE, or pipe the output in: some-command | reins debug …"))
      return yield* Effect.tryPromise({ try: () => Bun.stdin.text(), catch: (e) => failure(`Could not read stdin: ${(e as Error).message}`) })
    }
    return yield* Effect.try({
      try: () => fs.readFileSync(name, "utf8"),
      catch: (e) => usage(`Could not read ${name}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`)
    })
  })

const positive = (name: string, value: Option.Option<number>, fallback: number) =>
  Option.match(value, {
    onNone: () => Effect.succeed(fallback),
    onSome: (n) => (n > 0 ? Effect.succeed(n) : Effect.fail(usage(`--${name} must be a positive number, got ${n}`)))
  })

/** The limits from --max-lines/--max-bytes, defaults where unset. */
const limitsOf = (opts: { readonly maxLines: Option.Option<number>; readonly maxBytes: Option.Option<number> }) =>
  Effect.all({ maxLines: positive("max-lines", opts.maxLines, MAX_LINES), maxBytes: positive("max-bytes", opts.maxBytes, MAX_BYTES) })

const reduce = Command.make(
  "reduce",
  {
    command: Flag.String("command").pipe(Flag.withDescription('The command that produced the output, e.g. "go test ./..."'), Flag.optional),
    format,
    maxLines,
    maxBytes,
    file: input
  },
  (opts) =>
    Effect.gen(function* () {
      const text = yield* readInput(opts.file)
      const limits = yield* limitsOf(opts)
      const command = Option.getOrUndefined(opts.command)
      // Every size is reduced here; in a session reducers only run on outputs over 8 KiB.
      const result = runReducers(builtinReducers, { text, ...(command !== undefined ? { command } : {}), ...limits }, { minBytes: 0 })
      if (opts.format === "json") {
        return yield* Console.log(JSON.stringify({ reduced: result !== undefined, text: result?.text ?? text, evidence: result?.evidence ?? null }, null, 2))
      }
      if (!result) {
        yield* Console.log(text.replace(/\n$/, ""))
        return yield* Effect.sync(() => process.stderr.write(`(no reducer applies to this output: ${Buffer.byteLength(text)} bytes left as they are)\n`))
      }
      yield* Console.log(result.text.replace(/\n$/, ""))
      yield* Effect.sync(() => process.stderr.write(`${evidenceLine(result.evidence)}\n`))
    })
).pipe(Command.withDescription("Reduce a tool output as reins would for the model, and show the evidence"))

const truncate = Command.make(
  "truncate",
  {
    direction: Flag.Literals("direction", ["head", "tail", "head_tail"]).pipe(Flag.withDescription("Which end to keep"), Flag.withDefault("tail" as const)),
    format,
    maxLines,
    maxBytes,
    file: input
  },
  (opts) =>
    Effect.gen(function* () {
      const text = yield* readInput(opts.file)
      const r = cut(text, { direction: opts.direction, ...(yield* limitsOf(opts)) })
      if (opts.format === "json") return yield* Console.log(JSON.stringify(r, null, 2))
      yield* Console.log(r.text.replace(/\n$/, ""))
      const kept = r.totalLines - r.droppedLines
      yield* Effect.sync(() =>
        process.stderr.write(
          r.truncated
            ? `(kept ${kept} of ${r.totalLines} lines; ${Buffer.byteLength(r.text)} of ${r.totalBytes} bytes)\n`
            : `(within the limits: ${r.totalLines} lines, ${r.totalBytes} bytes)\n`
        )
      )
    })
).pipe(Command.withDescription("Cut a text to the limits as reins would (without writing a spill file)"))

export const debug = Command.make("debug").pipe(
  Command.withDescription("Tools for looking at what reins does: output reduction, truncation, permissions, edits, config"),
  Command.withSubcommands([reduce, truncate, permission, editCommand, applyPatchCommand, configCommand])
)
