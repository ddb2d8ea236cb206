import * as path from "node:path"
import type { Node } from "./Parser.ts"
import { FILE_COMMANDS, harmlessDevice, isSymlink } from "./Paths.ts"
import { resolve, UNKNOWN, type Lookup } from "./Words.ts"
import { isInterpreter } from "./Wrappers.ts"

/**
 * The words of a command that name paths: each one outside the worktree asks `external_directory`
 * for its directory, and one whose place cannot be known asks for `*`.
 */

/** What the checks need from the scan. */
export interface PathContext {
  /** The directory the command runs in; undefined when it cannot be known. */
  readonly cwd: string | undefined
  /** The real absolute location of a path word; undefined when it cannot be known. */
  readonly locate: (word: string) => string | undefined
  /** Asks for the directory of `real` when it is outside the worktree; for `*` when undefined. */
  readonly external: (real: string | undefined) => void
  readonly lookup: Lookup
}

const GLOB = /[*?[]/
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i
// Their first operand is a pattern or a program, not a path.
const PATTERN_FIRST = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "jq", "yq", "perl"])

/** A bare word (`link`) that names a symbolic link in the current directory, which may lead outside. */
const namesSymlink = (ctx: PathContext, word: string) => ctx.cwd !== undefined && word !== "" && !GLOB.test(word) && isSymlink(path.join(ctx.cwd, word))

const ASSIGNED = /^[A-Za-z_][\w.-]*=/
// `host:path` of scp and rsync: a remote place (a literal part, a colon, before any slash)
const REMOTE = /^[^\0/:]+:/

const BRACES = /\{([^{}]*(,|\.\.)[^{}]*)\}/

/** `{/etc,x}/passwd` is two paths when it runs: the words a brace expansion gives (at most 16). */
export const expandBraces = (word: string): Array<string> => {
  const out: Array<string> = []
  const pending = [word]
  while (pending.length > 0 && out.length + pending.length <= 16) {
    const w = pending.pop()!
    const m = BRACES.exec(w)
    if (!m) {
      out.push(w)
      continue
    }
    const inner = m[1]!
    const range = /^(-?\w+)\.\.(-?\w+)(\.\.-?\d+)?$/.exec(inner)
    // a range gives words of the same shape as its ends: both ends stand for it
    const parts = range ? [range[1]!, range[2]!] : inner.split(",")
    for (const part of parts) pending.push(w.slice(0, m.index) + part + w.slice(m.index + m[0].length))
  }
  // more than 16: the braces are kept, and the word is read as written (its fixed part still counts)
  return pending.length > 0 ? [...out, ...pending.map((w) => w.replace(BRACES, "x"))] : out
}

/** One value of a word: each path it gives outside the worktree raises `external_directory`. */
const checkValue = (ctx: PathContext, word: string, name: string) => {
  if (!word.includes("{")) return checkOne(ctx, word, name)
  for (const w of expandBraces(word)) checkOne(ctx, w, name)
}

// `-o/tmp/x`, `-C../x`, `-t/dir`: a short option of output, directory or file with its path attached
const ATTACHED_PATH = /^-[oOCdDftT](?=[/~]|\.\.(\/|$))/
// curl's `-d @file`, `-F name=@file`, `name=<file`: the file is read and sent
const CURL_FILE = /^(?:[^=@<]*=)?[@<](?=[/~.])/

const checkOne = (ctx: PathContext, w: string, name: string) => {
  // `--file=/x`, `if=/x` (dd), `DESTDIR=/x`: the value is the path
  if (w.startsWith("-")) {
    const eq = w.indexOf("=")
    if (ATTACHED_PATH.test(w) && (eq === -1 || eq > w.search(/[/~.]/))) w = w.slice(2)
    else if (eq === -1) return
    else w = w.slice(eq + 1)
  } else if (name === "dd" && /^(if|of)=/.test(w)) w = w.slice(3)
  else if ((name === "curl" || name === "http" || name === "https") && CURL_FILE.test(w)) w = w.replace(CURL_FILE, "")
  else if (ASSIGNED.test(w) && /^[^=]*=(\/|~|\.\.)/.test(w)) w = w.slice(w.indexOf("=") + 1)
  // `file:///etc/passwd` is a local path whatever reads it
  if (/^file:\/\//i.test(w)) w = decodeURI(w.slice(7).replace(/^[^/]*/, "")) || "/"
  if (URL_LIKE.test(w) || harmlessDevice(w)) return
  if (!(w.startsWith("/") || w.startsWith("~") || w.startsWith(".") || w.includes("/")) && !namesSymlink(ctx, w)) return
  const glob = w.search(GLOB)
  const fixed = glob === -1 ? w : path.dirname(`${w.slice(0, glob)}x`)
  const real = ctx.locate(fixed)
  if (real !== undefined && harmlessDevice(real)) return
  ctx.external(real)
}

/**
 * A word with expansions (shape: {@link UNKNOWN} for each) is a path when one is plausible: its
 * text has a `/` or starts with `~` (`$HOME/.ssh/x`, `"$(pwd)/../x"`, `~$U/x`), or it is an operand
 * of a command that takes files (`cat $X`, `cp "$A" "$B"`). Then each value it may take is checked
 * (variables assigned earlier in the line, HOME, PWD), and a value that cannot be known is a place
 * that cannot be known: `external_directory *`, asked. Elsewhere (`echo $HOME`, `git checkout
 * $BRANCH`) it is not a path. URLs and `host:path` are not local paths.
 */
const checkComputed = (ctx: PathContext, shape: string, values: ReadonlyArray<string> | undefined, files: boolean, name: string) => {
  if (shape.startsWith("-")) {
    const eq = shape.indexOf("=")
    if (eq === -1) return
    shape = shape.slice(eq + 1)
  } else if (name === "dd" && /^(if|of)=/.test(shape)) shape = shape.slice(3)
  else if (ASSIGNED.test(shape)) shape = shape.slice(shape.indexOf("=") + 1)
  if (!shape.includes(UNKNOWN) || URL_LIKE.test(shape) || REMOTE.test(shape)) return
  if (!(shape.includes("/") || shape.startsWith("~") || files)) return
  if (values === undefined) ctx.external(undefined)
  else for (const value of values) checkValue(ctx, value, name)
}

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"])

/** Words that name a path outside the worktree raise `external_directory` for their directory. */
export const checkPaths = (ctx: PathContext, tokens: ReadonlyArray<{ readonly lit: string | undefined; readonly node: Node }>, name: string) => {
  let skipPattern = PATTERN_FIRST.has(name)
  // `sudo cat $X`: a file command anywhere before a word makes it a file operand
  let files = FILE_COMMANDS.has(name) || isInterpreter(name)
  let expression = false
  // `tar -P`: members with absolute names and `..` are written where they say
  if (
    (name === "tar" || name === "gtar" || name === "bsdtar") &&
    tokens.some(
      (t) =>
        t.lit === undefined ||
        t.lit === "--absolute-names" ||
        /^-[A-Za-z]*P/.test(t.lit) ||
        (/^[A-Za-z]+$/.test(t.lit) && t.lit.includes("P") && t === tokens[1])
    )
  )
    ctx.external(undefined)
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i]!
    // a computed word can only be a path by its literal parts (a `/`, a leading `~`) or as a file
    // operand: other words are not looked at further (the tree is costly to walk)
    if (t.lit === undefined && (expression || (!files && !skipPattern && !/[/~]/.test(t.node.text)))) continue
    const { values, shape } = t.lit !== undefined ? { values: [t.lit], shape: t.lit } : resolve(t.node, ctx.lookup)
    if (shape === "-e" && skipPattern) {
      i++
      skipPattern = false
      continue
    }
    if (skipPattern && !shape.startsWith("-")) {
      skipPattern = false
      continue
    }
    if (t.lit !== undefined && (FILE_COMMANDS.has(t.lit) || isInterpreter(t.lit))) files = true
    // find's expression (`-name "$p"`, `-path "$d/*"`) holds patterns, until -exec names a command
    if (name === "find" && !expression && /^[-(!]/.test(shape)) expression = true
    if (expression && FIND_EXEC.has(shape)) {
      expression = false
      files = false
      continue
    }
    if (t.lit !== undefined) checkValue(ctx, t.lit, name)
    else checkComputed(ctx, shape, values, files, name)
  }
}
