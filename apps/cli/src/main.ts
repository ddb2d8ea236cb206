import { Effect } from "effect"
import { CliConfig, Command, Flag, GlobalFlag } from "effect/cli"
import { cliConfig } from "./BuiltInFlags.ts"
import * as Platform from "./Platform.ts"
import { chat, onTerminal, routeArgs } from "./commands/chat.ts"
import { acp } from "./commands/acp.ts"
import { compact } from "./commands/compact.ts"
import { redo, undo } from "./commands/undo.ts"
import { config } from "./commands/config.ts"
import { takeConfigFlag } from "./ConfigFlag.ts"
import { takeDatabaseFlag, applyDatabaseUrl } from "./DatabaseFlag.ts"
import { debug } from "./commands/debug.ts"
import { mcp } from "./commands/mcp.ts"
import { models } from "./commands/models.ts"
import { permissions } from "./commands/permissions.ts"
import { run } from "./commands/run.ts"
import { runCli } from "./RunCli.ts"
import { serve } from "./commands/serve.ts"
import { checkpoints } from "./commands/checkpoints.ts"
import { sessions } from "./commands/sessions.ts"
import { trust } from "./commands/trust.ts"
import { auth } from "./commands/auth.ts"
import { init } from "./commands/init.ts"
import { VERSION } from "./version.ts"

// listed for --help; the flag itself is taken off the line first (ConfigFlag), so every command reads it from the environment
const configFlag = GlobalFlag.Setting("config")({
  flag: Flag.String("config").pipe(Flag.withDescription("A reins config file of yours, over the others (as REINS_CONFIG)"), Flag.optional)
})

// the same for --database (DatabaseFlag)
const databaseFlag = GlobalFlag.Setting("database")({
  flag: Flag.String("database").pipe(
    Flag.withDescription("The session database: a postgres:// URL for PostgreSQL (as REINS_DATABASE_URL); default SQLite in the data directory"),
    Flag.optional
  )
})

const reins = Command.make("reins").pipe(
  Command.withDescription("reins: a coding agent runtime. Run the agent, inspect its sessions."),
  Command.withSubcommands([chat, run, serve, acp, compact, undo, redo, sessions, checkpoints, models, mcp, permissions, trust, auth, init, config, debug]),
  Command.withGlobalFlags([configFlag, databaseFlag])
)

const configLine = takeConfigFlag(process.argv.slice(2), process.cwd())
const line = "problem" in configLine ? configLine : takeDatabaseFlag(configLine.args)
if ("problem" in line) {
  process.stderr.write(`reins: ${line.problem}\n`)
  process.exit(2)
}
if ("file" in configLine && configLine.file !== undefined) process.env.REINS_CONFIG = configLine.file
if (line.url !== undefined) applyDatabaseUrl(line.url, process.env, (text) => process.stderr.write(text))

// `reins` alone on a terminal, and `reins -c` / `reins --session ID`, open the interactive session (reins chat)
Command.runWith(reins, { version: VERSION })(routeArgs(line.args, onTerminal())).pipe(
  // effect/cli has already printed the help and the parse errors; a usage error exits 2.
  Effect.catchTag("ShowHelp", (e) =>
    Effect.sync(() => {
      process.exitCode = e.errors.length > 0 ? 2 : 0
    })
  ),
  Effect.provideService(CliConfig.CliConfig, cliConfig),
  Effect.provide(Platform.layer),
  // a CliError is one line and its exit code; warnings on stderr; SIGINT, SIGTERM and SIGHUP interrupt the command
  runCli
)
