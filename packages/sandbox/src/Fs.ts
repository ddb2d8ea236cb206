// The file-system questions the profile and the git watch ask, none of which throws: whether a path is
// there (links not followed), what it is, what a directory holds, its real path, its time.
import * as fs from "node:fs"
import * as path from "node:path"

/** Whether something is at `p` (a dangling link counts). */
export const exists = (p: string) => {
  try {
    fs.lstatSync(p)
    return true
  } catch {
    return false
  }
}

/** Whether `p` is a directory, links followed (what a bind would mount). */
export const isDirectory = (p: string) => {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** Whether `p` itself (not where a link points) is a directory, or a regular file. */
export const entryKind = (p: string): "directory" | "file" | "other" | undefined => {
  try {
    const stat = fs.lstatSync(p)
    return stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other"
  } catch {
    return undefined
  }
}

/** What is at `p` now, links followed (as bwrap's mounts follow them): a directory, something else, or nothing. */
export const kindOf = (p: string): "directory" | "other" | undefined => {
  try {
    return fs.statSync(p).isDirectory() ? "directory" : "other"
  } catch {
    return undefined
  }
}

/** Whether `inner` is `outer` or lies inside it. */
export const isWithin = (inner: string, outer: string) => inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`)

/** The entries of a directory, as paths (none when it is not there). */
export const children = (dir: string) => {
  try {
    return fs.readdirSync(dir).map((n) => path.join(dir, n))
  } catch {
    return []
  }
}

/** The real path when it exists (a bind of a symlink binds its target), else the path. */
export const real = (p: string) => {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}

/** When `p` last changed (`follow`: where a link points), or undefined when it is not there. */
export const mtimeOf = (p: string, follow = true) => {
  try {
    return (follow ? fs.statSync(p) : fs.lstatSync(p)).mtimeMs
  } catch {
    return undefined
  }
}
