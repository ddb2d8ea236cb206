import { Effect } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { alwaysRuns, builtinRisk, evaluatedData, holdsInteger, inArithmetic, integerValue, TAKES_NAMES } from "./Arithmetic.ts"
import { commandPrefix } from "./Arity.ts"
import { builtinCode } from "./BuiltinCode.ts"
import { entryAssigned, lookupOf, prefixPathRisk, tableCommand, variableChanged } from "./CommandTable.ts"
import { isReservedName, parseUnprefixed } from "./Keywords.ts"
import { opaqueVariable } from "./Environment.ts"
import { opaqueUse } from "./Opaque.ts"
import { bashParser, type Node, type Parser } from "./Parser.ts"
import { checkPaths } from "./PathArgs.ts"
import { checkReads } from "./ReadScan.ts"
import { expandTilde, isInside, isSymlink, realLocation } from "./Paths.ts"
import {
  add,
  checkRedirects,
  external,
  isDirectory,
  locate,
  lookup,
  MAX_DEPTH,
  pathContext,
  single,
  token,
  unique,
  type Place,
  type ScanOptions,
  type ScanRequest,
  type State,
  type Token
} from "./ScanState.ts"
import { isName, literal, resolve } from "./Words.ts"
import { withoutGlobalOptions } from "./GlobalOptions.ts"
import { isInterpreter, isWrapper, placeholder, readsProgramFromStdin, startsShell, unwrap } from "./Wrappers.ts"
import { codeFiles, configCode, gitConfigWrite, runsProjectCode, touchesFiles, unreadableCode, writtenBy, writtenThenRun } from "./Writes.ts"

export type { ScanOptions, ScanRequest } from "./ScanState.ts"

interface Found {
  readonly patterns: Array<string>
  readonly always: Array<string>
  opaque?: string
  /** Files the command runs as code (its name, a script operand). */
  readonly runs: Array<Place>
  /** The command may run any code file of the project (an interpreter, a test runner, a build). */
  project: boolean
  /** Files that configure the command to run code (git's hooks and config). */
  config?: RegExp
  /** Its code changes the shell's directory (a trap, an alias): unknown after it. */
  moves?: boolean
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
const nestedCode = (st: State, code: string | undefined, found: Found, depth: number, who: string, fed = false) => {
  if (code === undefined) found.opaque ??= `${who} runs shell code built at run time`
  else if (depth >= MAX_DEPTH) found.opaque ??= "shell code nested too deeply to follow"
  else {
    const moved = st.moved
    const stdinFed = st.stdinFed
    st.moved = false
    // `ssh host sh <<< 'rm x'`: the code's commands read the wrapper's stdin
    st.stdinFed ||= fed
    scanSource(st, code, depth + 1, true)
    st.stdinFed = stdinFed
    // a trap or an alias runs in this shell: a `cd` in it moves the commands after it
    if (st.moved && (who === "trap" || who === "alias")) found.moves = true
    st.moved ||= moved
  }
}

/**
 * One layer of a command: wrappers add their own patterns and hand the wrapped command on.
 * `viaXargs`: the words come from `xargs`, which appends more words read from stdin.
 */
const layer = (st: State, all: ReadonlyArray<Token>, suffix: string, fed: boolean, found: Found, depth: number, viaXargs = false) => {
  // `sudo A=1 cmd`, `time A=1 cmd`: assignments before the command set its environment
  let start = 0
  while (start + 1 < all.length && ASSIGNMENT.test(all[start]!.lit ?? all[start]!.raw)) {
    const t = all[start++]!
    checkVariable(st, t.lit ?? t.raw, found)
  }
  const tokens = start === 0 ? all : all.slice(start)
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
  // `alias u='uv run'; u rm x`: the alias's text with the words after it is what runs
  const alias = st.aliases.get(nameValue)
  if (alias !== undefined && name.raw === nameValue) nestedCode(st, `${alias} ${raw.slice(1).join(" ")}`, found, depth, "alias", fed)
  if (isReservedName(real)) {
    found.always.push(rawText)
    found.opaque ??= `\`${real}\` is a shell keyword where a command is expected`
    return
  }
  const values = [real, ...tokens.slice(1).map((t) => t.lit)]
  const hidden =
    opaqueUse(real, values, fed) ??
    // the builtins that take variable names: their words resolved through the line's variables
    (TAKES_NAMES.has(real)
      ? builtinRisk(st, real, [real, ...tokens.slice(1).map((t) => t.lit ?? single(st, t.node))], name.node.parent !== null && alwaysRuns(name.node.parent))
      : undefined)
  if (hidden !== undefined) found.opaque ??= hidden
  if (isWrapper(real)) for (const t of tokens.slice(1)) if (ENV_WORD.test(t.lit ?? t.raw)) checkVariable(st, t.lit ?? t.raw, found)
  // after `PATH=…`, `hash -p`, `BASH_CMDS[…]=…` a bare name may run another program
  const table = lookupOf(st, nameValue)
  if (table?.file !== undefined) {
    found.patterns.push([path.basename(table.file), ...words.slice(1)].join(" ") + suffix)
    found.runs.push({ cwd: st.cwd, word: table.file })
  }
  if (table?.opaque !== undefined) found.opaque ??= table.opaque
  tableCommand(st, real, values)
  if (nameValue.includes("/")) {
    found.runs.push({ cwd: st.cwd, word: nameValue })
    const where = path.resolve(st.cwd ?? "/", expandTilde(nameValue, st.home))
    // `/proc/self/exe`, `/dev/fd/3`: a process's program or an open file, not what the name says
    if (/^\/(proc|dev)\//.test(where)) found.opaque ??= "the command is a process's or an open file's program"
    else if (isInside(st.worktree, where) && isSymlink(where)) {
      // `./del` → /bin/rm: a link in the project is judged as what it points to
      const target = locate(st, nameValue)
      const base = target === undefined ? real : path.basename(target)
      if (base !== real) found.patterns.push([base, ...words.slice(1)].join(" ") + suffix)
    }
  }
  if (runsProjectCode(real)) found.project = true
  found.config ??= configCode(real)
  if (touchesFiles(real)) filesOf(st, real, [real, ...tokens.slice(1).map((t) => t.lit ?? single(st, t.node))], found)
  checkReads(st, real, tokens)
  const wrapped = unwrap(real, values)
  if (wrapped) {
    found.always.push(`${raw[0]} *`, `${real} *`)
    // words holding the placeholder (`{}` of find -exec, xargs -I) are replaced when it runs
    const marker = placeholder(real, values)
    const inner = marker === undefined ? tokens : tokens.map((t) => (t.lit?.includes(marker) ? { ...t, lit: undefined } : t))
    // xargs appends words from stdin to its command, unless it replaces a placeholder (-I)
    const appends = real === "xargs" && marker === undefined
    for (const [start, end] of wrapped.inners) layer(st, inner.slice(start, end), suffix, fed || real === "xargs", found, depth, appends)
    for (const index of wrapped.scripts) nestedCode(st, inner[index]?.lit, found, depth, real, fed)
    for (const text of wrapped.code ?? []) nestedCode(st, text, found, depth, real, fed)
    return
  }
  found.always.push(prefixPattern(raw), prefixPattern(words))
  // `mapfile -C cb`, `compgen -W '$(…)'`, `bind -x 'k: cmd'`: strings the builtin evaluates
  for (const text of builtinCode(real, values)) nestedCode(st, text, found, depth, real)
  if (viaXargs && isWrapper(real)) found.opaque ??= `xargs supplies the command that ${real} runs`
  else if (real === "eval") found.opaque ??= "eval runs a string as shell code"
  else if (real === "source" || real === ".") found.opaque ??= `${real} runs the commands of a file`
  else if (real === "alias") {
    // an alias is shell code that runs where its name is used
    for (const t of tokens.slice(1)) {
      const eq = t.lit?.indexOf("=") ?? 0
      if (eq > 0) st.aliases.set(t.lit!.slice(0, eq), t.lit!.slice(eq + 1))
      if (eq > 0) nestedCode(st, t.lit!.slice(eq + 1), found, depth, real)
      else if (t.lit === undefined) found.opaque ??= "alias defines shell code built at run time"
    }
  } else if (isInterpreter(real) && tokens.slice(1).some((t) => t.node.type === "process_substitution")) {
    found.opaque ??= `${real} may read its program from a process substitution`
  } else if (fed && readsProgramFromStdin(real, values)) found.opaque ??= `${real} reads its program from stdin`
  else if (fed && startsShell(real, values)) found.opaque ??= `${real} starts a shell that reads its commands from stdin`
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/
// `env 'BASH_FUNC_f%%=() { …; }'`: env takes any name
const ENV_WORD = /^[A-Za-z_][\w%]*\+?=/

/** `NAME=value` as written, in a command's environment: opaque when programs run code from it. */
const checkVariable = (st: State, rawWord: string, found: Found) => {
  const eq = rawWord.indexOf("=")
  const name = rawWord.slice(0, rawWord[eq - 1] === "+" ? eq - 1 : eq)
  const value = rawWord.slice(eq + 1).replace(/^(["'])(.*)\1$/s, "$2")
  const reason = opaqueVariable(name, value) ?? (name === "PATH" ? prefixPathRisk(st, value) : undefined)
  if (reason !== undefined) found.opaque ??= reason
}

/**
 * The files a layer writes (recorded for the line) and runs as code: a script (`sh s.sh`,
 * `python3 -m m`), a code file (`awk -f p.awk`), a Makefile.
 */
const filesOf = (st: State, real: string, values: ReadonlyArray<string | undefined>, found: Found) => {
  const gitConfig = real === "git" ? gitConfigWrite(values) : undefined
  // `git config core.fsmonitor …` writes the repository's config (from any directory in it)
  const configFile = gitConfig === "local" ? path.join(st.worktree, ".git", "config") : gitConfig?.file
  if (configFile !== undefined) {
    const target = locate(st, configFile)
    add(st, { permission: "edit", patterns: [target ?? configFile], always: [target ?? configFile], ...(st.cwd ? { directory: st.cwd } : {}) })
  }
  for (const word of writtenBy(real, values)) {
    st.written.push({ cwd: st.cwd, word })
    // what a command writes needs edit permission for that path, as a redirection's target does
    const target = locate(st, word)
    if (target !== undefined)
      add(st, { permission: "edit", patterns: [target], always: [path.join(path.dirname(target), "*")], ...(st.cwd ? { directory: st.cwd } : {}) })
  }
  for (const word of codeFiles(real, values)) {
    const unreadable = unreadableCode(real, word)
    if (unreadable !== undefined) found.opaque ??= unreadable
    else if (word !== "") found.runs.push({ cwd: st.cwd, word: word! })
  }
}

const CD = new Set(["cd", "pushd", "popd"])
// builtins that set the variables named by their words
const SETS_VARIABLES = new Set(["read", "printf", "mapfile", "readarray", "getopts", "let", "declare", "typeset", "local", "export", "readonly"])

const changeDirectory = (st: State, name: string, args: ReadonlyArray<Token>) => {
  st.moved = true
  const operands = args.filter((t) => !(t.lit ?? "").startsWith("-") || t.lit === "-")
  // `pushd +1`, `popd -0`: the directory stack is rotated; `pushd` alone swaps its top two
  if (name !== "cd" && (operands.some((t) => t.lit === undefined || /^[+-]\d+$/.test(t.lit)) || (name === "pushd" && operands.length === 0))) {
    st.cwd = undefined
    st.stack = []
    return
  }
  if (name === "popd") {
    st.cwd = st.stack.pop() ?? st.cwd
    return
  }
  if (name === "pushd") st.stack.push(st.cwd)
  const target = operands[0]
  if (!target) {
    st.cwd = st.home
    return
  }
  // `CDPATH=/; cd etc`: a name that is not `./`, `../` or absolute is looked up in CDPATH first
  const searched = (st.cdNames || st.vars.has("CDPATH")) && target.lit !== undefined && !/^(\/|\.\.?(\/|$)|~)/.test(target.lit)
  st.cwd = target.lit === undefined || target.lit === "-" || searched ? undefined : locate(st, target.lit)
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
  // the parser splits `a[\$\(rm\ x\)]` into several words: the whole command is looked at too
  subscriptCode(st, node)
  const name = node.childForFieldName("name")
  if (!name) return
  const redirects = [...node.childrenForFieldName("redirect"), ...outer]
  // `sh 0<<<'…'`, `exec 0< s`: the parser reads the descriptor as an argument
  const args = node.childrenForFieldName("argument").filter((a) => !(a.type === "number" && redirects.some((r) => r.startIndex === a.endIndex)))
  const tokens = [token(name), ...args.map(token)]
  const nameValue = tokens[0]!.lit
  // `cd`, `builtin cd`, `command cd`: the directory moves; alone it needs no permission
  const cdAt = nameValue !== undefined && CD.has(nameValue) ? 0 : (nameValue === "builtin" || nameValue === "command") && CD.has(tokens[1]?.lit ?? "") ? 1 : -1
  if (cdAt === 0 && redirects.length === 0) return changeDirectory(st, nameValue!, tokens.slice(1))
  const found: Found = { patterns: [], always: [], runs: [], project: false }
  const writes = st.written.length
  const stdin = checkRedirects(st, redirects)
  // `exec <<< 'rm x'; bash`: later commands read what exec put on stdin
  if (nameValue === "exec" && tokens.length === 1 && stdin) st.stdinFed = true
  if (st.cwd === undefined || !isInside(st.worktree, st.cwd)) external(st, st.cwd)
  checkPaths(pathContext(st), tokens, nameValue === undefined ? "" : path.basename(nameValue))
  // `read D`, `unset D`, `printf -v D`, `let D=1`: D is no longer what the line assigned
  const setsVariables = SETS_VARIABLES.has(nameValue ?? "") && (nameValue !== "printf" || tokens.some((t) => t.lit === "-v"))
  for (const t of tokens) {
    const named = t.lit === undefined ? undefined : isName(t.lit) ? t.lit : /^([A-Za-z_]\w*)(\[.*\])?\+?=/.exec(t.lit)?.[1]
    if (named === undefined) continue
    if (st.vars.has(named) || named === "HOME" || named === "PWD" || named === "IFS") st.vars.set(named, null)
    // `let` leaves integers (Arithmetic.ts records them); `read i` puts data in i
    if (setsVariables && nameValue !== "let") st.numeric.delete(named)
    // `read PAGER`, `printf -v GIT_SSH_COMMAND …`: a variable that runs code, set from elsewhere
    if (setsVariables) variableChanged(st, named)
    const reason = setsVariables ? opaqueVariable(named, undefined) : undefined
    if (reason !== undefined) found.opaque ??= reason
  }
  const suffix = redirects.map((r) => ` ${redirectText(r)}`).join("")
  layer(st, tokens, suffix, fed || stdin || st.stdinFed, found, depth)
  // `git -C . push`: judged as `git push` too, so a rule naming the subcommand applies
  const bare = found.patterns.flatMap(withoutGlobalOptions)
  const key = add(st, {
    permission: "bash",
    patterns: unique([...found.patterns, ...bare]),
    // an opaque command is granted exactly as written, never as a prefix
    always: unique(found.opaque ? found.patterns : found.always),
    ...(found.opaque ? { opaque: found.opaque } : {}),
    ...(st.cwd ? { directory: st.cwd } : {})
  })
  if (found.runs.length > 0 || found.project || found.config) {
    st.runs.push({ key, files: found.runs, project: found.project, ...(found.config ? { config: found.config } : {}), own: [writes, st.written.length] })
  }
  if (cdAt !== -1) changeDirectory(st, tokens[cdAt]!.lit!, tokens.slice(cdAt + 1))
  if (found.moves || (nameValue !== undefined && st.movers.has(nameValue))) st.cwd = undefined
  if (nameValue === "alias" && found.moves) for (const t of tokens.slice(1)) st.movers.add((t.lit ?? "").split("=")[0]!)
  // `shopt -s autocd` (a directory name as a command moves there), `cdable_vars` (`cd NAME` uses $NAME)
  if (nameValue === "shopt" && tokens.some((t) => t.lit === undefined || t.lit === "autocd" || t.lit === "cdable_vars")) {
    st.cdNames = true
    if (tokens.some((t) => t.lit === undefined || t.lit === "autocd")) st.cwd = undefined
  }
  if (st.cdNames && st.cwd !== undefined && nameValue !== undefined && !CD.has(nameValue) && nameValue !== "shopt") {
    const dir = locate(st, nameValue)
    if (dir !== undefined && isDirectory(dir)) st.cwd = undefined
  }
}

const SUBSHELL = new Set(["subshell", "command_substitution", "process_substitution", "function_definition"])
// `a[$(…)]`, ``a[`…`]``, also escaped: a command substitution inside a subscript
const SUBSCRIPT_CODE = /\w\[[^\]]*(\$\(|`)/

/**
 * An assignment that always runs before what follows it: a statement of the line itself (or the
 * first of an `&&`/`||` list there), not inside a condition, a loop, a function or a subshell.
 */
const definite = (node: Node) => {
  let at: Node = node
  if (at.parent?.type === "declaration_command") {
    at = at.parent
    // `declare -n D=HOME` (a reference), `-a`, `-i`: not a plain value
    if (at.namedChildren.some((c) => c.type === "word" && c.text.startsWith("-"))) return false
  }
  while (at.parent?.type === "list" && at.parent.namedChildren[0]?.id === at.id) at = at.parent
  return at.parent?.type === "program"
}

/** `NAME=value` (also after export/local/declare): opaque when programs run code from it; the value is tracked. */
const assignment = (st: State, node: Node, depth: number) => {
  const value = node.childForFieldName("value")
  if (value) visit(st, value, false, depth)
  const nameNode = node.childForFieldName("name")
  if (nameNode?.type === "subscript") {
    const key = nameNode.namedChildren[1]
    entryAssigned(st, nameNode.namedChildren[0]?.text ?? "", key && literal(key), value === null ? "" : literal(value))
  }
  if (nameNode?.type !== "variable_name") return
  const name = nameNode.text
  const raw = value?.text.replace(/^(["'])(.*)\1$/s, "$2") ?? ""
  // `PATH=x cmd` sets PATH for cmd only; `PATH=x; cmd` for every later command
  const prefix = node.parent?.type === "command"
  if (!prefix) variableChanged(st, name)
  const reason = opaqueVariable(name, raw) ?? (prefix && name === "PATH" ? prefixPathRisk(st, raw) : undefined)
  if (reason !== undefined) {
    const text = node.text
    add(st, { permission: "bash", patterns: [text], always: [text], opaque: reason, ...(st.cwd ? { directory: st.cwd } : {}) })
  }
  // a prefix (`D=x cmd`) sets D for cmd only, after its words are expanded: D is not known after it
  const appends = node.text.slice(nameNode.endIndex - node.startIndex).startsWith("+=")
  const values = value === null ? [""] : appends || value.type === "array" ? undefined : resolve(value, lookup(st)).values
  // an integer stays one when the assignment surely runs, or the name held an integer already
  const integer = integerValue(st, value) && (definite(node) || holdsInteger(st, name))
  st.vars.set(name, definite(node) && values !== undefined ? values : null)
  if (inArithmetic(node)) return
  if (integer) st.numeric.add(name)
  else st.numeric.delete(name)
}

/** `for NAME in words; do …; done`: inside the body NAME is one of the words (when they are literal). */
const forLoop = (st: State, node: Node, fed: boolean, depth: number) => {
  const variable = node.childForFieldName("variable")
  const words = node.childrenForFieldName("value")
  for (const w of words) visit(st, w, false, depth)
  const values = words.length === 0 || !node.children.some((c) => c.type === "in") ? undefined : words.map(literal)
  const name = variable?.text
  if (name !== undefined) st.numeric.delete(name)
  if (name !== undefined) st.vars.set(name, values === undefined || values.includes(undefined) ? null : (values as Array<string>))
  const body = node.childForFieldName("body")
  if (body) visit(st, body, fed, depth)
  if (name !== undefined) st.vars.set(name, null)
}

/** `'a[$(rm x)]'`: a subscript evaluated as arithmetic (let, (( )), test -v, read, unset) runs it. */
const subscriptCode = (st: State, node: Node) => {
  if (!node.text.includes("[") || !SUBSCRIPT_CODE.test(node.text.replaceAll("\\", ""))) return
  add(st, {
    permission: "bash",
    patterns: [node.text],
    always: [node.text],
    opaque: "an array subscript holds a command substitution (arithmetic runs it)",
    ...(st.cwd ? { directory: st.cwd } : {})
  })
}

/** Walks the tree in source order; `fed` means the node's stdin comes from a pipe or heredoc. */
const visit = (st: State, node: Node, fed: boolean, depth: number): void => {
  // arithmetic, subscripts, indirection: data that bash evaluates as code
  const evaluated = evaluatedData(st, node)
  if (evaluated !== undefined)
    add(st, { permission: "bash", patterns: [node.text], always: [node.text], opaque: evaluated, ...(st.cwd ? { directory: st.cwd } : {}) })
  switch (node.type) {
    case "command":
      return command(st, node, [], fed, depth)
    case "variable_assignment":
      return assignment(st, node, depth)
    case "for_statement":
      return forLoop(st, node, fed, depth)
    case "variable_name":
      // assigned or read into outside an expansion (`((D = 1))`, `export D`): its value is not known
      if (node.parent?.type !== "simple_expansion" && node.parent?.type !== "expansion") st.vars.set(node.text, null)
      if (node.parent?.type === "unset_command") variableChanged(st, node.text)
      return
    case "function_definition": {
      const saved = st.cwd
      const moved = st.moved
      st.moved = false
      for (const child of node.namedChildren) visit(st, child, fed, depth)
      const fname = node.childForFieldName("name")?.text
      if (st.moved && fname !== undefined) st.movers.add(fname)
      st.moved ||= moved
      st.cwd = saved
      return
    }
    case "process_substitution":
      // `>(sh)`: what is written to the pipe is the stdin of the commands inside
      for (const child of node.namedChildren) visit(st, child, fed || node.text.startsWith(">("), depth)
      return
    case "word":
    case "raw_string":
    case "string_content":
    case "ansi_c_string":
      return subscriptCode(st, node)
    case "expansion":
      // `${x@P}` expands x as a prompt: command substitutions in its value run
      if (/@P\}$/.test(node.text))
        add(st, {
          permission: "bash",
          patterns: [node.text],
          always: [node.text],
          opaque: "a prompt expansion (@P) runs command substitutions in a value",
          ...(st.cwd ? { directory: st.cwd } : {})
        })
      // `${D:=x}`, `${D=x}` assign D
      if (/^\$\{[A-Za-z_]\w*:?=/.test(node.text)) {
        const name = node.namedChildren[0]?.text ?? ""
        st.vars.set(name, null)
        st.numeric.delete(name)
        variableChanged(st, name)
        const reason = opaqueVariable(name, undefined)
        if (reason !== undefined)
          add(st, { permission: "bash", patterns: [node.text], always: [node.text], opaque: reason, ...(st.cwd ? { directory: st.cwd } : {}) })
      }
      for (const child of node.namedChildren) if (child.type !== "variable_name") visit(st, child, fed, depth)
      return
    case "redirected_statement": {
      const body = node.childForFieldName("body")
      const redirects = node.childrenForFieldName("redirect")
      for (const r of redirects) visit(st, r, false, depth)
      if (body?.type === "command") return command(st, body, redirects, fed, depth)
      const before = st.cwd
      const stdin = checkRedirects(st, redirects)
      if (body) visit(st, body, fed || stdin, depth)
      // `cd .git && printf x >> config`: the grammar hangs the redirection on the whole list, bash on its last
      // command, after the cd: its targets are judged from the directory the list ends in too
      if (st.cwd !== before) checkRedirects(st, redirects)
      return
    }
    case "heredoc_redirect":
      // `cat <<EOF | sh`: the pipeline after the heredoc start is fed by it
      for (const child of node.namedChildren) {
        if (child.type === "heredoc_body") for (const c of child.namedChildren) visit(st, c, false, depth)
        else if (!child.type.startsWith("heredoc_")) visit(st, child, true, depth)
      }
      return
    case "command_substitution": {
      // `$(< file)` reads the file: its redirection is checked like any other
      const redirects = node.childrenForFieldName("redirect")
      if (redirects.length > 0) checkRedirects(st, redirects)
      const saved = st.cwd
      for (const child of node.namedChildren) if (!redirects.some((r) => r.id === child.id)) visit(st, child, fed, depth)
      st.cwd = saved
      return
    }
    case "pipeline": {
      const saved = st.cwd
      node.namedChildren.forEach((child, i) => {
        visit(st, child, fed || i > 0, depth)
      })
      st.cwd = saved
      return
    }
    default: {
      if (node.type === "concatenation") subscriptCode(st, node)
      const saved = st.cwd
      for (const child of node.namedChildren) visit(st, child, fed, depth)
      if (SUBSHELL.has(node.type)) st.cwd = saved
    }
  }
}

const scanSource = (st: State, written: string, depth: number, nested: boolean) => {
  // `time { …; }`, `! { …; }`: what follows such a prefix is read without it
  const { tree, source } = parseUnprefixed(st.parser, written)
  if (!tree) {
    add(st, { permission: "bash", patterns: [written.trim()], always: [written.trim()], opaque: "the command could not be parsed" })
    return
  }
  const saved = st.cwd
  const vars = st.vars
  const numeric = st.numeric
  const inShell = st.inShell
  // a child shell sees only the environment: the line's unexported variables are not its own
  if (nested) {
    st.vars = new Map()
    st.numeric = new Set()
    st.inShell = true
  }
  try {
    if (tree.rootNode.hasError) {
      add(st, { permission: "bash", patterns: [source.trim()], always: [source.trim()], opaque: "the command is not valid shell syntax" })
    }
    visit(st, tree.rootNode, false, depth)
  } finally {
    tree.delete()
    // `sh -c '…'` runs in a child shell: its `cd` does not move the outer one
    if (nested) {
      st.cwd = saved
      st.vars = vars
      st.numeric = numeric
      st.inShell = inShell
    }
  }
}

// a backslash-newline that is not itself escaped (an even run of backslashes before it)
const CONTINUATION = /(?<!\\)((?:\\\\)*)\\\r?\n/g
const INSIDE_WORD = /\S\\\r?\n\S/

/** Scans with a loaded parser (synchronous; for benchmarks and the Effect below). */
export const scanWith = (parser: Parser, source: string, options: ScanOptions): ReadonlyArray<ScanRequest> => {
  const home = options.home ?? os.homedir()
  const cwd = realLocation(options.cwd)
  // usually the same directory: resolved once
  const worktree = options.worktree === undefined || options.worktree === options.cwd ? cwd : realLocation(options.worktree)
  const st: State = {
    cwd,
    stack: [],
    vars: new Map(),
    inShell: false,
    stdinFed: false,
    moved: false,
    movers: new Set(),
    aliases: new Map(),
    cdNames: false,
    numeric: new Set(),
    integers: new Set(),
    assoc: new Set(),
    namerefs: new Set(),
    hashed: new Map(),
    worktree,
    home,
    parser,
    out: new Map(),
    written: [],
    runs: []
  }
  scanSource(st, source, 0, false)
  // The parser splits a word at a line continuation (`r\<newline>m` is `rm` to bash): scan again
  // with them joined; the union keeps what either reading finds (a comment ends at the newline).
  // Between blanks a continuation separates words either way: no second reading is needed.
  if (INSIDE_WORD.test(source)) {
    const joined = source.replace(CONTINUATION, "$1")
    st.cwd = cwd
    st.stack = []
    st.vars = new Map()
    st.numeric = new Set()
    scanSource(st, joined, 0, false)
  }
  writtenThenRun(st)
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
