import { Context } from "effect"
import * as os from "node:os"
import * as path from "node:path"

/**
 * The data directory an environment names: `REINS_DATA_DIR`, else `$XDG_DATA_HOME/reins`, else
 * `$HOME/.local/share/reins`. The caller passes the environment and the home directory (the CLI entry
 * passes its own); library code never reads them from the process.
 */
export const defaultDataDir = (env: Readonly<Record<string, string | undefined>>, home: string) =>
  env.REINS_DATA_DIR ?? (env.XDG_DATA_HOME ? path.join(env.XDG_DATA_HOME, "reins") : path.join(home, ".local", "share", "reins"))

/** Where the database and spill files live. Required: the runtime provides it from its options; there is no default. */
export class DataDir extends Context.Service<DataDir, string>()("reins/domain/DataDir") {}

/** The directory the agent works in (tools resolve relative paths against it). Required: no `process.cwd()` default. */
export class WorkDir extends Context.Service<WorkDir, string>()("reins/domain/WorkDir") {}

/**
 * The home directory `~` and `$HOME` stand for in permission patterns and in scanned commands. A
 * setting: the runtime provides its `home` option; the default (the process's home) serves tests.
 */
export const HomeDir = Context.Reference<string>("reins/domain/HomeDir", { defaultValue: () => os.homedir() })
