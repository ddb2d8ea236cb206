// Temporary files a process makes beside the files it writes (an edit's atomic replace, a patch's staged files, an
// undo's restored files, a fork's copy, a config written whole): each is noted in the data dir before it is made, so
// that when the process is killed half way (kill -9, a power cut), the next reins process removes what it left.
import * as fs from "node:fs"
import * as path from "node:path"

/** The names reins gives its temporary files: only such a path is ever removed, whatever a list says. */
const TEMP_NAME = /\.(?:reins-(?:\d+-\d+|patch-[a-z0-9]+|restore-\d+|copy-\d+)|\d+\.tmp)$/

let notes: string | undefined

/** Where this process notes its temporary files from now on: `<dataDir>/temp-files/<pid>`. */
export const noteTempFilesIn = (dataDir: string) => {
  const dir = path.join(dataDir, "temp-files")
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    notes = path.join(dir, String(process.pid))
  } catch {
    notes = undefined
  }
}

/** Notes `file` (about to be made) as this process's temporary file; best effort, never failing the write. */
export const noteTemp = (file: string) => {
  if (notes === undefined) return
  try {
    fs.appendFileSync(notes, `${file}\n`, { mode: 0o600 })
  } catch {
    // a full disk fails the write itself just after
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // another user's process: alive
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes the temporary files that processes no longer running noted in `dataDir` (those renamed into place are gone
 * already), and their lists; the paths removed.
 */
export const cleanTempFiles = (dataDir: string, isAlive: (pid: number) => boolean = alive): ReadonlyArray<string> => {
  const dir = path.join(dataDir, "temp-files")
  let lists: Array<string>
  try {
    lists = fs.readdirSync(dir)
  } catch {
    return []
  }
  const removed: Array<string> = []
  for (const name of lists) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue
    const list = path.join(dir, name)
    let text = ""
    try {
      text = fs.readFileSync(list, "utf8")
    } catch {
      continue
    }
    for (const file of new Set(text.split("\n"))) {
      if (!path.isAbsolute(file) || !TEMP_NAME.test(file)) continue
      try {
        fs.lstatSync(file)
      } catch {
        continue
      }
      fs.rmSync(file, { recursive: true, force: true })
      removed.push(file)
    }
    fs.rmSync(list, { force: true })
  }
  return removed
}
