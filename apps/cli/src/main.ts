import { NodeServices } from "@effect/platform-node"
import { Effect, Logger } from "effect"
import { Command } from "effect/cli"
import { withoutRuntimeHints } from "@reins/provider"
import { chat, onTerminal, routeArgs } from "./commands/chat.ts"
import { compact } from "./commands/compact.ts"
import { debug } from "./commands/debug.ts"
import { models } from "./commands/models.ts"
import { permissions } from "./commands/permissions.ts"
import { run } from "./commands/run.ts"
import { runMain } from "./Signals.ts"
import { sessions } from "./commands/sessions.ts"
import { VERSION } from "./version.ts"

const reins = Command.make("reins").pipe(
  Command.withDescription("reins: a coding agent runtime. Run the agent, inspect its sessions."),
  Command.withSubcommands([chat, run, compact, sessions, models, permissions, debug])
)

// `reins` alone on a terminal, and `reins -c` / `reins --session ID`, open the interactive session (reins chat)
Command.runWith(reins, { version: VERSION })(routeArgs(process.argv.slice(2), onTerminal())).pipe(
  Effect.catchTag("CliError", (e) =>
    Effect.sync(() => {
      process.stderr.write(`reins: ${withoutRuntimeHints(e.message)}\n`)
      process.exitCode = e.code
    })
  ),
  // effect/cli has already printed the help and the parse errors; a usage error exits 2.
  Effect.catchTag("ShowHelp", (e) =>
    Effect.sync(() => {
      process.exitCode = e.errors.length > 0 ? 2 : 0
    })
  ),
  Effect.scoped,
  // stdout is the answer (or JSON for scripts): warnings from any layer go to stderr
  Effect.provideService(Logger.LogToStderr, true),
  Effect.provide(NodeServices.layer),
  // SIGINT, SIGTERM and SIGHUP interrupt the command (a running turn stops its commands)
  runMain({ disableErrorReporting: false })
)
