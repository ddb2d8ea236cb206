// A process and its descendants, read from /proc (Linux): who they are, their resident memory and CPU time.
import * as fs from "node:fs"

interface Stat {
  readonly pid: number
  readonly ppid: number
  readonly state: string
  /** utime + stime, in clock ticks */
  readonly cpuTicks: number
}

const readStat = (pid: number): Stat | undefined => {
  const text = readText(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  // comm (field 2) may hold spaces and parentheses: the fields after it start after the last ")".
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { pid, state: rest[0]!, ppid: Number(rest[1]), cpuTicks: Number(rest[11]) + Number(rest[12]) }
}

const readText = (file: string): string | undefined => {
  // A process may exit between listing /proc and reading it: that is an absent process, not an error.
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const allStats = (): Array<Stat> =>
  fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => readStat(Number(name)) ?? [])

/** The pids of `pid` and every live (not zombie) process below it. */
export const processTree = (pid: number): Array<number> => {
  const stats = allStats()
  const children = new Map<number, Array<number>>()
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid])
  const alive = new Set(stats.filter((s) => s.state !== "Z").map((s) => s.pid))
  const out: Array<number> = []
  const visit = (p: number) => {
    if (alive.has(p)) out.push(p)
    for (const c of children.get(p) ?? []) visit(c)
  }
  visit(pid)
  return out
}

/** Whether `pid` is a live process (a zombie, dead but not yet reaped, is not). */
export const isAlive = (pid: number): boolean => {
  const s = readStat(pid)
  return s !== undefined && s.state !== "Z" && s.state !== "X"
}

/** The live descendants of `pid`, without `pid` itself (e.g. to check that nothing was orphaned under it). */
export const descendants = (pid: number): Array<number> => processTree(pid).filter((p) => p !== pid)

/** Resident memory of one process in bytes (VmRSS), 0 when it is gone. */
export const rssBytes = (pid: number): number => {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readText(`/proc/${pid}/status`) ?? "")
  return m ? Number(m[1]) * 1024 : 0
}

/** The most memory one process has had resident (VmHWM, its peak RSS) in bytes, 0 when it is gone. */
export const peakRssBytes = (pid: number): number => {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readText(`/proc/${pid}/status`) ?? "")
  return m ? Number(m[1]) * 1024 : 0
}

/** The sum of the peak RSS (VmHWM) of `pid` and its live descendants, in bytes: an upper bound of the tree's peak. */
export const treePeakRssBytes = (pid: number): number => processTree(pid).reduce((sum, p) => sum + peakRssBytes(p), 0)

/** Resident memory of `pid` and its descendants, in bytes (shared pages are counted once per process). */
export const treeRssBytes = (pid: number): number => processTree(pid).reduce((sum, p) => sum + rssBytes(p), 0)

/** Clock ticks per second for /proc's utime and stime (USER_HZ; 100 on every Linux this runs on). */
export const CLOCK_TICKS = 100

/** CPU time (user + system) used so far by `pid` and its live descendants, in milliseconds. */
export const treeCpuMs = (pid: number): number => {
  const tree = new Set(processTree(pid))
  return allStats()
    .filter((s) => tree.has(s.pid))
    .reduce((sum, s) => sum + (s.cpuTicks * 1000) / CLOCK_TICKS, 0)
}

/** CPU time (user + system) used so far by `pid` alone, in milliseconds. */
export const cpuMs = (pid: number): number => ((readStat(pid)?.cpuTicks ?? 0) * 1000) / CLOCK_TICKS
