import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Sessions, type Undone } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { failure, usage } from "../CliError.ts"
import { quietRuntime } from "../QuietRuntime.ts"
import { loadSetup } from "../Setup.ts"

const session = Flag.String("session").pipe(
  Flag.withAlias("s"),
  Flag.withDescription("The session (default: the latest session in this directory)"),
  Flag.optional
)
const force = Flag.Boolean("force").pipe(
  Flag.withDescription("Overwrite files changed since the steps undone (or redone); without it they stop the command"),
  Flag.withDefault(false)
)
const format = Flag.Literals("format", ["text", "json"]).pipe(
  Flag.withDescription("text: what was done, on stdout; json: one result object"),
  Flag.withDefault("text" as const)
)

/** The session asked for, else the latest of this directory. */
const sessionOf = (asked: Option.Option<string>, cwd: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    if (Option.isSome(asked))
      return (yield* store
        .getSession(asked.value)
        .pipe(Effect.mapError((e) => (e.reason === "not-found" ? usage(`No session ${asked.value}: see reins sessions list`) : failure(e.message))))).id
    const latest = yield* store.latestSession(cwd)
    if (latest === undefined) return yield* usage(`No session in ${cwd}: nothing to undo`)
    return latest.id
  })

const report = (verb: "undid" | "redid", done: Undone, json: boolean) =>
  Effect.sync(() => {
    if (json) return process.stdout.write(`${JSON.stringify(done)}\n`)
    const messages = `${done.messages.length} message${done.messages.length === 1 ? "" : "s"}`
    const files = done.files.length === 0 ? "no files" : `${done.files.length} file${done.files.length === 1 ? "" : "s"}: ${done.files.join(", ")}`
    process.stdout.write(`${verb} ${messages} of session ${done.sessionID} (from ${done.messageID}); ${files}\n`)
    for (const s of done.skipped) process.stdout.write(`  not restored: ${s.path} (${s.reason})\n`)
  })

/** Maps what undo and redo fail with to one line and an exit code: a refusal the user can act on is a failure (1). */
const toCli = (error: { readonly _tag: string; readonly message: string }) =>
  error._tag === "CliError" ? (error as ReturnType<typeof usage>) : failure(error.message)

/** `reins undo`: the last turn (or every turn from --to on) undone, files and conversation. */
export const undo = Command.make(
  "undo",
  {
    session,
    to: Flag.String("to").pipe(
      Flag.withDescription("Undo back to before this user message (its id: reins sessions show); default: the last one"),
      Flag.optional
    ),
    filesOnly: Flag.Boolean("files-only").pipe(Flag.withDescription("Restore the files only; the conversation stays as it is"), Flag.withDefault(false)),
    conversationOnly: Flag.Boolean("conversation-only").pipe(
      Flag.withDescription("Take back the conversation only (the model no longer sees it); the files stay as they are"),
      Flag.withDefault(false)
    ),
    force,
    format
  },
  (input) =>
    Effect.gen(function* () {
      if (input.filesOnly && input.conversationOnly)
        return yield* usage("--files-only and --conversation-only together undo nothing: give one of them, or neither for both")
      const setup = yield* loadSetup({ trust: "stored" })
      const program = Effect.gen(function* () {
        const sessionID = yield* sessionOf(input.session, setup.cwd)
        const done = yield* (yield* Sessions).undo({
          sessionID,
          to: Option.getOrUndefined(input.to),
          files: !input.conversationOnly,
          conversation: !input.filesOnly,
          force: input.force
        })
        yield* report("undid", done, input.format === "json")
      })
      yield* program.pipe(Effect.provide(quietRuntime(setup)), Effect.mapError(toCli))
    })
).pipe(Command.withDescription("Undo the last turn (or back to a message): the files its steps changed, shell commands included, and the conversation"))

/** `reins redo`: the session's undo taken back. */
export const redo = Command.make("redo", { session, force, format }, (input) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ trust: "stored" })
    const program = Effect.gen(function* () {
      const sessionID = yield* sessionOf(input.session, setup.cwd)
      const done = yield* (yield* Sessions).redo({ sessionID, force: input.force })
      yield* report("redid", done, input.format === "json")
    })
    yield* program.pipe(Effect.provide(quietRuntime(setup)), Effect.mapError(toCli))
  })
).pipe(Command.withDescription("Take back the last undo: the files and the conversation as the turns left them"))
