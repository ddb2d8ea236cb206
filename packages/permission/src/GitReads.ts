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
