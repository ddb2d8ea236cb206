import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Bus } from "@reins/domain"
import { Sessions } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { failure, fromRuntimeError, usage } from "../CliError.ts"
import { compactionSummary, count } from "../Output.ts"
import { quietRuntime } from "../QuietRuntime.ts"
import { loadSetup, resolveModel } from "../Setup.ts"

const flags = {
  session: Flag.String("session").pipe(
    Flag.withAlias("s"),
    Flag.withDescription("The session to compact (default: the latest session in this directory)"),
    Flag.optional
  ),
  model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withDescription("Model that writes the summary, as <provider>/<model>"), Flag.optional),
  format: Flag.Literals("format", ["text", "json"]).pipe(
    Flag.withDescription("text: progress on stderr, the result and the summary on stdout; json: one result object"),
    Flag.withDefault("text" as const)
  ),
  trust: Flag.Boolean("trust").pipe(
    Flag.withDescription("Trust this directory for this run: its hooks, MCP servers, plugins, tools and agents run (reins trust keeps it)"),
    Flag.withDefault(false)
  )
}

/** `reins compact`: summarises an idle session's older turns now, as an overflow would. */
export const compact = Command.make("compact", flags, (input) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ trust: input.trust ? "flag" : "stored" })
    const model = yield* resolveModel(setup, Option.getOrUndefined(input.model))
    // Nothing is asked while compacting; the permission policy only has to exist.
    const layer = quietRuntime(setup)
    const text = input.format === "text"

    const program = Effect.gen(function* () {
      const bus = yield* Bus
      const store = yield* SessionStore
      const sessions = yield* Sessions
      const sessionID = Option.isSome(input.session)
        ? (yield* store
            .getSession(input.session.value)
            .pipe(
              Effect.mapError((e) =>
                e.reason === "not-found" ? usage(`No session ${input.session.pipe(Option.getOrElse(() => ""))}: see reins sessions list`) : failure(e.message)
              )
            )).id
        : (yield* store.latestSession(setup.cwd))?.id
      if (sessionID === undefined) return yield* usage(`No session in ${setup.cwd} to compact: start one with reins run "…" (or pass --session ID)`)

      yield* bus.listen((event) =>
        Effect.sync(() => {
          if (event.type === "compaction.started" && event.sessionID === sessionID && text)
            process.stderr.write(`compacting session ${sessionID} (~${count(event.tokens)} tokens)…\n`)
        })
      )
      const result = yield* sessions.compact({ sessionID, model })
      const report = {
        sessionID,
        summaryMessageID: result.summaryMessageID,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        pruned: result.pruned,
        summarised: result.summarised,
        summary: result.summary
      }
      if (!text) return yield* Effect.sync(() => process.stdout.write(`${JSON.stringify(report)}\n`))
      yield* Effect.sync(() => process.stdout.write(`compacted ${sessionID}: ${compactionSummary(report)}\n\n${report.summary}\n`))
    })

    yield* program.pipe(Effect.provide(layer), Effect.mapError(fromRuntimeError))
  })
).pipe(Command.withDescription("Summarise a session's older turns now, to free its context"))
