// The profile as bubblewrap's arguments (Linux): the whole file system read-only, the writable
// directories bound back writable (the project, the temp dir, caches), reins's and git's code paths
// read-only inside them, the secret places and the user's sockets hidden, new pid/ipc/network namespaces (no network unless the profile says so),
// no capabilities, and the command killed with reins.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { kindOf } from "./Fs.ts"
import type { Profile } from "./Profile.ts"
import { probeSeatbelt, SANDBOX_EXEC } from "./Seatbelt.ts"

/** The parts of a sandbox's /proc bound read-only over itself. */
export const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]

/** bubblewrap's arguments (before the command's own) for running in `cwd` under `profile`. */
export const bwrapArgs = (profile: Profile, cwd: string, seccompFd?: number): Array<string> => {
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
  // what of /proc writes the kernel, not the process, read-only: a write there is allowed by uid alone, so a command
  // run as root (reins as root, CI) could set kernel.core_pattern to a program it wrote (run as root outside at the next
  // crash), sysctls of the namespaces a long-lived sandbox keeps, or trigger sysrq (as Docker's read-only paths)
  for (const p of PROC_READ_ONLY) if (fs.existsSync(p)) args.push("--ro-bind", p, p)
  // allow mode too: the command reaches only the bridge, on its own loopback
  if (profile.network !== "all") args.push("--unshare-net")
  // looked at again for each command: a place gone since the profile was made (a tmux server's socket
  // directory) is left out, as bwrap would otherwise make an empty one on the host to mount over
  for (const dir of profile.writable) if (kindOf(dir) !== undefined) args.push("--bind", dir, dir)
  for (const p of profile.readOnly) if (kindOf(p) !== undefined) args.push("--ro-bind", p, p)
  for (const p of profile.denyRead) {
    // most of the list is not there: a cheap look first (a realpath that fails throws, ~10 µs each, at every command)
    if (!fs.existsSync(p)) continue
    // where it is now (made, or made a link, since the profile): a mount on a link itself fails
    let target: string
    try {
      target = fs.realpathSync(p)
    } catch {
      continue
    }
    const kind = kindOf(target)
    if (kind === "directory") args.push("--tmpfs", target, "--remount-ro", target)
    else if (kind === "other") args.push("--ro-bind", "/dev/null", target)
  }
  if (seccompFd !== undefined) args.push("--seccomp", String(seccompFd))
  args.push("--chdir", cwd, "--")
  return args
}

/** Whether bubblewrap can run here; when not, why, in a line that says what to do. */
export type Availability =
  | {
      readonly available: true
      /** The program that starts the sandbox: bwrap, or sandbox-exec on macOS (`seatbelt`). */
      readonly bwrap: string
      readonly seatbelt?: true
    }
  | { readonly available: false; readonly reason: string }

const findOnPath = (name: string, pathVar: string | undefined) => {
  for (const dir of (pathVar ?? "/usr/local/bin:/usr/bin:/bin").split(path.delimiter)) {
    if (dir === "" || !path.isAbsolute(dir)) continue
    const file = path.join(dir, name)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return file
    } catch {}
  }
  return undefined
}

/** Finds bwrap (REINS_BWRAP, else PATH) and runs it once with the namespaces the profile needs. */
export const probeBwrap = (env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): Availability => {
  if (platform === "darwin") {
    const seatbelt = probeSeatbelt()
    return seatbelt.available ? { available: true, bwrap: SANDBOX_EXEC, seatbelt: true } : seatbelt
  }
  if (platform !== "linux") return { available: false, reason: `the sandbox uses bubblewrap (Linux) or Seatbelt (macOS); there is none on ${platform}` }
  // REINS_BWRAP names bwrap where it is not on PATH
  const named = env.REINS_BWRAP
  if (named !== undefined && named !== "") {
    try {
      fs.accessSync(named, fs.constants.X_OK)
    } catch {
      return { available: false, reason: `REINS_BWRAP names ${named}, which is not an executable bwrap` }
    }
  }
  const bwrap = named || findOnPath("bwrap", env.PATH)
  if (bwrap === undefined)
    return { available: false, reason: "bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap, dnf install bubblewrap)" }
  const probe = spawnSync(
    bwrap,
    [
      "--die-with-parent",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-net",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--",
      "/bin/true"
    ],
    { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 }
  )
  if (probe.status === 0) return { available: true, bwrap }
  const said = (probe.stderr?.toString("utf8") ?? "").trim().split("\n")[0] || (probe.error?.message ?? `exit ${probe.status}`)
  const hint = /uid map|user namespace|Operation not permitted|Permission denied/i.test(said)
    ? " — unprivileged user namespaces are off here (on Ubuntu 24.04: sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap)"
    : ""
  return { available: false, reason: `bubblewrap cannot start a sandbox here: ${said}${hint}` }
}
