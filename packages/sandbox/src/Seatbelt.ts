// The profile as a macOS Seatbelt policy (SBPL, run with /usr/bin/sandbox-exec -p): everything the
// Linux profile says in Seatbelt's terms. Writes are refused outside the writable places and inside
// their read-only code paths, the hidden places can be neither read nor written, the network (and
// Unix-domain sockets, which reach programs outside) is refused unless the profile allows the network.
// Later rules win in SBPL, so the denies follow the broad allow. Pure: tested as text here; run on macOS.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import type { Profile } from "./Profile.ts"

/** Only /usr/bin's sandbox-exec: one found on PATH could be anyone's. */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec"

/** A path as an SBPL string literal. */
const quote = (p: string) => `"${p.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`

const subpaths = (paths: ReadonlyArray<string>) => paths.map((p) => `(subpath ${quote(p)})`)

/** Devices every program writes: the terminal, /dev/null, its own descriptors. */
const DEVICES = ['(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")', '(regex #"^/dev/ttys[0-9]+$")', '(subpath "/dev/fd")']

/** The Seatbelt policy for `profile` (macOS). */
export const seatbeltPolicy = (profile: Profile): string => {
  const lines = ["(version 1)", "(allow default)"]
  lines.push(`(deny file-write* (require-not (require-any ${[...subpaths(profile.writable), ...DEVICES].join(" ")})))`)
  // git's and reins's code paths stay read-only inside the writable places; a file or a directory alike
  if (profile.readOnly.length > 0) lines.push(`(deny file-write* ${profile.readOnly.map((p) => `(subpath ${quote(p)})`).join(" ")})`)
  if (profile.denyRead.length > 0) lines.push(`(deny file-read* file-write* ${subpaths(profile.denyRead).join(" ")})`)
  // no network is no sockets at all, Unix-domain ones included (with the network on, they are not filtered here)
  if (profile.network !== "all") lines.push("(deny network*)")
  return `${lines.join("\n")}\n`
}

/** sandbox-exec's arguments (before the command's own) for `profile`. */
export const seatbeltArgs = (profile: Profile): Array<string> => ["-p", seatbeltPolicy(profile)]

/** Whether sandbox-exec runs here (macOS): it is there and applies a trivial policy; when not, why. */
export const probeSeatbelt = (): { readonly available: true } | { readonly available: false; readonly reason: string } => {
  try {
    fs.accessSync(SANDBOX_EXEC, fs.constants.X_OK)
  } catch {
    return { available: false, reason: `${SANDBOX_EXEC} is not there (the macOS sandbox needs it)` }
  }
  const probe = spawnSync(SANDBOX_EXEC, ["-p", "(version 1)\n(allow default)\n", "/usr/bin/true"], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 })
  if (probe.status === 0) return { available: true }
  const said = (probe.stderr?.toString("utf8") ?? "").trim().split("\n")[0] || (probe.error?.message ?? `exit ${probe.status}`)
  return { available: false, reason: `sandbox-exec cannot start a sandbox here: ${said}` }
}
