// How a command's effect runs as the process: a CliError is one line on stderr and its exit code, warnings go to
// stderr (stdout is the answer), and SIGINT, SIGTERM and SIGHUP interrupt it (a running turn stops its commands).
import { Effect, Logger, type Scope } from "effect"
import { withoutRuntimeHints } from "@reins/provider"
import { CliError } from "./CliError.ts"
import { runMain } from "./Signals.ts"

export const runCli = <E>(program: Effect.Effect<void, CliError | E, Scope.Scope>) =>
  program.pipe(
    Effect.catchIf(
      (e): e is CliError => e instanceof CliError,
      (e) =>
        Effect.sync(() => {
          process.stderr.write(`reins: ${withoutRuntimeHints(e.message)}\n`)
          process.exitCode = e.code
        })
    ),
    Effect.scoped,
    Effect.provideService(Logger.LogToStderr, true),
    runMain({ disableErrorReporting: false })
  )
