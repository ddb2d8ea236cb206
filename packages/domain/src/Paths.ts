import { Context } from "effect"
import * as os from "node:os"
import * as path from "node:path"

/** Default data directory: `REINS_DATA_DIR`, else `$XDG_DATA_HOME/reins`, else `~/.local/share/reins`. */
export const defaultDataDir = (env: Record<string, string | undefined> = process.env) =>
  env.REINS_DATA_DIR ??
  (env.XDG_DATA_HOME ? path.join(env.XDG_DATA_HOME, "reins") : path.join(os.homedir(), ".local", "share", "reins"))

/** Where the database and spill files live. */
export const DataDir = Context.Reference<string>("reins/domain/DataDir", { defaultValue: () => defaultDataDir() })

/** The directory the agent works in (tools resolve relative paths against it). */
export const WorkDir = Context.Reference<string>("reins/domain/WorkDir", { defaultValue: () => process.cwd() })
