import { Context } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * The data directory an environment names: `REINS_DATA_DIR`, else `$XDG_DATA_HOME/reins`, else
 * `$HOME/.local/share/reins`. The caller passes the environment and the home directory (the CLI entry
 * passes its own); library code never reads them from the process.
 */
export const defaultDataDir = (env: Readonly<Record<string, string | undefined>>, home: string) =>
  // absolute, so the sandbox and the permission rules that hide its secrets (auth.json…) name the place really used
  env.REINS_DATA_DIR ? path.resolve(env.REINS_DATA_DIR) : path.join(xdgDir(env.XDG_DATA_HOME) ?? path.join(home, ".local", "share"), "reins")

/**
 * An XDG base directory variable's value, when usable: the XDG spec says a relative one is invalid and ignored. (Taken
 * relative to the working directory, a cloned repository's files would be the user's own config or key store.)
 */
export const xdgDir = (value: string | undefined) => (value !== undefined && path.isAbsolute(value) ? value : undefined)

/** Where the database and spill files live. Required: the runtime provides it from its options; there is no default. */
export class DataDir extends Context.Service<DataDir, string>()("reins/domain/DataDir") {}

/** The directory the agent works in (tools resolve relative paths against it). Required: no `process.cwd()` default. */
export class WorkDir extends Context.Service<WorkDir, string>()("reins/domain/WorkDir") {}

/**
 * The home directory `~` and `$HOME` stand for in permission patterns and in scanned commands. A
 * setting: the runtime provides its `home` option; the default (the process's home) serves tests.
 */
export const HomeDir = Context.Reference<string>("reins/domain/HomeDir", { defaultValue: () => os.homedir() })

const exists = (file: string) => {
  try {
    fs.statSync(file)
    return true
  } catch {
    return false
  }
}

/** The project's root: the nearest directory at or above `start` that holds `.git`, else `start` itself. */
export const projectRoot = (start: string) => {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (exists(path.join(dir, ".git"))) return dir
    if (path.dirname(dir) === dir) return path.resolve(start)
  }
}

/** A path with every symlink resolved (as far as it exists). */
export const realPath = (file: string) => {
  try {
    return fs.realpathSync(file)
  } catch {
    return path.resolve(file)
  }
}

/** Whether `file`, symlinks resolved, lies in one of `roots` (symlinks resolved too). */
export const liesWithin = (file: string, roots: ReadonlyArray<string>) => {
  const real = realPath(file)
  return roots.some((root) => {
    const r = realPath(root)
    return real === r || real.startsWith(r.endsWith(path.sep) ? r : `${r}${path.sep}`)
  })
}

/**
 * Where a file put into a prompt (an agent's prompt file, the summary template, an instruction file)
 * may come from: the project and the user's reins config dir. A link out of them — `AGENTS.md` →
 * `/proc/self/environ`, `"prompt": "~/.ssh/id_rsa"` — would send that file to the provider.
 */
export const promptRoots = (cwd: string, configDir: string) => [projectRoot(cwd), configDir]

/** Why a prompt file may not be read (it resolves outside the project and the config dir), or undefined. */
export const outsidePromptRoots = (file: string, cwd: string, configDir: string) =>
  liesWithin(file, promptRoots(cwd, configDir))
    ? undefined
    : `${file} ${realPath(file) !== path.resolve(file) ? `resolves to ${realPath(file)}, which is ` : "is "}outside the project (${projectRoot(cwd)}) and your reins config dir (${configDir}): reins does not put it into a prompt. Move the file into one of them.`
