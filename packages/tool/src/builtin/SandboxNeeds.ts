// Approval and the OS sandbox as one system (issue 25 item 2): what a bash command would need beyond
// its sandbox — the network, writes outside the writable places — read from the permission scan,
// asked as the `sandbox` permission (`network <host>`, `write <dir>`), and handed from the question to
// the run. A command the rules allow and the sandbox covers is not asked anything.
import { networkUse, programOf, type ScanRequest } from "@reins/permission"
import { type Escalation, escalationPatterns, type Want } from "@reins/sandbox"
import type { PermissionNeed } from "../Tool.ts"

/** Programs that write or remove the paths they are given (their outside paths are writes). */
const WRITERS = new Set([
  "rm",
  "rmdir",
  "mkdir",
  "touch",
  "mv",
  "cp",
  "ln",
  "chmod",
  "chown",
  "chgrp",
  "unlink",
  "shred",
  "truncate",
  "install",
  "tee",
  "rsync",
  "dd",
  "tar",
  "unzip",
  "mkfifo",
  "mknod",
  "setfacl",
  "chattr",
  "git"
])

/** Kernel file systems: `/dev/tcp/…` is bash's socket syntax, /proc and /sys are no place to bind. */
const DEVICES = /^\/(dev|proc|sys)(\/|$)/

/**
 * What the scanned command wants beyond a sandbox: the network (from the programs it runs, or because
 * the model said so) and the places it writes (redirections and file operands the scan found outside
 * the project, when the command using them writes).
 */
export const wantOf = (requests: ReadonlyArray<ScanRequest>, network: boolean | undefined): Want => {
  const hosts = new Set<string>()
  let online = network === true
  const writes = new Set<string>()
  // the scan lists a command's outside places just before the command itself
  let outside: Array<string> = []
  for (const r of requests) {
    if (r.permission === "external_directory") {
      for (const p of r.patterns) if (p !== "*" && !DEVICES.test(p)) outside.push(p.replace(/\/\*$/, "") || "/")
      continue
    }
    if (r.permission === "edit") {
      for (const p of r.patterns) if (p.startsWith("/") && !DEVICES.test(p)) writes.add(p)
      continue
    }
    // the command's own request (reads and other permissions name paths, not programs)
    if (r.permission !== "bash") continue
    if (r.opaque === undefined) {
      for (const p of r.patterns) {
        const use = networkUse(p)
        if (use === undefined) continue
        online = true
        for (const h of use.hosts) hosts.add(h)
      }
    }
    if (r.patterns.some((p) => WRITERS.has(programOf(p)))) for (const dir of outside) writes.add(dir)
    outside = []
  }
  return { ...(online ? { network: { hosts: [...hosts], ...(network === true ? { explicit: true } : {}) } } : {}), writes: [...writes] }
}

/** The `sandbox` question for an escalation: it names what would be lifted, for this command only. */
export const escalationNeed = (escalation: Escalation, command: string): PermissionNeed => {
  const { patterns, always } = escalationPatterns(escalation)
  const what = [
    ...(escalation.network ? [escalation.network.hosts.length > 0 ? `network access (${escalation.network.hosts.join(", ")})` : "network access"] : []),
    ...(escalation.writable.length > 0 ? [`writing ${escalation.writable.join(", ")}`] : [])
  ]
  return { permission: "sandbox", patterns, always, command, title: `Lift the sandbox for this command: ${what.join(" and ")}` }
}

/** Escalations granted by the question, waiting for the run of the same call (bounded: a denied call never runs). */
const granted = new Map<string, Escalation>()

const grantKey = (call: { readonly messageID: string; readonly callID: string }, command: string) => `${call.messageID}\u0000${call.callID}\u0000${command}`

/** Keeps (or, with none, forgets) what this call asks to lift, for its run once the question allowed it. */
export const rememberGrant = (call: { readonly messageID: string; readonly callID: string }, command: string, escalation: Escalation | undefined) => {
  const key = grantKey(call, command)
  granted.delete(key)
  if (escalation === undefined) return
  granted.set(key, escalation)
  if (granted.size > 256) granted.delete(granted.keys().next().value as string)
}

export const takeGrant = (call: { readonly messageID: string; readonly callID: string }, command: string): Escalation | undefined => {
  const key = grantKey(call, command)
  const found = granted.get(key)
  granted.delete(key)
  return found
}
