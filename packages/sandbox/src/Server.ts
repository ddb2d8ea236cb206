// A long-running server reins starts (a local MCP server) inside bubblewrap, with a profile of its own:
// the project writable with git's and reins's code paths read-only, the same secrets hidden, and the
// network on unless its config says `none` (MCP servers are mostly clients of an API: GitHub, a search
// engine, a tracker). Its environment is what reins gives it (a few base keys and its config's own
// `env`, which may name its token), not scrubbed. Its client talks to it over stdin/stdout, so the
// seccomp filter cannot be handed over as a spawn's extra fd: /bin/sh opens it as fd 3 and execs bwrap.
import { Effect } from "effect"
import { type Availability, bwrapArgs } from "./Bwrap.ts"
import { type Places, type Profile, profileFor, type SandboxConfig } from "./Profile.ts"
import { seatbeltArgs } from "./Seatbelt.ts"

/** A server's own sandbox settings: `false` runs it outside; otherwise its network (default `all`) and more writable directories. */
export type ServerSandbox = false | { readonly network?: "none" | "all"; readonly writable?: ReadonlyArray<string> }

/** How to start a server: the program, its arguments and environment; nothing to hand over besides stdio. */
export interface ServerLaunch {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** Whether it runs inside the sandbox. */
  readonly sandboxed: boolean
}

/** The profile of a server: the commands' (writable places, hidden secrets), with the server's network and writable directories. */
export const serverProfile = (config: SandboxConfig | undefined, places: Places, own: Exclude<ServerSandbox, false> = {}): Profile =>
  profileFor(
    {
      ...config,
      network: { mode: own.network ?? "all" },
      writable: [...(config?.writable ?? []), ...(own.writable ?? [])]
    },
    places
  )

/** `/bin/sh` opening `filter` as fd 3 and becoming `bwrap args…` (same process: bwrap's parent stays reins, so --die-with-parent holds). */
export const withFilterFd = (bwrap: string, args: ReadonlyArray<string>, filter: string) => ({
  file: "/bin/sh",
  args: ["-c", 'exec "$@" 3<"$0"', filter, bwrap, ...args]
})

/** Why a server was not started: `sandbox.mode` is `required` and bubblewrap cannot run. */
export const serverRefusal = (reason: string) =>
  `sandbox.mode is "required" and ${reason}. Install bubblewrap, set "sandbox": {"mode": "auto"} in reins.json, or give this server "sandbox": false to run it without the sandbox`

/**
 * How to start `file args` as a server under `config` at `places`; `refuse` makes the error when the
 * sandbox is required and missing. Said once (a warning) when the mode is auto and bubblewrap is missing.
 */
export const makeWrapServer = <E>(options: {
  readonly config: SandboxConfig | undefined
  readonly places: Places
  readonly availability: () => Availability
  readonly seccomp: () => string | undefined
  readonly refuse: (message: string) => E
}) => {
  let told = false
  return (
    file: string,
    args: ReadonlyArray<string>,
    launch: { readonly cwd: string; readonly env: Readonly<Record<string, string>>; readonly sandbox?: ServerSandbox }
  ): Effect.Effect<ServerLaunch, E> =>
    Effect.gen(function* () {
      const plain = { file, args, env: launch.env, sandboxed: false }
      const mode = options.config?.mode ?? "auto"
      if (mode === "off" || launch.sandbox === false) return plain
      const availability = options.availability()
      if (!availability.available) {
        if (mode === "required") return yield* Effect.fail(options.refuse(serverRefusal(availability.reason)))
        if (!told) {
          told = true
          yield* Effect.logWarning(
            `MCP servers run without a sandbox: ${availability.reason} (sandbox.mode "off" silences this, "required" refuses to start them)`
          )
        }
        return plain
      }
      const profile = serverProfile(options.config, options.places, launch.sandbox)
      if (availability.seatbelt) return { file: availability.bwrap, args: [...seatbeltArgs(profile), file, ...args], env: launch.env, sandboxed: true }
      const filter = options.seccomp()
      const wrapped = [...bwrapArgs(profile, launch.cwd, filter === undefined ? undefined : 3), file, ...args]
      const started = filter === undefined ? { file: availability.bwrap, args: wrapped } : withFilterFd(availability.bwrap, wrapped, filter)
      return { ...started, env: launch.env, sandboxed: true }
    })
}
