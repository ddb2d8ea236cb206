import { processAlive } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * Marks that a process uses a project's checkpoint store (a file `in-use/<pid>-<n>@<host>` beside it, while its tracker
 * lives, its time renewed every `REFRESH_MS`): a prune leaves that store alone, since what the process holds in memory
 * (the files' states as it last saw them) names copies that no stored session refers to yet. A mark renewed within
 * `LIVE_MS`, or of a process of this host that is still there, is in use; any other was left by a process gone (killed,
 * or of a host that is no more): a pid of another pid namespace with the same host name, or a host renamed, cannot fool
 * it for longer than `LIVE_MS`.
 */
const DIR = "in-use"
export const REFRESH_MS = 10 * 60_000
export const LIVE_MS = 60 * 60_000

let marks = 0

/**
 * Marks `storeDir` as used by this process, renewed while it lives. The returned call stops renewing it and removes it
 * (never throws); `keep`: left as it is (what the process knew could not be saved: a prune that began while it ran
 * still finds it renewed lately).
 */
export const markInUse = (storeDir: string): ((keep?: boolean) => void) => {
  const file = path.join(storeDir, DIR, `${process.pid}-${marks++}@${os.hostname()}`)
  const renew = () => {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "")
    } catch {
      // a store that cannot be marked cannot be written either: the tracker's copies fail the same way
    }
  }
  renew()
  const timer = setInterval(renew, REFRESH_MS)
  timer.unref()
  return (keep = false) => {
    clearInterval(timer)
    if (keep) return
    try {
      fs.rmSync(file, { force: true })
    } catch {
      // left behind: stale once it is not renewed
    }
  }
}

/** One mark on a store: the process, its host, and whether it was left by a process gone. */
export interface StoreUser {
  readonly pid: number
  readonly host: string
  readonly file: string
  readonly gone: boolean
}

/** The marks on `storeDir` at `now`. */
export const usersOf = (storeDir: string, now: number): ReadonlyArray<StoreUser> => {
  let names: Array<string>
  try {
    names = fs.readdirSync(path.join(storeDir, DIR))
  } catch {
    return []
  }
  const host = os.hostname()
  return names.flatMap((name) => {
    const file = path.join(storeDir, DIR, name)
    let renewed: number
    try {
      renewed = fs.statSync(file).mtimeMs
    } catch {
      return []
    }
    // `<pid>-<n>@<host>`; any other name (an older reins's) is a mark too, known by its time only
    const match = /^(\d+)(?:-\d+)?@(.+)$/.exec(name)
    const pid = match === null ? 0 : Number(match[1])
    const of = match?.[2] ?? "an unknown host"
    const live = now - renewed < LIVE_MS || (match !== null && of === host && processAlive(pid))
    return [{ pid, host: of, file, gone: !live }]
  })
}
