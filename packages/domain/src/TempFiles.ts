// Temporary files a process makes beside the files it writes (an edit's atomic replace, a patch's staged files, an
// undo's restored files, a fork's copy, a config written whole): each is noted in the data dir before it is made, so
// that when the process is killed half way (kill -9, a power cut), the next reins process removes what it left.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** reins's temporary names, each carrying the pid of the process that made it; a copy's staging is the only directory. */
const tempName = (pid: number) => new RegExp(`\\.(?:reins-(?:${pid}-\\d+|patch-${pid}-[a-z0-9]+|restore-${pid}|copy-${pid})|${pid}\\.tmp)$`)
const STAGING = (pid: number) => new RegExp(`\\.reins-copy-${pid}$`)

/** This machine's lists only: a data dir shared by several machines (cluster runners) holds other hosts' pids. */
const host = () => os.hostname().replace(/[^A-Za-z0-9.-]/g, "_")

let notes: string | undefined

/** Where this process notes its temporary files from now on: `<dataDir>/temp-files/<host>-<pid>`, gone when it exits. */
export const noteTempFilesIn = (dataDir: string) => {
  const dir = path.join(dataDir, "temp-files")
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const file = path.join(dir, `${host()}-${process.pid}`)
    if (notes === undefined) process.once("exit", () => fs.rmSync(file, { force: true }))
    notes = file
  } catch {
    notes = undefined
  }
}

/** Notes `file` (about to be made) as this process's temporary file; best effort, never failing the write. */
export const noteTemp = (file: string) => {
  // one JSON string a line: a path holding a newline cannot add another entry
  if (notes === undefined || /[\u0000-\u001f]/.test(file)) return
  try {
    fs.appendFileSync(notes, `${JSON.stringify(file)}\n`, { mode: 0o600 })
  } catch {
    // a full disk fails the write itself just after
  }
}

/** Whether process `pid` of this host exists (another user's counts: it cannot be signalled, but it is there). */
export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/** A noted entry as it can be removed: an absolute path named for `pid`, a regular file (or the copy's staging directory). */
const removable = (file: string, pid: number): boolean => {
  if (!path.isAbsolute(file) || !tempName(pid).test(file)) return false
  try {
    const stat = fs.lstatSync(file)
    return stat.isFile() || (stat.isDirectory() && STAGING(pid).test(file))
  } catch {
    return false
  }
}

/**
 * Removes the temporary files that processes of this machine no longer running noted in `dataDir` (those renamed into
 * place are gone already), and their lists; the paths removed. A path that cannot be removed is left, never stopping
 * the start.
 */
export const cleanTempFiles = (dataDir: string, isAlive: (pid: number) => boolean = processAlive): ReadonlyArray<string> => {
  const dir = path.join(dataDir, "temp-files")
  let lists: Array<string>
  try {
    lists = fs.readdirSync(dir)
  } catch {
    return []
  }
  const removed: Array<string> = []
  const prefix = `${host()}-`
  for (const name of lists) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length))
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue
    const list = path.join(dir, name)
    let text = ""
    try {
      text = fs.readFileSync(list, "utf8")
    } catch {
      continue
    }
    const entries = new Set<string>()
    for (const line of text.split("\n")) {
      try {
        const entry: unknown = JSON.parse(line)
        if (typeof entry === "string") entries.add(entry)
      } catch {
        // a torn last line (the process died writing it)
      }
    }
    for (const file of entries) {
      if (!removable(file, pid)) continue
      try {
        fs.rmSync(file, { recursive: true, force: true })
        removed.push(file)
      } catch {
        // not ours to remove any more (a read-only directory): left as it is
      }
    }
    try {
      fs.rmSync(list, { force: true })
    } catch {
      // tried again at the next start
    }
  }
  return removed
}
