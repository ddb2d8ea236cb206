// `--config FILE` anywhere on the command line names a config file of the user's own, as REINS_CONFIG does: it is
// taken off the line before the command is parsed and set in the environment, so every command, the runtime it
// builds and the reins processes it starts read the same file. A project's config never names it (it is the user's).
import * as path from "node:path"

export type ConfigFlag = { readonly args: ReadonlyArray<string>; readonly file?: string } | { readonly problem: string }

/** The line without `--config FILE` / `--config=FILE`, and the file (resolved against `cwd`); the last one wins. */
export const takeConfigFlag = (args: ReadonlyArray<string>, cwd: string): ConfigFlag => {
  const rest: Array<string> = []
  let file: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    // after `--`, everything is the prompt's
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === "--config" || arg.startsWith("--config=")) {
      const value = arg === "--config" ? args[++i] : arg.slice("--config=".length)
      if (value === undefined || value === "" || value.startsWith("-")) {
        return { problem: "--config needs a file: reins --config ~/work/reins.json run …" }
      }
      file = path.resolve(cwd, value)
      continue
    }
    rest.push(arg)
  }
  return file === undefined ? { args: rest } : { args: rest, file }
}
