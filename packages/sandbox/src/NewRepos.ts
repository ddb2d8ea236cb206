// Git repositories a sandboxed command makes (a `git init` where there was none, a new submodule's git
// dir under .git/modules, a new worktree's, a nested repository the project's index now links): git
// runs their hooks and the commands their config names later, outside the sandbox (`git status` in the
// project recurses into linked repositories). Nothing of theirs existed to keep read-only, so after
// the command what it wrote there that runs code goes: hooks other than git's samples, and the config
// keys that name a command (`core.fsmonitor`, `filter.*`, `include.path`, …) — the rest of the
// repository stays as the command made it.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { children, mtimeOf } from "./Fs.ts"

/** Whether a git config key (`section.sub.key`, lower-case section and key) names a command; the runtime gives the permission scan's table. */
export type CodeKey = (key: string) => boolean

const HEADER = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/
const ENTRY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$|[#;])/

/** `text` (a git config file) without the entries whose key names a command; the keys taken out. */
export const stripCodeKeys = (text: string, isCode: CodeKey): { readonly text: string; readonly removed: ReadonlyArray<string> } => {
  const out: Array<string> = []
  const removed: Array<string> = []
  let section = ""
  let continued = false
  for (const line of text.split("\n")) {
    // a value continued from a removed entry's line
    if (continued) {
      continued = /\\\s*$/.test(line)
      continue
    }
    const header = HEADER.exec(line)
    if (header) {
      section = header[2] !== undefined ? `${header[1]!.toLowerCase()}.${header[2]}` : header[1]!.toLowerCase()
      const rest = header[3] ?? ""
      const inline = ENTRY.exec(rest)
      // `[core] fsmonitor = …` on the header's line
      if (inline && isCode(`${section}.${inline[1]!.toLowerCase()}`)) {
        removed.push(`${section}.${inline[1]!.toLowerCase()}`)
        out.push(line.slice(0, line.indexOf("]") + 1))
        continued = /\\\s*$/.test(rest)
        continue
      }
      out.push(line)
      continue
    }
    const entry = ENTRY.exec(line)
    if (entry && isCode(`${section}.${entry[1]!.toLowerCase()}`)) {
      removed.push(`${section}.${entry[1]!.toLowerCase()}`)
      continued = /\\\s*$/.test(line)
      continue
    }
    out.push(line)
  }
  return { text: out.join("\n"), removed }
}

/**
 * Takes out of the git dir `gitDir` what the command (which started at `since`) wrote there that runs
 * code: hooks other than samples, code keys of its config; what was taken, as places relative to `project`.
 */
export const defuseRepository = (gitDir: string, since: number, isCode: CodeKey, project: string): Array<string> => {
  const undone: Array<string> = []
  const rel = (p: string) => path.relative(project, p) || p
  for (const hook of children(path.join(gitDir, "hooks"))) {
    if (hook.endsWith(".sample") || (mtimeOf(hook, false) ?? 0) < since) continue
    fs.rmSync(hook, { recursive: true, force: true })
    undone.push(rel(hook))
  }
  for (const name of ["config", "config.worktree"]) {
    const file = path.join(gitDir, name)
    if ((mtimeOf(file, false) ?? 0) < since) continue
    let text: string
    try {
      text = fs.readFileSync(file, "utf8")
    } catch {
      continue
    }
    const stripped = stripCodeKeys(text, isCode)
    if (stripped.removed.length === 0) continue
    fs.writeFileSync(file, stripped.text)
    undone.push(`${rel(file)} (${stripped.removed.join(", ")})`)
  }
  return undone
}

/** The git dir of a checkout at `dir`: its `.git` directory, or where its `.git` file points. */
export const gitDirOf = (dir: string): string | undefined => {
  const dotGit = path.join(dir, ".git")
  try {
    const stat = fs.lstatSync(dotGit)
    if (stat.isDirectory()) return dotGit
    if (!stat.isFile()) return undefined
    const pointed = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, "utf8"))?.[1]
    return pointed === undefined ? undefined : path.resolve(dir, pointed)
  } catch {
    return undefined
  }
}

/**
 * The repositories the index of the repository at `root` links (submodules and nested repositories
 * added with `git add`), asked of git itself with nothing of the repository's that runs code.
 */
export const linkedRepositories = (root: string): Array<string> => {
  const listed = spawnSync("git", ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "ls-files", "--stage", "-z"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_OPTIONAL_LOCKS: "0" },
    timeout: 10_000,
    maxBuffer: 64 * 1024 * 1024
  })
  if (listed.status !== 0 || typeof listed.stdout !== "string") return []
  return listed.stdout
    .split("\0")
    .filter((entry) => entry.startsWith("160000 "))
    .map((entry) => path.join(root, entry.slice(entry.indexOf("\t") + 1)))
}
