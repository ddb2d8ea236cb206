import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { run } from "./commands/run.ts"
import { sessions } from "./commands/sessions.ts"
import { VERSION } from "./version.ts"

const reins = Command.make("reins").pipe(
  Command.withDescription("reins: a coding agent runtime. Run the agent, inspect its sessions."),
  Command.withSubcommands([run, sessions])
)

Command.run(reins, { version: VERSION }).pipe(
  Effect.catchTag("CliError", (e) =>
    Effect.sync(() => {
      process.stderr.write(`reins: ${e.message}\n`)
      process.exitCode = e.code
    })
  ),
  Effect.scoped,
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
