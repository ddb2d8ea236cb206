import * as fs from "node:fs"
import * as path from "node:path"
import { segmentRegExp } from "./Globs.ts"
import type { Node } from "./Parser.ts"
import { realLocation } from "./Paths.ts"
import { readWords } from "./Readers.ts"
import { literal } from "./Words.ts"
import { placeholder } from "./Wrappers.ts"

/**
 * Reads the scan cannot see in the words: a tree read whole (`grep -r S .`, `tar cf - .`) and
 * names that arrive at run time (`find . -exec cat {} \;`, `find … | xargs cat`). The files are
 * found by walking the file system as the command will, so the read rules judge each of them.
 */

type Words = ReadonlyArray<string | undefined>

/** At most this many directory entries are walked for one command; past it the walk is incomplete (asks). */
export const MAX_WALK = 20_000
/** Directories not walked: dependencies and git's own store (the walk would hit the cap in most projects). */
const SKIPPED = new Set(["node_modules", ".git"])

export interface Walked {
  /** Absolute paths kept (and the real location of each link among them). */
  readonly files: ReadonlyArray<string>
  readonly complete: boolean
}

/** Every file under `root` (itself when a file), hidden names only if `hidden`, those `keep` accepts. */
export const walk = (root: string, hidden: boolean, keep?: (file: string, name: string, dir: boolean) => boolean): Walked => {
  const files: Array<string> = []
  const push = (file: string, link: boolean) => {
    files.push(file)
    if (link) files.push(realLocation(file))
  }
  const top = fs.lstatSync(root, { throwIfNoEntry: false })
  if (top === undefined) return { files, complete: true }
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    if (keep === undefined || keep(root, path.basename(root), false)) push(root, top.isSymbolicLink())
    return { files, complete: true }
  }
  let seen = 0
  const stack = [root]
  while (stack.length > 0) {
    const dir = stack.pop()!
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      if (++seen > MAX_WALK) return { files, complete: false }
      if (!hidden && entry.name.startsWith(".")) continue
      const file = path.join(dir, entry.name)
      const isDir = entry.isDirectory()
      if (isDir && !SKIPPED.has(entry.name)) stack.push(file)
      if (keep === undefined ? !isDir : keep(file, entry.name, isDir)) push(file, entry.isSymbolicLink())
    }
  }
  return { files, complete: true }
}

/** What `find` lists: its start directories, and a test that is true for at least what it prints. */
export interface FindQuery {
  readonly roots: ReadonlyArray<string | undefined>
  readonly keep: (root: string, rootWord: string) => (file: string, name: string, dir: boolean) => boolean
}

const OPERATORS = new Set(["-o", "-or", "!", "-not", "(", ")", ","])

/**
 * `find [-H -L -P] roots… expression`: the `-name`/`-iname`/`-path`/`-ipath`/`-type` tests when
 * they are all joined by "and"; with `-o`, `!` or parentheses (or a computed word) every entry.
 */
export const findQuery = (words: Words): FindQuery => {
  let i = 1
  for (; i < words.length && /^-([HLP]|D|O\d*)$/.test(words[i] ?? ""); i++) if (words[i] === "-D") i++
  const roots: Array<string | undefined> = []
  for (; i < words.length; i++) {
    const w = words[i]
    if (w !== undefined && (w.startsWith("-") || OPERATORS.has(w))) break
    roots.push(w)
  }
  const tests: Array<(printed: string, name: string, dir: boolean) => boolean> = []
  let plain = true
  for (; i < words.length; i++) {
    const w = words[i]
    if (w === undefined || OPERATORS.has(w)) plain = false
    else if (/^-(exec|execdir|ok|okdir)$/.test(w)) while (i + 1 < words.length && words[i + 1] !== ";" && words[i + 1] !== "+") i++
    else if (/^-i?(name|path|wholename)$/.test(w)) {
      const value = words[++i]
      if (value === undefined) plain = false
      else {
        const re = segmentRegExp(value, w.startsWith("-i"))
        tests.push(w.endsWith("name") && !w.endsWith("wholename") ? (_, name) => re.test(name) : (printed) => re.test(printed))
      }
    } else if (w === "-type") {
      const type = words[++i]
      if (type === "f" || type === "d") tests.push((_, __, dir) => dir === (type === "d"))
    }
  }
  return {
    roots: roots.length > 0 ? roots : ["."],
    keep: (root, rootWord) => (file, name, dir) => !plain || tests.every((t) => t(rootWord + file.slice(root.length), name, dir))
  }
}

/** Where the names of a hosted command come from. */
export type Names =
  | { readonly kind: "find"; readonly words: Words }
  | { readonly kind: "words"; readonly words: ReadonlyArray<string> }
  | { readonly kind: "unknown"; readonly why: string }

const wordsOf = (command: Node): Words => {
  const name = command.childForFieldName("name")
  return [name ? literal(name) : undefined, ...command.childrenForFieldName("argument").map(literal)]
}

const base = (w: string | undefined) => (w === undefined ? undefined : path.basename(w))

/** What a command piped into `xargs` prints: find's matches, echo's or printf's words; else unknown. */
const pipedInto = (command: Node, xargs: Words): Names => {
  if (readWords("xargs", xargs).length > 0) return { kind: "unknown", why: "xargs reads names from a file" }
  const parent = command.parent
  if (parent?.type !== "pipeline") return { kind: "unknown", why: "xargs reads names from its input" }
  const index = parent.namedChildren.findIndex((c) => c.id === command.id)
  const source = index > 0 ? parent.namedChildren[index - 1] : undefined
  if (source?.type !== "command") return { kind: "unknown", why: "xargs reads names another command prints" }
  const words = wordsOf(source)
  const program = base(words[0])
  if (program === "find") return { kind: "find", words }
  if ((program === "echo" || program === "printf") && words.every((w) => w !== undefined))
    return {
      kind: "words",
      words: (words as ReadonlyArray<string>)
        .slice(1)
        .flatMap((w) => w.split(/\s+|\\n/))
        .filter((w) => w !== "" && !/^-[neE]+$/.test(w))
    }
  return { kind: "unknown", why: `xargs reads names that ${program ?? "a command"} prints` }
}

/** A command run by `find -exec` or `xargs`: the names it is given, and whether xargs appends them. */
export interface Hosted {
  readonly names: Names
  readonly appends: boolean
}

/**
 * The names a layer's run-time words take when it runs under `find -exec` or `xargs` (the token
 * is a word of the find or xargs command line); undefined when it is not hosted so.
 */
export const hostedNames = (first: Node): Hosted | undefined => {
  const command = first.parent
  if (command?.type !== "command" || command.childForFieldName("name")?.id === first.id) return undefined
  const args = command.childrenForFieldName("argument")
  const at = args.findIndex((a) => a.id === first.id)
  if (at === -1) return undefined
  const words = wordsOf(command)
  let exec = false
  // words[0] is the name: arguments are shifted by one
  for (let j = at; j >= 0; j--) {
    const w = words[j]
    if (w !== undefined && /^-(exec|execdir|ok|okdir)$/.test(w)) exec = true
    else if (exec && base(w) === "find") return { names: { kind: "find", words: words.slice(j) }, appends: false }
    else if (!exec && base(w) === "xargs") {
      const xargs = words.slice(j)
      return { names: pipedInto(command, xargs), appends: placeholder("xargs", xargs) === undefined }
    }
  }
  return undefined
}
