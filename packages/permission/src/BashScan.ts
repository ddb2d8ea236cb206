import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { commandPrefix } from "./Arity.ts"
import { bashParser, type Node, type Parser } from "./Parser.ts"
import { askDirectory, expandTilde, harmlessDevice, isInside, realLocation } from "./Paths.ts"
import { isInterpreter, isWrapper, placeholder, readsProgramFromStdin, unwrap } from "./Wrappers.ts"

/** One permission a shell command needs, found by the scan. */
export interface ScanRequest {
  readonly permission: "bash" | "edit" | "external_directory"
  /** Every pattern must be allowed: the text as written, and the real command under wrappers and quotes. */
  readonly patterns: ReadonlyArray<string>
  /** What "always" allows from now on: `<arity prefix> *` per pattern, the exact text when opaque. */
  readonly always: ReadonlyArray<string>
  /** Why the command cannot be judged by its text; such requests are never allowed by a broad rule. */
  readonly opaque?: string
  /** The directory the command runs in (after `cd`); undefined when it cannot be known. */
  readonly directory?: string
}

export interface ScanOptions {
  /** Where the command starts (the bash tool's workdir). */
  readonly cwd: string
  /** The project directory; paths outside it need `external_directory` (default `cwd`). */
  readonly worktree?: string
  readonly home?: string
}

interface Token {
  readonly raw: string
  readonly lit: string | undefined
  readonly node: Node
}

interface State {
  cwd: string | undefined
  stack: Array<string | undefined>
  readonly worktree: string
  readonly home: string
  readonly parser: Parser
  readonly out: Map<string, ScanRequest>
}

const MAX_DEPTH = 8

// Double quotes keep backslashes except before $ ` " \ and newline.
const unescapeDouble = (s: string) => s.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))
const unescapeWord = (s: string) => s.replace(/\\(.)/gs, (_, c: string) => (c === "\n" ? "" : c))

/** The value of a word when it is fixed in the text (no expansion, no substitution); else undefined. */
const literal = (node: Node): string | undefined => {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeWord(node.text)
    case "raw_string":
      return node.text.slice(1, -1)
    case "string":
      return node.namedChildren.every((c) => c.type === "string_content") ? unescapeDouble(node.text.slice(1, -1)) : undefined
    case "concatenation": {
      let out = ""
      for (const part of node.namedChildren) {
        const value = literal(part)
        if (value === undefined) return undefined
        out += value
      }
      return out
    }
    case "command_name":
      return node.namedChildren.length === 1 ? literal(node.namedChildren[0]!) : undefined
    default:
      return undefined
  }
}

const token = (node: Node): Token => ({ raw: node.text, lit: literal(node), node })

const add = (st: State, request: ScanRequest) => {
  const key = `${request.permission}\0${request.patterns.join("\0")}`
  const seen = st.out.get(key)
  if (!seen || (request.opaque && !seen.opaque)) st.out.set(key, request)
}

const unique = (list: ReadonlyArray<string>) => [...new Set(list)]

/** `external_directory` for a place outside the worktree; `*` when the place cannot be known. */
const external = (st: State, real: string | undefined) => {
  if (real !== undefined && isInside(st.worktree, real)) return
  const pattern = real === undefined ? "*" : path.join(askDirectory(real), "*")
  add(st, { permission: "external_directory", patterns: [pattern], always: [pattern], ...(st.cwd ? { directory: st.cwd } : {}) })
}

/** The real absolute location of a path word, or undefined when it is relative to an unknown dir. */
const locate = (st: State, given: string): string | undefined => {
  const expanded = expandTilde(given, st.home)
  if (!path.isAbsolute(expanded) && st.cwd === undefined) return undefined
  // joined as written: realLocation takes `..` after the symlinks before it, as the kernel does
  return realLocation(path.isAbsolute(expanded) ? expanded : `${st.cwd ?? "/"}${path.sep}${expanded}`)
}

const GLOB = /[*?[]/
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i
// Their first operand is a pattern or a program, not a path.
const PATTERN_FIRST = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "jq", "yq", "perl"])

/** A bare word (`link`) that names a symbolic link in the current directory, which may lead outside. */
const isSymlink = (st: State, word: string) => {
  if (st.cwd === undefined || word === "" || GLOB.test(word)) return false
  try {
    return fs.lstatSync(path.join(st.cwd, word)).isSymbolicLink()
  } catch {
    return false
  }
}

/** Words that name a path outside the worktree raise `external_directory` for their directory. */
const checkPaths = (st: State, words: ReadonlyArray<string | undefined>, name: string) => {
  let skipPattern = PATTERN_FIRST.has(name)
  for (let i = 1; i < words.length; i++) {
    let w = words[i]
    if (w === undefined) continue
    if (w === "-e" && skipPattern) {
      i++
      skipPattern = false
      continue
    }
    if (w.startsWith("-")) {
      const eq = w.indexOf("=")
      if (eq === -1) continue
      w = w.slice(eq + 1)
    } else if (skipPattern) {
      skipPattern = false
      continue
    }
    if (URL_LIKE.test(w)) continue
    if (!(w.startsWith("/") || w.startsWith("~") || w.startsWith(".") || w.includes("/")) && !isSymlink(st, w)) continue
    const glob = w.search(GLOB)
    const fixed = glob === -1 ? w : path.dirname(w.slice(0, glob) + "x")
    const real = locate(st, fixed)
    if (real !== undefined && harmlessDevice(real)) continue
    external(st, real)
  }
}

/** Redirections: writes need `edit` on the target; any target outside the worktree asks for its directory. */
const checkRedirects = (st: State, redirects: ReadonlyArray<Node>) => {
  let stdin = false
  for (const r of redirects) {
    if (r.type === "heredoc_redirect" || r.type === "herestring_redirect") {
      stdin = true
      continue
    }
    const destination = r.childForFieldName("destination")
    if (!destination) continue
    const operator = r.text.slice(0, destination.startIndex - r.startIndex)
    const writes = operator.includes(">")
    // `<file`, `<&3`: stdin comes from somewhere else than the terminal
    if (!writes) stdin = true
    if (destination.type === "number") continue
    const target = literal(destination)
    if (target === undefined) {
      if (writes) {
        add(st, {
          permission: "edit",
          patterns: [destination.text],
          always: [destination.text],
          opaque: "the redirection target is computed at run time",
          ...(st.cwd ? { directory: st.cwd } : {})
        })
      }
      continue
    }
    const real = locate(st, target)
    if (real !== undefined && harmlessDevice(real)) continue
    external(st, real)
    if (writes) {
      const pattern = real ?? target
      add(st, { permission: "edit", patterns: [pattern], always: [path.join(path.dirname(pattern), "*")], ...(st.cwd ? { directory: st.cwd } : {}) })
    }
  }
  return stdin
}

interface Found {
  readonly patterns: Array<string>
  readonly always: Array<string>
  opaque?: string
}

const prefixPattern = (words: ReadonlyArray<string>) => `${commandPrefix(words).join(" ") || words[0]} *`

// globs and brace expansion: `/bin/r? x`, `r{m,} x`, `/???/r[m]` name another command when they run
const EXPANDS = /[*?]|\[.*\]|\{.*(,|\.\.).*\}/

/** True when a word's unquoted text expands (glob, braces); quoted parts cannot. */
const expands = (node: Node): boolean => {
  const unquoted = (n: Node): string =>
    n.type === "word" ? n.text.replace(/\\./gs, "_") : n.type === "concatenation" || n.type === "command_name" ? n.namedChildren.map(unquoted).join("") : "_"
  return EXPANDS.test(unquoted(node))
}

/** Runs `code` found inside a word (`env -S…`, `--command=…`, alias values) through the scan. */
const nestedCode = (st: State, code: string | undefined, found: Found, depth: number, who: string) => {
  if (code === undefined) found.opaque ??= `${who} runs shell code built at run time`
  else if (depth >= MAX_DEPTH) found.opaque ??= "shell code nested too deeply to follow"
  else scanSource(st, code, depth + 1, true)
}

/**
 * One layer of a command: wrappers add their own patterns and hand the wrapped command on.
 * `viaXargs`: the words come from `xargs`, which appends more words read from stdin.
 */
const layer = (st: State, tokens: ReadonlyArray<Token>, suffix: string, fed: boolean, found: Found, depth: number, viaXargs = false) => {
  const name = tokens[0]
  if (!name) return
  const raw = tokens.map((t) => t.raw)
  const rawText = raw.join(" ") + suffix
  const nameValue = name.lit
  const ansi = name.node.type === "ansi_c_string" || name.node.namedChildren.some((c) => c.type === "ansi_c_string")
  if (nameValue === undefined || ansi || nameValue === "" || expands(name.node)) {
    found.patterns.push(rawText)
    found.always.push(rawText)
    found.opaque ??= ansi
      ? "the command name is ANSI-C quoted"
      : nameValue !== undefined && nameValue !== ""
        ? "the command name is a pattern expanded when it runs"
        : "the command name is computed when it runs"
    return
  }
  const real = nameValue.includes("/") ? path.basename(nameValue) : nameValue
  const words = [real, ...tokens.slice(1).map((t) => t.lit ?? t.raw)]
  found.patterns.push(rawText, words.join(" ") + suffix)
  const values = tokens.map((t) => t.lit)
  const wrapped = unwrap(real, [real, ...values.slice(1)])
  if (wrapped) {
    found.always.push(`${raw[0]} *`, `${real} *`)
    // words holding the placeholder (`{}` of find -exec, xargs -I) are replaced when it runs
    const marker = placeholder(real, [real, ...values.slice(1)])
    const inner = marker === undefined ? tokens : tokens.map((t) => (t.lit?.includes(marker) ? { ...t, lit: undefined } : t))
    // xargs appends words from stdin to its command, unless it replaces a placeholder (-I)
    const appends = real === "xargs" && marker === undefined
    for (const [start, end] of wrapped.inners) layer(st, inner.slice(start, end), suffix, fed || real === "xargs", found, depth, appends)
    for (const index of wrapped.scripts) nestedCode(st, inner[index]?.lit, found, depth, real)
    for (const text of wrapped.code ?? []) nestedCode(st, text, found, depth, real)
    return
  }
  found.always.push(prefixPattern(raw), prefixPattern(words))
  if (viaXargs && isWrapper(real)) found.opaque ??= `xargs supplies the command that ${real} runs`
  else if (real === "eval") found.opaque ??= "eval runs a string as shell code"
  else if (real === "source" || real === ".") found.opaque ??= `${real} runs the commands of a file`
  else if (real === "alias") {
    // an alias is shell code that runs where its name is used
    for (const t of tokens.slice(1)) {
      const eq = t.lit?.indexOf("=") ?? 0
      if (eq > 0) nestedCode(st, t.lit!.slice(eq + 1), found, depth, real)
      else if (t.lit === undefined) found.opaque ??= "alias defines shell code built at run time"
    }
  } else if (isInterpreter(real) && tokens.slice(1).some((t) => t.node.type === "process_substitution")) {
    found.opaque ??= `${real} may read its program from a process substitution`
  } else if (fed && readsProgramFromStdin(real, [real, ...values.slice(1)])) found.opaque ??= `${real} reads its program from stdin`
}

const CD = new Set(["cd", "pushd", "popd"])

const changeDirectory = (st: State, name: string, args: ReadonlyArray<Token>) => {
  if (name === "popd") {
    st.cwd = st.stack.pop() ?? st.cwd
    return
  }
  if (name === "pushd") st.stack.push(st.cwd)
  const operands = args.filter((t) => !(t.lit ?? "").startsWith("-") || t.lit === "-")
  const target = operands[0]
  if (!target) {
    st.cwd = st.home
    return
  }
  st.cwd = target.lit === undefined || target.lit === "-" ? undefined : locate(st, target.lit)
}

/** A redirection as written; a heredoc only up to its delimiter (its body and what follows are scanned apart). */
const redirectText = (r: Node) => {
  const start = r.type === "heredoc_redirect" ? r.namedChildren.find((c) => c.type === "heredoc_start") : undefined
  return start ? r.text.slice(0, start.endIndex - r.startIndex) : r.text
}

/** A simple command: its request (all layers), its paths and redirections, and `cd`. */
const command = (st: State, node: Node, outer: ReadonlyArray<Node>, fed: boolean, depth: number) => {
  // substitutions anywhere inside run first, in their own subshell
  for (const child of node.namedChildren) visit(st, child, false, depth)
  const name = node.childForFieldName("name")
  if (!name) return
  const tokens = [token(name), ...node.childrenForFieldName("argument").map(token)]
  const redirects = [...node.childrenForFieldName("redirect"), ...outer]
  const nameValue = tokens[0]!.lit
  // `cd`, `builtin cd`, `command cd`: the directory moves; alone it needs no permission
  const cdAt = nameValue !== undefined && CD.has(nameValue) ? 0 : (nameValue === "builtin" || nameValue === "command") && CD.has(tokens[1]?.lit ?? "") ? 1 : -1
  if (cdAt === 0 && redirects.length === 0) return changeDirectory(st, nameValue!, tokens.slice(1))
  const stdin = checkRedirects(st, redirects)
  if (st.cwd === undefined || !isInside(st.worktree, st.cwd)) external(st, st.cwd)
  checkPaths(st, tokens.map((t) => t.lit), nameValue === undefined ? "" : path.basename(nameValue))
  const suffix = redirects.map((r) => ` ${redirectText(r)}`).join("")
  const found: Found = { patterns: [], always: [] }
  layer(st, tokens, suffix, fed || stdin, found, depth)
  add(st, {
    permission: "bash",
    patterns: unique(found.patterns),
    // an opaque command is granted exactly as written, never as a prefix
    always: unique(found.opaque ? found.patterns : found.always),
    ...(found.opaque ? { opaque: found.opaque } : {}),
    ...(st.cwd ? { directory: st.cwd } : {})
  })
  if (cdAt !== -1) changeDirectory(st, tokens[cdAt]!.lit!, tokens.slice(cdAt + 1))
}

const SUBSHELL = new Set(["subshell", "command_substitution", "process_substitution", "function_definition"])

/** Walks the tree in source order; `fed` means the node's stdin comes from a pipe or heredoc. */
const visit = (st: State, node: Node, fed: boolean, depth: number): void => {
  switch (node.type) {
    case "command":
      return command(st, node, [], fed, depth)
    case "redirected_statement": {
      const body = node.childForFieldName("body")
      const redirects = node.childrenForFieldName("redirect")
      for (const r of redirects) visit(st, r, false, depth)
      if (body?.type === "command") return command(st, body, redirects, fed, depth)
      const stdin = checkRedirects(st, redirects)
      if (body) visit(st, body, fed || stdin, depth)
      return
    }
    case "heredoc_redirect":
      // `cat <<EOF | sh`: the pipeline after the heredoc start is fed by it
      for (const child of node.namedChildren) {
        if (child.type === "heredoc_body") for (const c of child.namedChildren) visit(st, c, false, depth)
        else if (!child.type.startsWith("heredoc_")) visit(st, child, true, depth)
      }
      return
    case "pipeline": {
      const saved = st.cwd
      node.namedChildren.forEach((child, i) => visit(st, child, fed || i > 0, depth))
      st.cwd = saved
      return
    }
    default: {
      const saved = st.cwd
      for (const child of node.namedChildren) visit(st, child, fed, depth)
      if (SUBSHELL.has(node.type)) st.cwd = saved
    }
  }
}

const scanSource = (st: State, source: string, depth: number, nested: boolean) => {
  const tree = st.parser.parse(source)
  if (!tree) {
    add(st, { permission: "bash", patterns: [source.trim()], always: [source.trim()], opaque: "the command could not be parsed" })
    return
  }
  const saved = st.cwd
  try {
    if (tree.rootNode.hasError) {
      add(st, { permission: "bash", patterns: [source.trim()], always: [source.trim()], opaque: "the command is not valid shell syntax" })
    }
    visit(st, tree.rootNode, false, depth)
  } finally {
    tree.delete()
    // `sh -c '…'` runs in a child shell: its `cd` does not move the outer one
    if (nested) st.cwd = saved
  }
}

// a backslash-newline that is not itself escaped (an even run of backslashes before it)
const CONTINUATION = /(?<!\\)((?:\\\\)*)\\\r?\n/g
const INSIDE_WORD = /\S\\\r?\n\S/

/** Scans with a loaded parser (synchronous; for benchmarks and the Effect below). */
export const scanWith = (parser: Parser, source: string, options: ScanOptions): ReadonlyArray<ScanRequest> => {
  const home = options.home ?? os.homedir()
  const worktree = realLocation(options.worktree ?? options.cwd)
  const cwd = realLocation(options.cwd)
  const st: State = { cwd, stack: [], worktree, home, parser, out: new Map() }
  scanSource(st, source, 0, false)
  // The parser splits a word at a line continuation (`r\<newline>m` is `rm` to bash): scan again
  // with them joined; the union keeps what either reading finds (a comment ends at the newline).
  // Between blanks a continuation separates words either way: no second reading is needed.
  if (INSIDE_WORD.test(source)) {
    const joined = source.replace(CONTINUATION, "$1")
    st.cwd = cwd
    st.stack = []
    scanSource(st, joined, 0, false)
  }
  return [...st.out.values()]
}

/**
 * T18: every permission a shell command needs. The parser loads on the first call; if it cannot,
 * the whole command is one opaque request (asked, never silently allowed).
 */
export const scanBash = (source: string, options: ScanOptions): Effect.Effect<ReadonlyArray<ScanRequest>> =>
  bashParser.pipe(
    Effect.map((parser) => scanWith(parser, source, options)),
    Effect.catch((reason) => Effect.succeed([{ permission: "bash" as const, patterns: [source], always: [source], opaque: reason }]))
  )
