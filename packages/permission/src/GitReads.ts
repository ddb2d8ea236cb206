import { valueOptions } from "./GlobalOptions.ts"

/**
 * Git subcommands that print a file's contents (`git show HEAD:.env`, `git cat-file -p :.env`,
 * `git blame .env`, `git diff --no-index a b`, `git log -p -- .env`): the paths they read, so the
 * read rules apply to them as to `cat`. Words are literal values (`undefined` when computed).
 */

type Words = ReadonlyArray<string | undefined>

/** A path git reads: relative to the repository's top (`HEAD:path`), or to the directory it runs in. */
export interface GitRead {
  readonly word: string | undefined
  readonly from: "top" | "cwd"
  /** Read only if the word names an existing file: before `--`, git takes a path only if it exists. */
  readonly ifExists: boolean
}

export interface GitReads {
  /** The `-C` directories, in order (each relative to the one before). */
  readonly chdir: ReadonlyArray<string | undefined>
  readonly reads: ReadonlyArray<GitRead>
  /** The directories (words, from cwd) it reads everything under: `git grep --no-index`/`--untracked`. */
  readonly trees?: ReadonlyArray<string | undefined>
  /** Why what it reads cannot be known from the words (`git cat-file --batch` takes names on stdin). */
  readonly opaque?: string
}

// git grep's options that take a value
const GREP_VALUES = /^(-[efABCmO]|--(regexp|file|after-context|before-context|context|max-count|max-depth|threads|open-files-in-pager|and|or|not))$/
const ARCHIVE_VALUES = /^(-o|--(output|format|prefix|remote|exec))$/

/**
 * `git grep S [-- paths]`: the paths given are read (before `--`, only existing ones); with
 * `--no-index`/`--untracked` files git does not track are searched too, so a directory is read whole.
 * Without paths, only tracked files are searched (not walked: the scan does not read git's index).
 */
const grepReads = (args: ReadonlyArray<string | undefined>) => {
  const reads: Array<GitRead> = []
  let paths = false
  let pattern = args.some((w) => w === "-e" || w === "-f" || w === "--regexp" || w === "--file")
  const untracked = args.some((w) => w === "--no-index" || w === "--untracked")
  for (let i = 0; i < args.length; i++) {
    const w = args[i]
    if (!paths && w === "--") paths = true
    else if (!paths && w !== undefined && w.startsWith("-")) {
      if (w === "-f" || w === "--file") reads.push({ word: args[i + 1], from: "cwd", ifExists: false })
      if (GREP_VALUES.test(w)) i++
    } else if (!pattern && !paths) pattern = true
    else reads.push({ word: w, from: "cwd", ifExists: !paths })
  }
  const trees = untracked ? reads.map((r) => r.word) : undefined
  return { reads, ...(trees !== undefined ? { trees: trees.length > 0 ? trees : ["."] } : {}) }
}

/** `git archive [opts] TREE [paths]`: the paths (relative to where it runs), `--add-file` files. */
const archiveReads = (args: ReadonlyArray<string | undefined>) => {
  const reads: Array<GitRead> = []
  let tree = false
  for (let i = 0; i < args.length; i++) {
    const w = args[i]
    if (w?.startsWith("--add-file")) reads.push({ word: w.includes("=") ? w.slice(w.indexOf("=") + 1) : args[++i], from: "cwd", ifExists: false })
    else if (w?.startsWith("-") && w !== "--") {
      if (ARCHIVE_VALUES.test(w)) i++
    } else if (w === "--") continue
    else if (!tree) {
      tree = true
      const blob = w === undefined ? undefined : blobPath(w)
      if (blob !== undefined) reads.push(blob)
    } else reads.push({ word: w, from: "cwd", ifExists: false })
  }
  return reads
}

// log prints contents only with a patch or a line range
const LOG_PATCH = /^(-p|-u|--patch|-L.*|--patch-with-stat|--patch-with-raw|--cc|-c)$/
const PATHSPEC = new Set(["show", "diff", "blame", "annotate", "log", "whatchanged", "difftool"])

/** `HEAD:path`, `:path`, `:0:path`: the path of a blob named by revision (not `:/message`). */
const blobPath = (word: string): GitRead | undefined => {
  if (word.startsWith("-") || word.startsWith(":/")) return undefined
  const colon = word.indexOf(":")
  if (colon === -1) return undefined
  const rest = word.slice(colon + 1).replace(colon === 0 ? /^[0-3]:/ : /^$/, "")
  if (rest === "") return undefined
  return { word: rest, from: /^\.\.?(\/|$)/.test(rest) ? "cwd" : "top", ifExists: false }
}

/** What `git …` reads, for the subcommands that print file contents; none for the others. */
export const gitReads = (words: Words): GitReads => {
  const globals = valueOptions("git")
  const chdir: Array<string | undefined> = []
  let i = 1
  for (; i < words.length; i++) {
    const w = words[i]
    if (w === undefined || !w.startsWith("-")) break
    if (w === "-C") chdir.push(words[i + 1])
    if (globals.has(w)) i++
  }
  const sub = words[i]
  const args = words.slice(i + 1)
  const reads: Array<GitRead> = []
  if (sub === "grep") return { chdir, ...grepReads(args) }
  if (sub === "archive") return { chdir, reads: archiveReads(args) }
  // `git cat-file --batch <<< HEAD:.env`: the objects it prints are named on stdin
  if (sub === "cat-file" && args.some((w) => w === undefined || /^--batch(-command)?(=|$)/.test(w)))
    return { chdir, reads, opaque: "git cat-file --batch prints the objects named on its stdin" }
  if (sub === "show" || sub === "cat-file" || sub === "diff" || sub === "difftool")
    for (const w of args) {
      if (w === "--") break
      const blob = w === undefined ? undefined : blobPath(w)
      if (blob !== undefined) reads.push(blob)
    }
  const noIndex = (sub === "diff" || sub === "difftool") && args.includes("--no-index")
  const patch = sub !== "log" && sub !== "whatchanged" ? true : args.some((w) => w !== undefined && LOG_PATCH.test(w))
  if (sub !== undefined && PATHSPEC.has(sub) && patch) {
    let paths = false
    for (const w of args) {
      if (w === "--") {
        paths = true
        continue
      }
      if (!paths && w !== undefined && w.startsWith("-")) continue
      if (!paths && w !== undefined && blobPath(w) !== undefined) continue
      reads.push({ word: w, from: "cwd", ifExists: !paths && !noIndex })
    }
  }
  return { chdir, reads }
}
