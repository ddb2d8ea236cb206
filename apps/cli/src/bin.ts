// Entry point. `--version` answers before anything heavy loads; everything else imports main.
import { takeConfigFlag } from "./ConfigFlag.ts"
import { applyDatabaseUrl } from "./DatabaseFlag.ts"
import { interactiveLaunchWithDatabase } from "./Interactive.ts"
import { VERSION } from "./version.ts"

const cli = async () => {
  // `--config FILE` is taken off first (main does the same for the commands), so `reins --config F` opens the chat fast too
  const line = takeConfigFlag(process.argv.slice(2), process.cwd())
  const args = "args" in line ? line.args : process.argv.slice(2)
  if ("args" in line && line.file !== undefined) process.env.REINS_CONFIG = line.file
  // an interactive launch skips the command line's parser and commands: its prompt is drawn sooner. Its `--database
  // URL` is used here; any other launch leaves it to main, which takes it off again (and refuses a bad one)
  const launch = interactiveLaunchWithDatabase(args, Boolean(process.stdin.isTTY && process.stdout.isTTY))
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
    process.stdout.write(`reins v${VERSION}\n`)
  } else if (launch !== undefined) {
    if (launch.database !== undefined) applyDatabaseUrl(launch.database, process.env, (text) => process.stderr.write(text))
    const { startChat } = await import("./ChatMain.ts")
    startChat(launch.chat)
  } else {
    await import("./main.ts")
  }
}

// the standalone executable's helper processes (grep's search, the sandbox's bridge): `reins --reins-helper NAME …`
// runs the entry point NAME compiled in beside this one (HELPER_FLAG in @reins/sandbox's Helper.ts)
if (process.argv[2] === "--reins-helper") await (await import("./Helper.ts")).runHelper(process.argv[3])
else await cli()
