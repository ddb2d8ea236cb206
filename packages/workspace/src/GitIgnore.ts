import { Effect, Result } from "effect"
import ignore, { type Ignore } from "ignore"
import * as fs from "node:fs"
import * as path from "node:path"

/** Whether `target` is `dir` or below it. */
const isInside = (dir: string, target: string) => {
  const rel = path.relative(dir, target)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

/** The rules of one ignore file, relative to the directory they belong to. */
interface Level {
  readonly base: string
  readonly rules: Ignore
}

/**
 * What `.gitignore` ignores below a search root: the ignore files from the repository root (or the
 * worktree, outside a repository) down to each directory walked, and `.git/info/exclude`. A deeper
 * file wins over a shallower one, and `.git/info/exclude` comes last, as in git. Directories are
 * never walked into once ignored, so a file cannot be re-included below one (git's rule too).
 */
export interface GitIgnore {
  /** Is `target` (absolute, below the root) ignored? */
  readonly ignores: (target: string, isDirectory: boolean) => boolean
  /** The rules in force inside `dir`, after reading its own `.gitignore` if it has one. */
  readonly enter: (dir: string, hasIgnoreFile: boolean) => Effect.Effect<GitIgnore>
}

const posix = (rel: string) => rel.split(path.sep).join("/")

const readText = (file: string) =>
  Effect.map(Effect.result(Effect.tryPromise(() => fs.promises.readFile(file, "utf8"))), (r) => (Result.isSuccess(r) ? r.success : undefined))

/** One ignore file as a level; undefined when it is missing or unreadable. */
const loadLevel = Effect.fnUntraced(function* (base: string, file: string) {
  const text = yield* readText(file)
  // git matches case-sensitively unless core.ignorecase is set; the library defaults to ignoring case
  return text === undefined ? undefined : { base, rules: ignore({ ignorecase: false }).add(text) }
})

/** The nearest directory at or above `dir` that holds `.git`; undefined outside a repository. */
const repositoryRoot = (dir: string): string | undefined => {
  for (let current = dir; ; current = path.dirname(current)) {
    if (fs.existsSync(path.join(current, ".git"))) return current
    if (path.dirname(current) === current) return undefined
  }
}

const decide = (levels: ReadonlyArray<Level>, target: string, isDirectory: boolean) => {
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!
    const rel = posix(path.relative(level.base, target))
    if (rel === "" || rel === ".." || rel.startsWith("../")) continue
    const result = level.rules.test(isDirectory ? `${rel}/` : rel)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}

const make = (levels: ReadonlyArray<Level>): GitIgnore => ({
  ignores: (target, isDirectory) => levels.length > 0 && decide(levels, target, isDirectory),
  enter: (dir, hasIgnoreFile) =>
    hasIgnoreFile
      ? Effect.map(loadLevel(dir, path.join(dir, ".gitignore")), (level) => (level ? make([...levels, level]) : make(levels)))
      : Effect.succeed(make(levels))
})

/** Nothing ignored: for `include_ignored`. */
export const noIgnore: GitIgnore = {
  ignores: () => false,
  enter: () => Effect.succeed(noIgnore)
}

/**
 * The ignore rules in force at `root` (absolute): `.git/info/exclude` and every `.gitignore` from
 * the repository root (else `worktree`, when `root` is inside it) down to `root`. A root that these
 * rules ignore was asked for by name: it is searched, with only the rules found inside it.
 */
export const gitIgnoreAt = Effect.fnUntraced(function* (root: string, worktree: string) {
  const repository = repositoryRoot(root)
  const top = repository ?? (isInside(worktree, root) ? worktree : root)
  const levels: Array<Level> = []
  if (repository !== undefined) {
    const exclude = yield* loadLevel(repository, path.join(repository, ".git", "info", "exclude"))
    if (exclude) levels.push(exclude)
  }
  const chain: Array<string> = []
  for (let dir = root; ; dir = path.dirname(dir)) {
    chain.unshift(dir)
    if (dir === top || path.dirname(dir) === dir) break
  }
  for (const dir of chain) {
    const level = yield* loadLevel(dir, path.join(dir, ".gitignore"))
    if (level) levels.push(level)
  }
  if (
    root !== top &&
    decide(
      levels.filter((l) => l.base !== root),
      root,
      true
    )
  ) {
    return make(levels.filter((l) => l.base === root))
  }
  return make(levels)
})
