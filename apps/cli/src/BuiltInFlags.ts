import { CliConfig, GlobalFlag } from "effect/cli"

/**
 * The built-in global flags effect/cli adds to every command, less the two that do nothing useful in
 * reins: `--wizard` (builds a command line by prompts, for commands reins runs from the agent) and
 * `--log-level` (reins writes its own warnings; the flag set nothing a user could see). Kept:
 * `--help`, `--version` and `--completions <shell>` (prints a completion script).
 */
export const cliConfig = CliConfig.make({
  builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions]
})
