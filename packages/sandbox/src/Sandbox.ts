// The Sandbox service: how a command the agent runs is started — inside bubblewrap with the profile
// (Linux), or as it is when the sandbox is off or (mode auto) missing, said once. Its environment is
// scrubbed of secrets either way unless the sandbox is off. With `network.mode` allow, the command runs
// behind the bridge (Bridge.ts) and reaches the listed hosts through reins's proxy (Proxy.ts), started
// at the first such command and stopped with the layer. A blocked write, network call or host is
// explained to the model from the command's output.
import { Context, Effect, Layer, Schema } from "effect"
import { bridgeCommand } from "./Bridge.ts"
import { type Availability, bwrapArgs, probeBwrap } from "./Bwrap.ts"
import { scrubEnv } from "./Env.ts"
import { type Escalation, escalationFor, grantedProfile, type Want } from "./Escalation.ts"
import { watchGit } from "./GitGuard.ts"
import { helperCommand } from "./Helper.ts"
import { type HostedChild, mountKey, type SandboxHost, startHost } from "./Host.ts"
import { hostScript } from "./HostBody.ts"
import { type Channel, makeProxy, type Resolve } from "./Proxy.ts"
import { seatbeltArgs } from "./Seatbelt.ts"
import { seccompFile } from "./Seccomp.ts"
import { type Places, type Profile, profileFor, type SandboxConfig } from "./Profile.ts"
import { makeWrapServer, type ServerLaunch, type ServerSandbox } from "./Server.ts"

/** How to start a command: the program, its arguments and its environment. */
export interface Launch {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** Whether it runs inside the sandbox. */
  readonly sandboxed: boolean
  /** Files to open read-only and hand to the program as fd 3, 4, … (the seccomp filter, for bwrap). */
  readonly readFds?: ReadonlyArray<string>
  /**
   * A socketpair to hand the program as the fd after `readFds` (Node's extra stdio `"pipe"`): the spawner
   * gives its own end to `attach`. The bridge's channel to the proxy, in `allow` mode.
   */
  readonly channel?: Channel
  /**
   * The session's long-lived sandbox (Host.ts) when it runs with the very mounts this launch's bwrap would make:
   * the command is spawned in it (`input` on its stdin) instead of `file args`; undefined when it took another
   * command (or ended) since: `file args` then.
   */
  readonly hosted?: { spawn(input?: string): HostedChild | undefined }
}

/** `sandbox.mode` is `required` and no sandbox can run here: nothing was started. */
export class SandboxUnavailable extends Schema.TaggedError<SandboxUnavailable>()("SandboxUnavailable", { message: Schema.String }) {}

export class Sandbox extends Context.Service<
  Sandbox,
  {
    /** How to run `file args` in `cwd` with `env`. */
    wrap(
      file: string,
      args: ReadonlyArray<string>,
      options: {
        readonly cwd: string
        readonly env: Readonly<Record<string, string | undefined>>
        /** What the user granted this command beyond the profile (see `escalation`). */
        readonly grant?: Escalation
      }
    ): Effect.Effect<Launch, SandboxUnavailable>
    /**
     * What a command that wants `want` would need beyond the profile, to ask the user for; undefined
     * when nothing (the profile allows it, or commands run without a sandbox here).
     */
    escalation(want: Want): Escalation | undefined
    /** How to start a long-running server (a local MCP server) with its own profile; its stdio is its only channel (Server.ts). */
    wrapServer(
      file: string,
      args: ReadonlyArray<string>,
      options: { readonly cwd: string; readonly env: Readonly<Record<string, string>>; readonly sandbox?: ServerSandbox }
    ): Effect.Effect<ServerLaunch, SandboxUnavailable>
    /**
     * Looks at the repository's code-running places now (before a sandboxed command); the function it gives,
     * called after, takes away what appeared there (GitGuard.ts) and says so, or gives undefined.
     */
    watchGit(): () => string | undefined
    /** A note for the model when a sandboxed command's output shows the sandbox stopped it (`launch`: the hosts its proxy refused). */
    explain(output: string, launch?: { readonly channel?: Channel | undefined }): string | undefined
  }
>()("reins/sandbox/Sandbox") {
  /** The sandbox for `config` at `places`; bubblewrap is probed once, here. */
  static readonly layer = (options: {
    readonly config: SandboxConfig | undefined
    readonly places: Places
    /** Whether bubblewrap runs here; default: probed once (with `env`'s PATH and REINS_BWRAP). */
    readonly availability?: Availability
    readonly env?: Readonly<Record<string, string | undefined>>
    /** A bun the bridge runs with (`allow` mode); default reins's own runtime (Helper.ts). */
    readonly runtime?: string
    /** How the proxy resolves names; default `dns.lookup` (tests map names to their servers). */
    readonly resolve?: Resolve
    /** Which git config keys name a command (the permission scan's table): taken out of repositories a command makes. */
    readonly gitCodeKey?: (key: string) => boolean
    /** Whether commands may run in a long-lived sandbox (Host.ts); default true. */
    readonly host?: boolean
  }) =>
    Layer.effect(
      Sandbox,
      Effect.gen(function* () {
        // made at the first command, not while the runtime starts: a run that runs no command, or runs
        // them with the sandbox off, pays nothing (the profile lists the temp dir, which may be large)
        const mode = options.config?.mode ?? "auto"
        let made: Profile | undefined
        const profileNow = () => {
          made ??= profileFor(options.config, options.places)
          return made
        }
        // probed at the first command, not while the runtime starts (a run that runs no command pays nothing)
        let probed: Availability | undefined = mode === "off" ? { available: false, reason: "sandbox.mode is off" } : options.availability
        const availabilityNow = () => {
          probed ??= probeBwrap(options.env)
          return probed
        }
        let told = false
        const seccomp = seccompFile(options.places.dataDir)
        // the proxy starts with the first command that needs it and stops with the layer
        let proxy: ReturnType<typeof makeProxy> | undefined
        yield* Effect.addFinalizer(() => Effect.sync(() => proxy?.close()))
        const proxyNow = () => {
          proxy ??= makeProxy({ allow: profileNow().allow, ...(options.resolve ? { resolve: options.resolve } : {}) })
          return proxy
        }
        // the long-lived sandbox: started by the first command that could use it (which runs in a bwrap of its own
        // meanwhile), and again when the mounts a command would get differ from its own (the old one ends once its
        // commands have); a host that could not start is not tried again
        let host: SandboxHost | undefined
        let hostBroken = options.host === false
        const hosts = new Set<SandboxHost>()
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const h of hosts) h.close()
          })
        )
        const hostFor = (bwrap: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>>, readFds: ReadonlyArray<string>) => {
          if (hostBroken) return undefined
          const key = mountKey(args)
          // one command at a time: another meanwhile runs in a bubblewrap of its own
          if (host !== undefined && !host.ended() && host.key === key && !host.spoiled()) return host.idle() ? host : undefined
          // one that ended on its own before it ever ran (bun cannot start in the sandbox here): commands run as before
          if (host?.failed()) hostBroken = true
          if (host !== undefined && host.running() === 0) host.close()
          if (hostBroken) return undefined
          const runtime = options.runtime
          const started = startHost({
            bwrap,
            // the host is the sandbox's pid 1, with a message-queue file system to see what commands leave there
            bwrapArgs: [...args.slice(0, -1), "--mqueue", "/dev/mqueue", "--as-pid-1", "--"],
            command: [
              ...(runtime !== undefined
                ? [runtime, "--no-env-file", "--config=/dev/null", "-e", hostScript]
                : helperCommand("SandboxHost", ["-e", hostScript], [])),
              // its own network namespace: what a command leaves there is looked for (HostBody.ts)
              ...(args.includes("--unshare-net") ? ["own-net"] : [])
            ],
            env,
            readFds,
            key,
            onIdle: () => {
              if (started !== host || started.ended() || started.spoiled()) {
                started.close()
                hosts.delete(started)
              }
            }
          })
          hosts.add(started)
          host = started
          return undefined
        }
        const wrap = (
          file: string,
          args: ReadonlyArray<string>,
          launch: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>>; readonly grant?: Escalation }
        ) =>
          Effect.gen(function* () {
            if (mode === "off") return { file, args, env: definedOnly(launch.env), sandboxed: false }
            const profile = profileNow()
            const { env } = scrubEnv(launch.env, profile.envPass)
            const availability = availabilityNow()
            if (!availability.available) {
              if (profile.mode === "required") {
                return yield* new SandboxUnavailable({
                  message: `Not run: sandbox.mode is "required" and ${availability.reason}. Install bubblewrap, or set "sandbox": {"mode": "auto"} in reins.json to run commands without it.`
                })
              }
              if (!told) {
                told = true
                yield* Effect.logWarning(`commands run without a sandbox: ${availability.reason} (sandbox.mode "off" silences this, "required" refuses to run)`)
              }
              return { file, args, env, sandboxed: false }
            }
            const used = launch.grant === undefined ? profile : grantedProfile(options.config, options.places, launch.grant, profile)
            // macOS: the same profile as a Seatbelt policy (no proxy there: allow mode is no network)
            if (availability.seatbelt) return { file: availability.bwrap, args: [...seatbeltArgs(used), file, ...args], env, sandboxed: true }
            // the seccomp filter reaches bwrap as fd 3, opened by whoever spawns it (readFds); the bridge's channel follows
            const filter = seccomp()
            const readFds = filter === undefined ? [] : [filter]
            const bwrap = bwrapArgs(used, launch.cwd, filter === undefined ? undefined : 3)
            if (used.network === "allow") {
              const command = bridgeCommand(options.runtime, 3 + readFds.length, file, args)
              return { file: availability.bwrap, args: [...bwrap, ...command], env, sandboxed: true, readFds, channel: proxyNow().openChannel(used.allow) }
            }
            const hosted = launch.grant === undefined ? hostFor(availability.bwrap, bwrap, env, readFds) : undefined
            return {
              file: availability.bwrap,
              args: [...bwrap, file, ...args],
              env,
              sandboxed: true,
              ...(filter === undefined ? {} : { readFds }),
              ...(hosted === undefined
                ? {}
                : { hosted: { spawn: (input?: string) => (hosted.idle() ? hosted.spawn(file, args, env, launch.cwd, input) : undefined) } })
            }
          })
        return Sandbox.of({
          wrap,
          escalation: (want) => (mode !== "off" && availabilityNow().available ? escalationFor(profileNow(), options.places.home, want) : undefined),
          wrapServer: makeWrapServer({
            config: options.config,
            places: options.places,
            availability: availabilityNow,
            seccomp,
            refuse: (message) => new SandboxUnavailable({ message })
          }),
          watchGit: () => watchGit(options.places, options.gitCodeKey),
          // only a sandboxed command's output is explained, so the probe has run by then
          explain: (output, launch) => (probed?.available ? explainBlocked(output, profileNow(), launch?.channel?.refused) : undefined)
        })
      })
    )
}

/**
 * The environment without its unset names, and without reins's own session database URL even with the sandbox
 * off: `--database` puts it in reins's environment (it may carry a password), and no command the model runs needs it.
 */
const definedOnly = (env: Readonly<Record<string, string | undefined>>) => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== "REINS_DATABASE_URL") out[k] = v
  return out
}

const READ_ONLY = /(?:^|[\s'"‘`(])([^\s'"’`:()]*\/[^\s'"’`:()]*)['"’`]?\s*:\s*(?:[^:\n]*:\s*)?Read-only file system/gm
const NETWORK =
  /(Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|Failed to connect to|Connection refused|ECONNREFUSED|ENETUNREACH)/

/** How tools report the proxy's 403 (curl, git, pip, node's tunnel agents), and the proxy's own body (plain http). */
const PROXY_REFUSED =
  /CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy after CONNECT|Tunnel connection failed: 403|statusCode=403|reins's sandbox refused/
const REFUSED_HOST = /reins's sandbox refused ([^\s:]+):/g

/** What the sandbox stopped, from the output's error messages: the paths it kept read-only, the network, the hosts its proxy refused (`refused`: those the command's channel recorded). */
export const explainBlocked = (output: string, profile: Profile, refused: ReadonlyArray<string> = []): string | undefined => {
  const paths = new Set<string>()
  for (const m of output.matchAll(READ_ONLY)) if (m[1]) paths.add(m[1])
  const readOnlyHit = paths.size > 0 || /Read-only file system/.test(output)
  const hosts = new Set(refused)
  for (const m of output.matchAll(REFUSED_HOST)) if (m[1]) hosts.add(m[1])
  const proxyHit = profile.network === "allow" && (PROXY_REFUSED.test(output) || (hosts.size > 0 && /\b403\b/.test(output)))
  const networkHit = profile.network !== "all" && !proxyHit && NETWORK.test(output)
  const socketHit = /(socket|connect)[^\n]*(Operation not permitted|EPERM)|(EPERM|Operation not permitted)[^\n]*(socket|connect)/i.test(output)
  if (!readOnlyHit && !networkHit && !socketHit && !proxyHit) return undefined
  const parts: Array<string> = []
  if (readOnlyHit) {
    const named = [...paths].slice(0, 5).join(", ")
    parts.push(
      `the sandbox kept ${named || "a path"} read-only: commands may write only in ${profile.writable[0]}, ${profile.writable[1]} and package caches` +
        (profile.readOnly.length > 0 ? ` (not its git hooks, git config or reins config)` : "")
    )
  }
  if (proxyHit) {
    const named = [...hosts].slice(0, 5).join(", ")
    parts.push(`the sandbox's proxy refused ${named ? `host ${named}` : "a host"} (not in sandbox.network.allow, or it resolves to a private address)`)
  }
  if (networkHit)
    parts.push(
      profile.network === "allow"
        ? "the sandbox has no direct network: only HTTP(S) through its proxy (HTTP_PROXY, HTTPS_PROXY) reaches the hosts in sandbox.network.allow"
        : "the sandbox has no network"
    )
  if (socketHit) parts.push("the sandbox refuses Unix-domain sockets (they reach programs outside it)")
  const network = profile.network === "allow" ? `"network": {"allow": [...the hosts]}` : `"network": {"mode": "allow", "allow": ["host"]} or {"mode": "all"}`
  const next = [
    ...(networkHit || proxyHit ? ["If the task needs the network, run the command again with network: true: the user is asked for it."] : []),
    ...(readOnlyHit ? ["A write outside is asked for when the command names the path itself (an absolute path operand or redirection)."] : [])
  ]
  return `Blocked by reins's sandbox: ${parts.join("; ")}. This is not a bug in the command; do not work around it. ${next.join(" ")}${next.length > 0 ? " " : ""}Otherwise tell the user (they can allow it with "sandbox" in reins.json: "writable", ${network}).`
}
