// Entry point. `--version` answers before anything heavy loads; everything else imports main.
import { VERSION } from "./version.ts"

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`reins v${VERSION}\n`)
} else {
  await import("./main.ts")
}
