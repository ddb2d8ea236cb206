// What a sandboxed command may not leave behind in a repository: a NEW file that makes git run code
// later, outside the sandbox. bubblewrap keeps the existing hooks, config, commondir… read-only, but
// can only bind what exists: a missing `.git/commondir` (git then reads config and hooks from where it
// points), `config.worktree`, `info/attributes`, a missing `hooks/` directory, a submodule's missing
// hooks, or a `.git` file rewritten to point elsewhere, are in a writable directory. Masking them at
// start would leave an empty file on the host (an empty commondir breaks git), so instead the few
// places are looked at before and after each command (a stat each) and what appeared is taken away.
import * as fs from "node:fs"
import * as path from "node:path"
import { children, entryKind, exists, mtimeOf, real } from "./Fs.ts"
import { type CodeKey, defuseRepository, gitDirOf, linkedRepositories } from "./NewRepos.ts"
import { GIT_CODE_FILES } from "./Profile.ts"

/** The state of the watched places before a command. */
export interface GitSnapshot {
  /** Places that were not there (their appearance is undone). */
  readonly absent: ReadonlyArray<string>
  /** `.git` files (a worktree's, a submodule's checkout) and their contents (a change is undone). */
  readonly gitFiles: ReadonlyArray<readonly [file: string, contents: string]>
  /** When the command started, less the file system clock's coarseness (what changed after it is the command's). */
  readonly since: number
  /** Where a repository may appear that git would later run code from: the project's own `.git`, when it has none. */
  readonly newGitDirs: ReadonlyArray<string>
  /** The submodules' and worktrees' git dirs there are now, by the directory holding them (a new one is the command's). */
  readonly known: ReadonlyArray<readonly [dir: string, names: ReadonlyArray<string>]>
  /** Each repository's index and its time (a changed index may link a new repository). */
  readonly indexes: ReadonlyArray<readonly [root: string, index: string, mtime: number | undefined]>
}

const isDirectoryEntry = (p: string) => entryKind(p) === "directory"
const isFileEntry = (p: string) => entryKind(p) === "file"

/**
 * The watched places of the repositories at `roots` (the project, and the repository it is in): each
 * git dir's code files, those of its submodules and worktrees; a `.git` file's contents; and, for a
 * project inside a repository, its own `.git` (one created there would shadow the repository's).
 */
export const snapshotGit = (roots: { readonly project: string; readonly repository?: string }): GitSnapshot => {
  const absent: Array<string> = []
  const gitFiles: Array<readonly [string, string]> = []
  const newGitDirs: Array<string> = []
  const known: Array<readonly [string, ReadonlyArray<string>]> = []
  const indexes: Array<readonly [string, string, number | undefined]> = []
  const repositories = [...new Set([roots.project, ...(roots.repository !== undefined ? [roots.repository] : [])])]
  for (const root of repositories) {
    const git = path.join(root, ".git")
    if (isFileEntry(git)) {
      try {
        gitFiles.push([git, fs.readFileSync(git, "utf8")])
      } catch {}
      continue
    }
    if (!isDirectoryEntry(git)) {
      if (root === roots.project && roots.repository !== undefined && roots.repository !== roots.project) absent.push(git)
      else if (!exists(git)) newGitDirs.push(git)
      continue
    }
    const dirs = [git, ...children(path.join(git, "modules")).filter(isDirectoryEntry), ...children(path.join(git, "worktrees")).filter(isDirectoryEntry)]
    for (const dir of dirs) for (const file of GIT_CODE_FILES) if (!exists(path.join(dir, file))) absent.push(path.join(dir, file))
    for (const holder of ["modules", "worktrees"]) known.push([path.join(git, holder), children(path.join(git, holder))])
    indexes.push([root, path.join(git, "index"), mtimeOf(path.join(git, "index"))])
  }
  // file times come from a coarse clock (a jiffy behind): a margin, so that nothing the command wrote looks older
  return { absent, gitFiles, since: Date.now() - 50, newGitDirs, known, indexes }
}

/**
 * What runs code in the repositories the command made (see NewRepos.ts): a `.git` where there was none,
 * a new submodule's or worktree's git dir, a repository a changed index now links. Taken out; the rest stays.
 */
const defuseNewRepositories = (before: GitSnapshot, project: string, isCode: CodeKey): Array<string> => {
  const made = new Set<string>()
  for (const git of before.newGitDirs) if (isDirectoryEntry(git)) made.add(git)
  for (const [holder, names] of before.known) for (const dir of children(holder)) if (!names.includes(dir) && isDirectoryEntry(dir)) made.add(dir)
  for (const [root, index, mtime] of before.indexes) {
    if (mtimeOf(index) === mtime) continue
    for (const linked of linkedRepositories(root)) {
      const git = gitDirOf(linked)
      if (git !== undefined) made.add(git)
    }
  }
  return [...made].flatMap((git) => defuseRepository(git, before.since, isCode, project))
}

/** A hooks directory that appeared holding only git's `*.sample` files (a `git init` run again) runs nothing: it stays. */
const harmless = (p: string) => path.basename(p) === "hooks" && isDirectoryEntry(p) && children(p).every((f) => f.endsWith(".sample"))

/** Undoes what appeared or changed since `before`; the places undone, relative to `project`. */
export const settleGit = (before: GitSnapshot, project: string, isCode?: CodeKey): Array<string> => {
  const undone: Array<string> = isCode === undefined ? [] : defuseNewRepositories(before, project, isCode)
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
  return undone.map((p) => (path.isAbsolute(p) ? path.relative(project, p) || p : p))
}

/** What the model and the user are told when something was undone. */
export const gitNote = (undone: ReadonlyArray<string>) =>
  undone.length === 0
    ? undefined
    : `reins's sandbox undid ${undone.join(", ")}: the command created or changed ${undone.length === 1 ? "it" : "them"}, and git would run code from there outside the sandbox (hooks, config). This is not a bug in the command; do not work around it. If the task needs it, tell the user.`

/** Looks now; the function it gives, called after the command, undoes what appeared and says so (undefined when nothing did). */
export const watchGit = (places: { readonly project: string; readonly repository?: string }, isCode?: CodeKey): (() => string | undefined) => {
  const roots = { project: real(places.project), ...(places.repository !== undefined ? { repository: real(places.repository) } : {}) }
  const before = snapshotGit(roots)
  return () => gitNote(settleGit(before, roots.project, isCode))
}
