import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * Marks that a process uses a project's checkpoint store (a file `in-use/<pid>@<host>` beside it, while its tracker
 * lives): a prune leaves that store alone, since what the process holds in memory (the files' states as it last saw
 * them) names copies that no stored session refers to yet. A process killed leaves its mark: on this host a mark of
 * a process gone is stale; one of another host (a data dir shared by runners) cannot be told, so it counts as in use.
 */
const DIR = "in-use"

const markName = () => `${process.pid}@${os.hostname()}`

/** Marks `storeDir` as used by this process; the returned call removes the mark. */
export const markInUse = (storeDir: string): (() => void) => {
  const file = path.join(storeDir, DIR, markName())
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, "")
  } catch {
    // a store that cannot be marked cannot be written either: the tracker's copies fail the same way
  }
  return () => fs.rmSync(file, { force: true })
}

/** One process that marked a store: its pid, its host, and whether it is this host's and gone. */
export interface StoreUser {
  readonly pid: number
  readonly host: string
  readonly file: string
  readonly gone: boolean
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it is there, another user's
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/** The processes that marked `storeDir` (a mark left by a process of this host that is gone says `gone`). */
export const usersOf = (storeDir: string): ReadonlyArray<StoreUser> => {
  let names: Array<string>
  try {
    names = fs.readdirSync(path.join(storeDir, DIR))
  } catch {
    return []
  }
  const host = os.hostname()
  return names.flatMap((name) => {
    const at = name.indexOf("@")
    const pid = Number(name.slice(0, at))
    if (at <= 0 || !Number.isInteger(pid) || pid <= 0) return []
    const of = name.slice(at + 1)
    return [{ pid, host: of, file: path.join(storeDir, DIR, name), gone: of === host && pid !== process.pid && !alive(pid) }]
  })
}
