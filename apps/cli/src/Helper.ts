// The standalone executable's helper processes. `scripts/pack-cli.ts` compiles each helper named in
// @reins/sandbox's Helper.ts in as an entry point of its own, beside the CLI's; `reins --reins-helper
// NAME ARGS…` (what helperCommand starts) imports that entry, which then reads ARGS as it would under bun.
import type { HelperName } from "@reins/sandbox"
import * as fs from "node:fs"
import * as path from "node:path"

// the list again, not imported: a helper process starts without loading the sandbox package; the type below fails
// to check when this list and @reins/sandbox's HELPER_NAMES differ either way
const LOCAL = ["GrepChild", "BridgeMain", "SandboxHost"] as const
const HELPERS: ReadonlyArray<string> = LOCAL
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const same: Same<(typeof LOCAL)[number], HelperName> = true
void same

/** Runs the compiled-in helper `name`; an unknown name, or a build without helpers, is one line and exit 2. */
export const runHelper = async (name: string | undefined) => {
  const entry = path.join(path.dirname(Bun.main), `${name}.js`)
  if (name === undefined || !HELPERS.includes(name) || !fs.existsSync(entry)) {
    process.stderr.write(`reins: --reins-helper runs the standalone executable's own helpers (${HELPERS.join(", ")}); it is not for use by hand\n`)
    process.exit(2)
  }
  await import(entry)
}
