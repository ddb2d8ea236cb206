import ignore, { type Ignore } from "ignore"
import * as fs from "node:fs"
import * as path from "node:path"

/** Never checkpointed, whatever the ignore files say: git's own store, and installed packages (large, and remade by their tool). */
export const ALWAYS_SKIPPED = new Set([".git", "node_modules"])

/**
 * The ignore rules of a tree, read synchronously for the checkpoint scanner: each directory's `.gitignore` (a deeper
 * one wins, as in git) and the repository's `.git/info/exclude`, loaded once and again when a `.gitignore` changes.
 * Paths are relative to the root, `/`-separated.
 */
export interface TreeIgnore {
  /** Whether `rel` (a directory when `isDirectory`) is skipped: ignored, or under a skipped directory's name. */
  readonly skips: (rel: string, isDirectory: boolean) => boolean
  /** Forgets the rules of `dir` (relative; "" the root): its `.gitignore` changed. */
  readonly forget: (dir: string) => void
  /** Forgets every rule read (a full scan reads them again). */
  readonly forgetAll: () => void
}

const read = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

export const makeTreeIgnore = (root: string): TreeIgnore => {
  const rules = new Map<string, Ignore | undefined>()
  const exclude = read(path.join(root, ".git", "info", "exclude"))
  const excluded = exclude === undefined ? undefined : ignore({ ignorecase: false }).add(exclude)
  const rulesOf = (dir: string) => {
    if (!rules.has(dir)) {
      const text = read(path.join(root, dir, ".gitignore"))
      rules.set(dir, text === undefined ? undefined : ignore({ ignorecase: false }).add(text))
    }
    return rules.get(dir)
  }
  const skips = (rel: string, isDirectory: boolean): boolean => {
    const names = rel.split("/")
    if (names.some((name) => ALWAYS_SKIPPED.has(name))) return true
    // a path under an ignored directory is ignored (git never looks inside one)
    for (let depth = 1; depth < names.length; depth++) if (decide(names.slice(0, depth), true)) return true
    return decide(names, isDirectory)
  }
  // the deepest rule that says anything wins; `.git/info/exclude` last
  const decide = (names: ReadonlyArray<string>, isDirectory: boolean) => {
    for (let depth = names.length - 1; depth >= 0; depth--) {
      const level = rulesOf(names.slice(0, depth).join("/"))
      if (level === undefined) continue
      const result = level.test(`${names.slice(depth).join("/")}${isDirectory ? "/" : ""}`)
      if (result.ignored) return true
      if (result.unignored) return false
    }
    return excluded?.ignores(`${names.join("/")}${isDirectory ? "/" : ""}`) ?? false
  }
  return { skips, forget: (dir) => rules.delete(dir), forgetAll: () => rules.clear() }
}
