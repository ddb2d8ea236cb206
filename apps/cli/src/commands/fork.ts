import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { type Forked, Sessions } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { failure, usage } from "../CliError.ts"
import { quietRuntime } from "../QuietRuntime.ts"
import { loadSetup } from "../Setup.ts"

const report = (forked: Forked, source: string, json: boolean) =>
  Effect.sync(() => {
    if (json) return process.stdout.write(`${JSON.stringify(forked)}\n`)
    const s = forked.session
    process.stdout.write(`Forked session ${source} as ${s.id} (${s.title}) in ${s.directory}\n`)
    const files = forked.files
    if (files !== undefined) {
      const restored =
        files.restored.length === 0 ? "no file changed since that point" : `${files.restored.length} file(s) brought back: ${files.restored.join(", ")}`
      process.stdout.write(files.copied !== undefined ? `Copied ${files.copied} file(s) as they were then; ${restored}\n` : `${restored}\n`)
      for (const skipped of files.skipped) process.stdout.write(`  not restored: ${skipped.path} (${skipped.reason})\n`)
    }
    process.stdout.write(`Continue it with: reins --session ${s.id}${files?.copied !== undefined ? ` (from ${s.directory})` : ""}\n`)
  })

/** `reins sessions fork`: a new session from a point of another, with the files as they were there when asked. */
export const fork = Command.make(
  "fork",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The session to fork (see reins sessions list)")),
    at: Flag.String("at").pipe(Flag.withDescription("The last message the fork keeps (its id: reins sessions show); default: all of them"), Flag.optional),
    files: Flag.Boolean("files").pipe(
      Flag.withDescription("Also bring the files back to that point, in place: the later turns' changes undone (the session forked keeps its messages)"),
      Flag.withDefault(false)
    ),
    into: Flag.String("into").pipe(
      Flag.withDescription("Bring the files back in a copy of the project made in this new (or empty) directory, outside the project; the fork works there"),
      Flag.optional
    ),
    force: Flag.Boolean("force").pipe(
      Flag.withDescription("Overwrite files changed since the later turns (in place), or copy the turns' versions of them (--into)"),
      Flag.withDefault(false)
    ),
    format: Flag.Literals("format", ["text", "json"]).pipe(
      Flag.withDescription("text: what was done, on stdout; json: one object with the session and the files"),
      Flag.withDefault("text" as const)
    )
  },
  (input) =>
    Effect.gen(function* () {
      if (input.files && Option.isSome(input.into)) return yield* usage("--files brings the files back in place and --into in a copy: give one of them")
      if (input.force && !input.files && Option.isNone(input.into))
        return yield* usage("--force is for the files: give it with --files or --into (a fork of the conversation alone changes no file)")
      const setup = yield* loadSetup({ trust: "stored" })
      const into = Option.getOrUndefined(input.into)
      const program = Effect.gen(function* () {
        yield* (yield* SessionStore)
          .getSession(input.id)
          .pipe(Effect.mapError((e) => (e.reason === "not-found" ? usage(`No session ${input.id}: see reins sessions list`) : failure(e.message))))
        const forked = yield* (yield* Sessions).fork({
          sessionID: input.id,
          at: Option.getOrUndefined(input.at),
          files: input.files || into !== undefined ? { force: input.force, ...(into !== undefined ? { into } : {}) } : undefined
        })
        yield* report(forked, input.id, input.format === "json")
      })
      yield* program.pipe(
        Effect.provide(quietRuntime(setup)),
        Effect.mapError((e) => (e._tag === "CliError" ? e : failure(e.message)))
      )
    })
).pipe(
  Command.withDescription(
    "Fork a session at a message into a new session; --files brings the files back to that point in place, --into DIR in a copy of the project"
  )
)
