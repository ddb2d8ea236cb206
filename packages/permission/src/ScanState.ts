import * as fs from "node:fs"
import * as path from "node:path"
import type { Node, Parser } from "./Parser.ts"
import type { PathContext } from "./PathArgs.ts"
import { expandGlob, isGlob } from "./Globs.ts"
import { expandBraces } from "./PathArgs.ts"
import { askDirectory, expandTilde, harmlessDevice, isInside, realLocation } from "./Paths.ts"
import { literal, resolve, type Lookup } from "./Words.ts"

/**
 * What the bash scan carries through a command line: where it is, what the line assigned and
 * wrote, the requests found; and the steps every command uses (locating a path, asking for a
 * place outside the worktree, redirections).
 */

/** One permission a shell command needs, found by the scan. */
export interface ScanRequest {
  readonly permission: "bash" | "edit" | "read" | "external_directory"
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

export interface Token {
  readonly raw: string
  readonly lit: string | undefined
  readonly node: Node
}

export interface State {
  cwd: string | undefined
  stack: Array<string | undefined>
  /**
   * Variables assigned in this command line: their possible values, null when unknown. A name
   * that is not here has its value from the environment (unknown; HOME and PWD are known).
   */
  vars: Map<string, ReadonlyArray<string> | null>
  /** Inside `sh -c '…'` and the like: the environment of that shell is not known. */
  inShell: boolean
  /** `exec <file`, `exec <<<…`: stdin of every later command comes from there. */
  stdinFed: boolean
  /** Set by a `cd`: whether shell code (a function, a trap, an alias) moves the shell. */
  moved: boolean
  /** Functions and aliases whose code changes directory: after a call the directory is unknown. */
  readonly movers: Set<string>
  /** Aliases defined by the line: their text replaces their name where it is used. */
  readonly aliases: Map<string, string>
  /** `shopt -s cdable_vars`/`autocd`: a name may change directory in ways the words do not show. */
  cdNames: boolean
  /** Names that hold an integer whatever their value (assigned by arithmetic); see Arithmetic.ts. */
  numeric: Set<string>
  /** Names declared integer (`declare -i`): bash evaluates what is assigned to them. */
  readonly integers: Set<string>
  /** Names declared associative (`declare -A`): their subscripts are strings, not arithmetic. */
  readonly assoc: Set<string>
  /** Names declared references (`declare -n`): assigning one a computed name is evaluated. */
  readonly namerefs: Set<string>
  /** Why bare command names are unknown from here on (PATH or the command table changed); see CommandTable.ts. */
  search?: string
  /** `hash -p FILE NAME`, `BASH_CMDS[NAME]=FILE`: the file a bare name runs. */
  readonly hashed: Map<string, string>
  /** `enable -n`/`-f`: builtins may be programs too. */
  builtinsChanged?: boolean
  readonly worktree: string
  readonly home: string
  readonly parser: Parser
  readonly out: Map<string, ScanRequest>
  /** Files that the command line writes or makes executable (located only if something runs a file). */
  readonly written: Array<Place>
  /** Glob options the line turns on (`shopt -s dotglob`): what `cat *` reads depends on them. */
  globs?: Set<string>
  /** Requests that run files: opaque when the line writes one of them. */
  readonly runs: Array<{
    readonly key: string
    readonly files: ReadonlyArray<Place>
    readonly project: boolean
    readonly config?: RegExp
    readonly own: readonly [number, number]
  }>
}

/** A path word and the directory it was used in; located when needed (that costs system calls). */
export interface Place {
  readonly cwd: string | undefined
  readonly word: string
}

export const MAX_DEPTH = 8

export const token = (node: Node): Token => ({ raw: node.text, lit: literal(node), node })

export const add = (st: State, request: ScanRequest) => {
  const key = `${request.permission}\0${request.patterns.join("\0")}`
  const seen = st.out.get(key)
  if (!seen || (request.opaque && !seen.opaque)) st.out.set(key, request)
  return key
}

/** The one value a computed word may take (`$PWD/s.sh`), if it is known. */
export const single = (st: State, node: Node) => {
  const { values } = resolve(node, lookup(st))
  return values?.length === 1 ? values[0] : undefined
}

/** What a variable may hold where it is used (see State.vars). */
export const lookup =
  (st: State): Lookup =>
  (name) => {
    // a line that sets IFS splits values where it likes
    if (st.vars.has("IFS")) return undefined
    const assigned = st.vars.get(name)
    if (assigned !== undefined) return assigned ?? undefined
    if (name === "HOME" && !st.inShell) return [st.home]
    if (name === "PWD" && st.cwd !== undefined) return [st.cwd]
    return undefined
  }

export const unique = (list: ReadonlyArray<string>) => [...new Set(list)]

/** `external_directory` for a place outside the worktree; `*` when the place cannot be known. */
export const external = (st: State, real: string | undefined) => {
  if (real !== undefined && isInside(st.worktree, real)) return
  const pattern = real === undefined ? "*" : path.join(askDirectory(real), "*")
  add(st, { permission: "external_directory", patterns: [pattern], always: [pattern], ...(st.cwd ? { directory: st.cwd } : {}) })
}

/** What the path checks need from the scan: where a word is, asking for a place, the variables. */
export const pathContext = (st: State): PathContext => ({
  cwd: st.cwd,
  locate: (word) => locate(st, word),
  external: (real) => external(st, real),
  lookup: lookup(st)
})

/** The real absolute location of a path word, or undefined when it is relative to an unknown dir. */
export const locate = (st: State, given: string, cwd = st.cwd): string | undefined => {
  const expanded = expandTilde(given, st.home)
  if (!path.isAbsolute(expanded) && cwd === undefined) return undefined
  const absolute = path.isAbsolute(expanded) ? expanded : `${cwd ?? "/"}${path.sep}${expanded}`
  // `/dev/fd/0/..`, `/proc/self/cwd/x`: where they lead depends on the process that opens them
  if (throughProcess(absolute)) return undefined
  // joined as written: realLocation takes `..` after the symlinks before it, as the kernel does
  return realLocation(absolute)
}

const PROCESS_DEPENDENT = /^\/(proc|dev\/fd|dev\/std(in|out|err))(\/|$)/

/** True when a path goes through /proc, /dev/fd or /dev/stdin with more after it (read lexically). */
const throughProcess = (absolute: string) => {
  if (!absolute.includes("/proc") && !absolute.includes("/dev/")) return false
  let current = "/"
  for (const part of absolute.split("/")) {
    if (part === "" || part === ".") continue
    if (PROCESS_DEPENDENT.test(current) && current !== "/proc") return true
    current = part === ".." ? path.dirname(current) : path.join(current, part)
  }
  return false
}

/** Redirections: writes need `edit` on the target; any target outside the worktree asks for its directory. */
export const checkRedirects = (st: State, redirects: ReadonlyArray<Node>) => {
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
    // `> $F` after `F=out.txt`: the one value the line gave it
    const target = literal(destination) ?? single(st, destination)
    if (target === undefined) {
      if (writes) {
        add(st, {
          permission: "edit",
          patterns: [destination.text],
          always: [destination.text],
          opaque: "the redirection target is computed at run time",
          ...(st.cwd ? { directory: st.cwd } : {})
        })
      } else {
        // `< $HOME/.ssh/id_rsa`: read from where the variables say, or from an unknown place
        const { values } = resolve(destination, lookup(st))
        for (const value of values ?? []) {
          const real = locate(st, value)
          if (real === undefined || !harmlessDevice(real)) external(st, real)
          if (!operator.includes("&")) addRead(st, value)
        }
        if (values === undefined) external(st, undefined)
      }
      continue
    }
    const real = locate(st, target)
    if (real !== undefined && harmlessDevice(real)) continue
    external(st, real)
    // `cat < .env`, `x <> .env`: the shell opens the file for the command to read
    if (operator.includes("<") && !operator.includes("&")) addRead(st, target)
    if (writes) {
      if (real !== undefined) st.written.push({ cwd: st.cwd, word: real })
      const pattern = real ?? target
      add(st, { permission: "edit", patterns: [pattern], always: [path.join(path.dirname(pattern), "*")], ...(st.cwd ? { directory: st.cwd } : {}) })
    }
  }
  return stdin
}

export const isDirectory = (file: string) => {
  try {
    return fs.statSync(file).isDirectory()
  } catch {
    return false
  }
}

/**
 * A file a command reads (`cat .env`, `< .env`): a `read` request with the patterns the read tool
 * gives that path (absolute, and its real location when a symlink leads elsewhere), so the read
 * rules judge it the same way. Braces and globs are expanded as the shell will: each file a
 * glob matches is a pattern, beside the glob itself; one the scan cannot follow is opaque.
 */
export const addRead = (st: State, word: string, cwd = st.cwd) => {
  for (const one of word.includes("{") ? expandBraces(word) : [word]) {
    const expanded = expandTilde(one, st.home)
    if (one === "-" || harmlessDevice(expanded)) continue
    const directory = st.cwd ? { directory: st.cwd } : {}
    if (!path.isAbsolute(expanded) && cwd === undefined) {
      // from a directory nobody knows (`cd $D && cat .env`): the name as written is all there is
      add(st, { permission: "read", patterns: [one], always: [one], ...directory })
      continue
    }
    const target = path.resolve(cwd ?? "/", expanded)
    const patterns = [target, locate(st, one, cwd)]
    let opaque: string | undefined
    if (isGlob(expanded)) {
      const g = st.globs ?? new Set()
      const found = expandGlob(cwd ?? "/", expanded, {
        dotglob: g.has("dotglob") || st.vars.has("GLOBIGNORE"),
        nocase: g.has("nocaseglob"),
        globstar: g.has("globstar")
      })
      for (const match of found.matches) patterns.push(match, realLocation(match))
      if (!found.complete) opaque = "the files a glob matches are more than the scan follows"
    }
    const always = [path.join(path.dirname(target), "*")]
    add(st, { permission: "read", patterns: unique(patterns.filter((p): p is string => p !== undefined)), always, ...(opaque ? { opaque } : {}), ...directory })
  }
}
