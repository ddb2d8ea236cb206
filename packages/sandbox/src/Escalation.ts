// What a command needs beyond its profile: the network, writes outside the writable places. The
// bash tool asks the user for exactly that (permission `sandbox`, patterns `network <host>` and
// `write <dir>`), and a granted escalation widens the profile for that one command. Secret places
// and the read-only code paths (git hooks, reins's config) are never offered.
import * as fs from "node:fs"
import * as path from "node:path"
import { type Places, type Profile, profileFor, type SandboxConfig } from "./Profile.ts"

/** What a command would need: the network (the hosts it names; none named: any), places it writes. */
export interface Want {
  readonly network?: { readonly hosts: ReadonlyArray<string> }
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

const isWithin = (inner: string, outer: string) => inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`)

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

/** The escalation `want` needs under `profile`; undefined when the profile already allows it all. */
export const escalationFor = (profile: Profile, home: string, want: Want): Escalation | undefined => {
  const network = want.network !== undefined && profile.network !== "all" ? want.network : undefined
  const writable = new Set<string>()
  for (const target of want.writes ?? []) {
    // a file's directory is what gets bound (a file that does not exist yet cannot be)
    const dir = existingDirectory(fs.existsSync(target) && !fs.statSync(target).isDirectory() ? path.dirname(target) : target)
    if (profile.writable.some((w) => isWithin(dir, w))) continue
    // never inside a place the profile hides or keeps read-only, nor the home directory or above it
    // (its dotfiles run later, outside); the masks over a wider bind still hold (bwrap binds them after)
    if (isWithin(home, dir) || /^\/(dev|proc|sys)(\/|$)/.test(dir) || [...profile.denyRead, ...profile.readOnly].some((p) => isWithin(dir, p))) continue
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

/** The profile for one command with `grant` on top: network on (package caches writable then), more writable places. */
export const grantedProfile = (config: SandboxConfig | undefined, places: Places, grant: Escalation): Profile =>
  profileFor({ ...config, ...(grant.network ? { network: { mode: "all" as const } } : {}), writable: [...(config?.writable ?? []), ...grant.writable] }, places)
