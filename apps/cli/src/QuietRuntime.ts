import { makeRuntime } from "@reins/runtime"
import { runtimeProject, type Setup } from "./Setup.ts"
import { VERSION } from "./version.ts"

/** The runtime of a command that runs no turn and asks nothing (compact, undo, redo): any question is denied. */
export const quietRuntime = (setup: Setup) =>
  makeRuntime({
    cwd: setup.cwd,
    dataDir: setup.dataDir,
    config: setup.config,
    env: setup.env,
    storedKeys: setup.storedKeys,
    version: VERSION,
    project: runtimeProject(setup),
    permission: { nonInteractive: "deny" }
  })
