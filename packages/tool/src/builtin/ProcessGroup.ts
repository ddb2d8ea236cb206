import { Effect, Predicate } from "effect"
import * as fs from "node:fs/promises"
import * as fsSync from "node:fs"
import * as os from "node:os"

/**
 * A running command's process group, as bash records it in its tool part while the command runs,
 * so that a later reins can stop the command if this one died without stopping it (SIGKILL).
 * `start` is the leader's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) and
 * `boot` the kernel's boot id: together with the pid they name one process, never a later one
 * that reused the pid.
 */
export interface GroupRecord {
  readonly pgid: number
  readonly start: number
  readonly boot: string
  readonly host: string
}

/** What `reap` did with a recorded group. */
export type Reaped =
  /** The group was still running and was killed. */
  | "killed"
  /** Nothing of it is left. */
  | "gone"
  /** Its pid now belongs to another process (or group): left alone. */
  | "replaced"
  /** Recorded on another machine or before a reboot, or this system has no /proc: left alone. */
  | "elsewhere"

/** Told of each command's process group while it runs (`watchGroups`). */
export interface GroupWatcher {
  readonly added: (pgid: number) => void
  readonly removed: (pgid: number) => void
}

// the process groups of the commands this process runs now: a fact of the process, as its pid is
const live = new Set<number>()
const watchers = new Set<GroupWatcher>()

/** A command's process group started (`runCommand`): its watchers are told. */
export const groupStarted = (pgid: number) => {
  live.add(pgid)
  for (const watcher of watchers) watcher.added(pgid)
}

/** A command's process group ended. */
export const groupEnded = (pgid: number) => {
  if (!live.delete(pgid)) return
  for (const watcher of watchers) watcher.removed(pgid)
}

/**
 * Tells `watcher` of the process groups of this process's commands: those running now at once, then each one
 * started and ended (a cluster runner's lease watchdog kills them if the runner stops). Returns the unwatch.
 */
export const watchGroups = (watcher: GroupWatcher): (() => void) => {
  watchers.add(watcher)
  for (const pgid of live) watcher.added(pgid)
  return () => {
    watchers.delete(watcher)
  }
}

/** Kills the whole process group so children of the shell die too. */
export const killGroup = (pgid: number | undefined) => {
  if (pgid === undefined) return
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // the group is already gone
  }
}

interface Stat {
  /** Z: a zombie, dead already (its parent has not collected it). */
  readonly state: string
  readonly pgrp: number
  readonly session: number
  readonly start: number
}

// The command name (field 2) is in parentheses and may hold spaces or parentheses itself:
// the fields that follow are counted from the last ")".
const parseStat = (text: string): Stat | undefined => {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  const pgrp = Number(fields[2])
  const session = Number(fields[3])
  const start = Number(fields[19])
  return Number.isInteger(pgrp) && Number.isInteger(session) && Number.isInteger(start) ? { state: fields[0] ?? "", pgrp, session, start } : undefined
}

/** Whether a process of group `pgid` is still running (a zombie is dead already); false where there is no /proc. */
export const groupRunning = (pgid: number): boolean => {
  let entries: Array<string>
  try {
    entries = fsSync.readdirSync("/proc")
  } catch {
    return false
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = parseStat(fsSync.readFileSync(`/proc/${entry}/stat`, "utf8"))
      if (stat?.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true
    } catch {
      // gone meanwhile
    }
  }
  return false
}

/**
 * Resolves once no process of group `pgid` runs, or after `limitMs`: a killed process closes its files
 * before it has finished exiting (a sandbox's pid namespace is torn down after its init dies), so the
 * end of its output is not yet the end of the process.
 */
export const groupGone = (pgid: number | undefined, limitMs: number) =>
  new Promise<void>((resolve) => {
    if (pgid === undefined) return resolve()
    const deadline = Date.now() + limitMs
    const poll = () => (!groupRunning(pgid) || Date.now() >= deadline ? resolve() : setTimeout(poll, 2))
    poll()
  })

const readText = (file: string) =>
  Effect.tryPromise(() => fs.readFile(file, "utf8")).pipe(
    Effect.option,
    Effect.map((o) => (o._tag === "Some" ? o.value : undefined))
  )

const statOf = (pid: number) => Effect.map(readText(`/proc/${pid}/stat`), (text) => (text === undefined ? undefined : parseStat(text)))

const bootID = Effect.map(readText("/proc/sys/kernel/random/boot_id"), (text) => text?.trim())

const readTextNow = (file: string) => {
  try {
    return fsSync.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

// This process's boot id: it cannot change while the process lives, so it is read once (identify
// runs for every command; reap still reads it fresh, as the record may be from before a reboot).
let ownBoot: string | undefined
const bootNow = () => {
  ownBoot ??= readTextNow("/proc/sys/kernel/random/boot_id")?.trim()
  return ownBoot
}
// The host's name, read once like the boot id (a system call on every command otherwise; a host renamed while reins
// runs keeps the old name in its records, which reap then takes for another machine's and leaves alone).
let ownHost: string | undefined
const hostNow = () => {
  ownHost ??= os.hostname()
  return ownHost
}

/**
 * The record of the group `pid` leads (a child spawned detached), or undefined where there is no /proc or it has exited.
 * Synchronous reads: a /proc file is made by the kernel on read, never waits on a disk, and a promise's round trip
 * through the thread pool cost more than the read on every command.
 */
export const identify = (pid: number): Effect.Effect<GroupRecord | undefined> =>
  Effect.sync(() => {
    const text = readTextNow(`/proc/${pid}/stat`)
    const stat = text === undefined ? undefined : parseStat(text)
    const boot = bootNow()
    if (stat === undefined || boot === undefined) return undefined
    return { pgid: pid, start: stat.start, boot, host: hostNow() }
  })

/** The record kept in a tool part's metadata under `process`, if it is one. */
export const recordOf = (metadata: unknown): GroupRecord | undefined => {
  if (!Predicate.hasProperty(metadata, "process")) return undefined
  const p = metadata.process
  if (!Predicate.hasProperty(p, "pgid") || !Predicate.hasProperty(p, "start") || !Predicate.hasProperty(p, "boot") || !Predicate.hasProperty(p, "host"))
    return undefined
  const { pgid, start, boot, host } = p
  if (!Number.isInteger(pgid) || !Number.isInteger(start) || typeof boot !== "string" || typeof host !== "string") return undefined
  return { pgid: pgid as number, start: start as number, boot, host }
}

// Members of the recorded group once its leader has exited (a shell killed by SIGPIPE after reins
// died leaves its background jobs): while any member lives, Linux keeps the group's id from being
// reused, so a process in that group and session, started no earlier than the leader, is ours.
const survivors = (record: GroupRecord) =>
  Effect.gen(function* () {
    const entries = yield* Effect.tryPromise(() => fs.readdir("/proc")).pipe(Effect.orElseSucceed((): Array<string> => []))
    const pids = entries.filter((name) => /^\d+$/.test(name)).map(Number)
    const stats = yield* Effect.forEach(pids, statOf, { concurrency: 16 })
    return stats.filter((s) => s !== undefined && s.state !== "Z" && s.pgrp === record.pgid && s.session === record.pgid && s.start >= record.start).length
  })

/**
 * Kills a recorded group if it is still the same one: its leader alive with the recorded start
 * time, or (the leader gone) members of that group left. A pid now used by another process is
 * never signalled.
 */
export const reap = (record: GroupRecord): Effect.Effect<Reaped> =>
  Effect.gen(function* () {
    const boot = yield* bootID
    if (boot === undefined || boot !== record.boot || record.host !== os.hostname()) return "elsewhere"
    const leader = yield* statOf(record.pgid)
    if (leader !== undefined && leader.state !== "Z") {
      if (leader.start !== record.start || leader.pgrp !== record.pgid) return "replaced"
      killGroup(record.pgid)
      return "killed"
    }
    if ((yield* survivors(record)) === 0) return "gone"
    killGroup(record.pgid)
    return "killed"
  })
