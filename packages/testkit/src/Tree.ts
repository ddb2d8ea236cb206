import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Every path below `root` (not `.git`) with its type, permission bits and content or link target: two trees are the
 * same, byte for byte, mode and type, when their snapshots are equal (what undo and redo are checked with).
 */
export const treeSnapshot = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(path.join(root, dir)).sort()) {
      const rel = dir === "" ? name : `${dir}/${name}`
      if (name === ".git") continue
      const stat = fs.lstatSync(path.join(root, rel))
      const mode = (stat.mode & 0o7777).toString(8)
      if (stat.isSymbolicLink()) out[rel] = `link ${fs.readlinkSync(path.join(root, rel))}`
      else if (stat.isDirectory()) {
        out[rel] = `dir ${mode}`
        walk(rel)
      } else out[rel] = `file ${mode} ${fs.readFileSync(path.join(root, rel), "utf8")}`
    }
  }
  walk("")
  return out
}
