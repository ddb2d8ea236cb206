// `--sandbox auto|required|off`: the OS sandbox for the commands the agent runs, for this run (over
// `sandbox.mode` in reins.json). `--yolo` keeps it on; only `--sandbox off` turns it off.
import { Option } from "effect"
import { Flag } from "effect/cli"

export const sandboxFlag = Flag.Literals("sandbox", ["auto", "required", "off"]).pipe(
  Flag.withDescription("The OS sandbox for commands (bubblewrap): auto (the default: used where it runs), required (refuse to run commands without it), off"),
  Flag.optional
)

/** What makeRuntime is told of the flag. */
export const sandboxOption = (flag: Option.Option<"auto" | "required" | "off">) => (Option.isSome(flag) ? { sandbox: { mode: flag.value } } : {})
