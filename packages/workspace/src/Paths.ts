import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Why `rel` may not be read or written as a path of the project under `root`, if so: it leaves the directory
 * (absolute, `..`: a recorded change is data), or lies under a symbolic link (reading or writing there would reach
 * wherever the link points).
 */
export const unsafePath = (root: string, rel: string): string | undefined => {
  const names = rel.split("/")
  if (path.isAbsolute(rel) || names.some((n) => n === "" || n === "." || n === "..")) return "it is not a path inside the project"
  let dir = root
  for (const name of names.slice(0, -1)) {
    dir = path.join(dir, name)
    try {
      if (fs.lstatSync(dir).isSymbolicLink()) return `${path.relative(root, dir)} is a symbolic link now`
    } catch {
      return undefined
    }
  }
  return undefined
}
