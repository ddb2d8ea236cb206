import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Pathname expansion as bash does it when a command runs (`cat *.env`, `cat .e*`, `src/[ab]/x`),
 * done by the scan against the file system, so the files a glob names are judged one by one.
 */

/** The shell options that change what a glob matches. */
export interface GlobOptions {
  /** `shopt -s dotglob` (or GLOBIGNORE set): `*` matches names starting with `.`. */
  readonly dotglob: boolean
  /** `shopt -s nocaseglob`: letters match either case. */
  readonly nocase: boolean
  /** `shopt -s globstar`: `**` matches any depth (not followed: the expansion is incomplete). */
  readonly globstar: boolean
}

export interface Expanded {
  /** Absolute paths of the existing files and directories the word matches (as bash writes them). */
  readonly matches: ReadonlyArray<string>
  /** False when the scan did not follow every match (too many, `**` with globstar). */
  readonly complete: boolean
}

/** At most this many names are matched for one word; past it the expansion is incomplete. */
export const MAX_MATCHES = 1000

const GLOB_CHAR = /(?<!\\)[*?[]/

/** True when an unescaped `*`, `?` or `[` may make the word a pattern. */
export const isGlob = (word: string) => GLOB_CHAR.test(word)

const escapeRegExp = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")

/** One path segment of a glob as a regular expression; a class it cannot translate matches any character. */
export const segmentRegExp = (segment: string, nocase: boolean): RegExp => {
  let re = ""
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!
    if (c === "\\" && i + 1 < segment.length) re += escapeRegExp(segment[++i]!)
    else if (c === "*") re += ".*"
    else if (c === "?") re += "."
    else if (c === "[") {
      let end = i + 1
      if (segment[end] === "!" || segment[end] === "^") end++
      if (segment[end] === "]") end++
      end = segment.indexOf("]", end)
      if (end === -1) {
        re += "\\["
        continue
      }
      const body = segment.slice(i + 1, end)
      i = end
      // `[[:alpha:]]`, `[=a=]`: classes JavaScript lacks are any character (more matches, never fewer)
      if (/\[[:=.]/.test(body)) re += "."
      else re += `[${/^[!^]/.test(body) ? `^${body.slice(1)}` : body}]`.replaceAll("\\", "\\\\")
    } else re += escapeRegExp(c)
  }
  try {
    return new RegExp(`^${re}$`, nocase ? "is" : "s")
  } catch {
    return /^.*$/s
  }
}

const unescapeSegment = (segment: string) => segment.replace(/\\(.)/g, "$1")

const entries = (dir: string): ReadonlyArray<string> => {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
}

/** The files `word` (a path, relative to `cwd` unless absolute) matches when it runs. */
export const expandGlob = (cwd: string, word: string, options: GlobOptions): Expanded => {
  const absolute = path.isAbsolute(word)
  const segments = word.split("/").filter((s, i) => s !== "" || i === 0)
  let current: Array<string> = [absolute ? "/" : cwd]
  let complete = true
  for (const [index, segment] of segments.entries()) {
    if (index === 0 && absolute) continue
    if (!isGlob(segment)) {
      current = current.map((c) => path.join(c, unescapeSegment(segment)))
      continue
    }
    if (segment === "**" && options.globstar) complete = false
    const re = segmentRegExp(segment, options.nocase)
    const hidden = options.dotglob || segment.startsWith(".") || segment.startsWith("\\.")
    const next: Array<string> = []
    for (const dir of current) {
      for (const name of entries(dir)) {
        if (name.startsWith(".") && !hidden) continue
        if (!re.test(name)) continue
        if (next.length >= MAX_MATCHES) {
          complete = false
          break
        }
        next.push(path.join(dir, name))
      }
    }
    current = next
    if (current.length === 0) return { matches: [], complete }
  }
  return { matches: current.filter((c) => fs.existsSync(c) || isLink(c)), complete }
}

const isLink = (file: string) => fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true
