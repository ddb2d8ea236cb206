// What a sandboxed command may not leave behind in a repository: a NEW file that makes git run code
// later, outside the sandbox. bubblewrap keeps the existing hooks, config, commondir… read-only, but
// can only bind what exists: a missing `.git/commondir` (git then reads config and hooks from where it
// points), `config.worktree`, `info/attributes`, a missing `hooks/` directory, a submodule's missing
// hooks, or a `.git` file rewritten to point elsewhere, are in a writable directory. Masking them at
// start would leave an empty file on the host (an empty commondir breaks git), so instead the few
// places are looked at before and after each command (a stat each) and what appeared is taken away.
import * as fs from "node:fs"
import * as path from "node:path"

/** The state of the watched places before a command. */
export interface GitSnapshot {
  /** Places that were not there (their appearance is undone). */
  readonly absent: ReadonlyArray<string>
  /** `.git` files (a worktree's, a submodule's checkout) and their contents (a change is undone). */
  readonly gitFiles: ReadonlyArray<readonly [file: string, contents: string]>
}

const exists = (p: string) => {
  try {
    fs.lstatSync(p)
    return true
  } catch {
    return false
  }
}

const isDirectory = (p: string) => {
  try {
    return fs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

const isFile = (p: string) => {
  try {
    return fs.lstatSync(p).isFile()
  } catch {
    return false
  }
}

const children = (dir: string) => {
  try {
    return fs.readdirSync(dir).map((n) => path.join(dir, n))
  } catch {
    return []
  }
}

/** The files under a git dir that make git run code or read its config from elsewhere. */
const CODE_FILES = ["commondir", "config", "config.worktree", "info/attributes", "hooks"]

/**
 * The watched places of the repositories at `roots` (the project, and the repository it is in): each
 * git dir's code files, those of its submodules and worktrees; a `.git` file's contents; and, for a
 * project inside a repository, its own `.git` (one created there would shadow the repository's).
 */
export const snapshotGit = (roots: { readonly project: string; readonly repository?: string }): GitSnapshot => {
  const absent: Array<string> = []
  const gitFiles: Array<readonly [string, string]> = []
  const repositories = [...new Set([roots.project, ...(roots.repository !== undefined ? [roots.repository] : [])])]
  for (const root of repositories) {
    const git = path.join(root, ".git")
    if (isFile(git)) {
      try {
        gitFiles.push([git, fs.readFileSync(git, "utf8")])
      } catch {}
      continue
    }
    if (!isDirectory(git)) {
      if (root === roots.project && roots.repository !== undefined && roots.repository !== roots.project) absent.push(git)
      continue
    }
    const dirs = [git, ...children(path.join(git, "modules")).filter(isDirectory), ...children(path.join(git, "worktrees")).filter(isDirectory)]
    for (const dir of dirs) for (const file of CODE_FILES) if (!exists(path.join(dir, file))) absent.push(path.join(dir, file))
  }
  return { absent, gitFiles }
}

/** A hooks directory that appeared holding only git's `*.sample` files (a `git init` run again) runs nothing: it stays. */
const harmless = (p: string) => path.basename(p) === "hooks" && isDirectory(p) && children(p).every((f) => f.endsWith(".sample"))

/** Undoes what appeared or changed since `before`; the places undone, relative to `project`. */
export const settleGit = (before: GitSnapshot, project: string): Array<string> => {
  const undone: Array<string> = []
  for (const p of before.absent) {
    if (!exists(p) || harmless(p)) continue
    fs.rmSync(p, { recursive: true, force: true })
    undone.push(p)
  }
  for (const [file, contents] of before.gitFiles) {
    let now: string | undefined
    try {
      now = fs.readFileSync(file, "utf8")
    } catch {
      now = undefined
    }
    if (now === contents) continue
    fs.rmSync(file, { recursive: true, force: true })
    fs.writeFileSync(file, contents)
    undone.push(file)
  }
  return undone.map((p) => path.relative(project, p) || p)
}

/** What the model and the user are told when something was undone. */
export const gitNote = (undone: ReadonlyArray<string>) =>
  undone.length === 0
    ? undefined
    : `reins's sandbox undid ${undone.join(", ")}: the command created or changed ${undone.length === 1 ? "it" : "them"}, and git would run code from there outside the sandbox (hooks, config). This is not a bug in the command; do not work around it. If the task needs it, tell the user.`

const real = (p: string) => {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}

/** Looks now; the function it gives, called after the command, undoes what appeared and says so (undefined when nothing did). */
export const watchGit = (places: { readonly project: string; readonly repository?: string }): (() => string | undefined) => {
  const roots = { project: real(places.project), ...(places.repository !== undefined ? { repository: real(places.repository) } : {}) }
  const before = snapshotGit(roots)
  return () => gitNote(settleGit(before, roots.project))
}
