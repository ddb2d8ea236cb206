// What a command needs beyond its profile: the network, writes outside the writable places. The
// bash tool asks the user for exactly that (permission `sandbox`, patterns `network <host>` and
// `write <dir>`), and a granted escalation widens the profile for that one command. Secret places
// and the read-only code paths (git hooks, reins's config) are never offered.
import * as fs from "node:fs"
import * as path from "node:path"
import { isWithin } from "./Fs.ts"
import { hostListing, REGISTRIES } from "./Hosts.ts"
import { CACHE_PLACES, GIT_CODE_FILES, type Places, type Profile, profileFor, type SandboxConfig } from "./Profile.ts"

/**
 * What a command would need: the network (the hosts it names, none named: any; `explicit`: the model
 * said so), places it writes.
 */
export interface Want {
  readonly network?: { readonly hosts: ReadonlyArray<string>; readonly explicit?: boolean }
  /** Paths the command writes (files or directories, absolute). */
  readonly writes?: ReadonlyArray<string>
}

/** What the profile lacks for a command: to ask for, then to grant. */
export interface Escalation {
  /** The network; the hosts named (empty: any host). */
  readonly network?: { readonly hosts: ReadonlyArray<string> }
  /** Existing directories to bind writable for the command. */
  readonly writable: ReadonlyArray<string>
}

/** A place under home whose files run later, outside the sandbox: a dot directory (not a package cache), ~/.local/bin, ~/bin. */
const runsLater = (home: string, dir: string) => {
  if (!isWithin(dir, home) || dir === home) return false
  const rel = dir.slice(home.length + 1)
  const first = rel.split("/")[0]!
  if (rel === "bin" || rel.startsWith("bin/") || rel === ".local/bin" || rel.startsWith(".local/bin/")) return true
  if (!first.startsWith(".")) return false
  return !CACHE_PLACES.some((c) => isWithin(rel, c))
}

/** The nearest directory at or above `p` that exists, real (what bwrap can bind). */
const existingDirectory = (p: string): string => {
  let at = path.resolve(p)
  for (;;) {
    try {
      const stat = fs.statSync(at)
      if (stat.isDirectory()) return fs.realpathSync(at)
    } catch {}
    const up = path.dirname(at)
    if (up === at) return at
    at = up
  }
}

/**
 * The network a command lacks: none when the profile's network is on; all of it when the model asked
 * for the network itself (after a blocked try: ssh, a host the scan cannot see); else the hosts the
 * command names (without network), or those an `allow` list does not hold (one naming none goes
 * through the proxy as it is).
 */
const networkEscalation = (profile: Profile, want: Want["network"]): Escalation["network"] => {
  if (want === undefined || profile.network === "all") return undefined
  if (want.explicit) return { hosts: [] }
  if (profile.network === "none") return { hosts: want.hosts }
  const unlisted = want.hosts.filter((h) => hostListing(profile.allow, h) === undefined)
  if (unlisted.length > 0) return { hosts: unlisted }
  return undefined
}

/** The escalation `want` needs under `profile`; undefined when the profile already allows it all. */
export const escalationFor = (profile: Profile, home: string, want: Want): Escalation | undefined => {
  const realHome = existingDirectory(home)
  const network = networkEscalation(profile, want.network)
  const writable = new Set<string>()
  for (const target of want.writes ?? []) {
    // a file's directory is what gets bound (a file that does not exist yet cannot be)
    const dir = existingDirectory(fs.existsSync(target) && !fs.statSync(target).isDirectory() ? path.dirname(target) : target)
    if (profile.writable.some((w) => isWithin(dir, w))) continue
    // never inside a place the profile hides or keeps read-only, nor the home directory or above it, nor
    // where home keeps what runs later (dotfiles, ~/.local/bin, ~/bin); the masks over a wider bind still hold
    if (
      isWithin(realHome, dir) ||
      runsLater(realHome, dir) ||
      /^\/(dev|proc|sys)(\/|$)/.test(dir) ||
      [...profile.denyRead, ...profile.readOnly].some((p) => isWithin(dir, p))
    )
      continue
    writable.add(dir)
  }
  if (network === undefined && writable.size === 0) return undefined
  return { ...(network ? { network } : {}), writable: [...writable] }
}

/** The escalation as the `sandbox` permission's patterns, and what "always" records for them. */
export const escalationPatterns = (e: Escalation): { readonly patterns: Array<string>; readonly always: Array<string> } => {
  const net = e.network === undefined ? [] : e.network.hosts.length > 0 ? e.network.hosts.map((h) => `network ${h}`) : ["network *"]
  const writes = e.writable.map((d) => `write ${d}`)
  return { patterns: [...net, ...writes], always: [...net, ...e.writable.flatMap((d) => [`write ${d}`, `write ${d}/*`])] }
}

/**
 * The profile for one command with `grant` on top: the named hosts reached through the proxy (added
 * to an `allow` list), any host (`network *`) the network on; more writable places.
 */
export const grantedProfile = (config: SandboxConfig | undefined, places: Places, grant: Escalation, base: Profile = profileFor(config, places)): Profile => {
  // named hosts are reached through the proxy (the grant is no wider than the question); only `network *` is all of it
  const network =
    grant.network === undefined
      ? {}
      : grant.network.hosts.length > 0
        ? {
            network: { mode: "allow" as const, allow: [...(base.network === "allow" ? (config?.network?.allow ?? [REGISTRIES]) : []), ...grant.network.hosts] }
          }
        : { network: { mode: "all" as const } }
  const widened = profileFor({ ...config, ...network, writable: [...(config?.writable ?? []), ...grant.writable] }, places)
  // a granted directory that is another repository keeps its git hooks and config read-only, as the project's
  const gitCode = grant.writable.flatMap((dir) => GIT_CODE_FILES.map((f) => path.join(dir, ".git", f)).filter((p) => fs.existsSync(p)))
  return { ...widened, readOnly: [...new Set([...widened.readOnly, ...gitCode])] }
}
