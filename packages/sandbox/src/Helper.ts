// How reins starts a helper process of its own (grep's search, the sandbox's network bridge) with the
// runtime it runs on. From source or the bundle that runtime is bun, given the helper's script. In the
// standalone executable (`bun build --compile`, what `npm i -g reins` installs) process.execPath is reins
// itself: the helpers are compiled in as extra entry points, and the executable's entry runs the one
// named after HELPER_FLAG instead of the CLI (apps/cli/src/bin.ts).

/** The helpers compiled into the standalone executable beside the CLI: each is the entry point of that name. */
export const HELPER_NAMES = ["GrepChild", "BridgeMain", "SandboxHost"] as const
export type HelperName = (typeof HELPER_NAMES)[number]

/** The first argument that makes the standalone executable run a helper: `reins --reins-helper NAME ARGS…`. */
export const HELPER_FLAG = "--reins-helper"

/** Where Bun's standalone executables keep their embedded modules: `/$bunfs/root/…`, or `B:\~BUN\root\…` on Windows. */
const EMBEDDED = /^(?:\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/

/** Whether this process is the standalone executable (its main module is embedded in it). */
export const isStandalone = (main: string = Bun.main): boolean => EMBEDDED.test(main)

/**
 * The command (program first) that runs helper `name` with `args`: under bun, `bunArgs` (the script) with
 * the directory's .env and bunfig.toml left unread (a cloned repository's preload would run first); in
 * the standalone executable, the executable's own entry, which reads neither (pack-cli.ts compiles it so).
 */
export const helperCommand = (name: HelperName, bunArgs: ReadonlyArray<string>, args: ReadonlyArray<string>): Array<string> =>
  isStandalone() ? [process.execPath, HELPER_FLAG, name, ...args] : [process.execPath, "--no-env-file", "--config=/dev/null", ...bunArgs, ...args]
