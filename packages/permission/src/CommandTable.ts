import * as path from "node:path"
import { isInside } from "./Paths.ts"
import type { State } from "./ScanState.ts"

/**
 * How bash finds the program for a bare name: its builtins, then the hash table (`hash -p`,
 * `BASH_CMDS`), then PATH. A line that changes any of these (`PATH=./bin:$PATH`,
 * `BASH_CMDS[ls]=/bin/rm`, `hash -p /bin/rm ls`, `enable -n echo`) makes every later bare name
 * mean a program the text does not show. A literal `hash -p FILE NAME` is followed instead.
 */

// `compgen -b`: names bash runs itself whatever PATH and the hash table say (unless `enable -n`)
const BUILTINS = new Set(
  (
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable eval exec exit " +
    "export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return " +
    "set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait"
  ).split(" ")
)

const TABLES: Record<string, string> = {
  PATH: "PATH changed earlier in the line",
  BASH_CMDS: "the line changed bash's command table (BASH_CMDS)",
  BASH_ALIASES: "the line changed bash's aliases (BASH_ALIASES)"
}

/** Records that the line changes variable `name` (assigned, read into, unset) when it is PATH, BASH_CMDS or BASH_ALIASES. */
export const variableChanged = (st: State, name: string) => {
  const reason = TABLES[name]
  if (reason !== undefined) st.search ??= reason
}

/**
 * `PATH=/opt/x/bin:$PATH make`: a PATH for one command only. Its command is judged as written unless
 * an entry is in the project, in /proc or /dev (`/proc/self/cwd/bin` is the working directory), or
 * empty (the working directory); relative and computed entries are Environment.ts's.
 */
export const prefixPathRisk = (st: State, value: string): string | undefined => {
  for (const entry of value.split(":")) {
    if (/^\$(PATH|\{PATH\})$/.test(entry) || (entry !== "" && !entry.startsWith("/"))) continue
    const where = path.resolve(entry)
    if (entry === "" || /^\/(proc|dev)(\/|$)/.test(where) || isInside(st.worktree, where))
      return "PATH for this command names a directory whose programs the line may have written (the project, /proc, an empty entry)"
  }
  return undefined
}

/** `BASH_CMDS[ls]=/bin/rm`, `BASH_ALIASES[ls]=rm`: one entry, followed when its value is literal. */
export const entryAssigned = (st: State, table: string, key: string | undefined, value: string | undefined) => {
  if (table === "BASH_CMDS" && key !== undefined && value !== undefined) st.hashed.set(key, value)
  else if (table === "BASH_ALIASES" && key !== undefined && value !== undefined) st.aliases.set(key, value)
  else variableChanged(st, table)
}

/** `hash -p FILE NAME` (followed when literal), `enable -n NAME` / `enable -f` (a builtin is gone or replaced). */
export const tableCommand = (st: State, name: string, values: ReadonlyArray<string | undefined>) => {
  if (name === "hash") {
    const at = values.findIndex((v) => v === undefined || /^-[a-z]*p/.test(v))
    if (at === -1) return
    const file = values[at] === "-p" ? values[at + 1] : values[at]?.slice(values[at]!.indexOf("p") + 1) || undefined
    const names = values.slice(values[at] === "-p" ? at + 2 : at + 1)
    if (file !== undefined && names.length > 0 && !names.includes(undefined)) for (const n of names) st.hashed.set(n!, file)
    else st.search ??= "the line changed bash's command table (hash -p)"
  } else if (name === "enable" && values.some((v, i) => i > 0 && (v === undefined || /^-[a-z]*[nf]/.test(v)))) {
    st.search ??= "the line disabled or replaced a builtin (enable)"
    st.builtinsChanged = true
  }
}

/** What a bare command name runs after the line changed the lookup: the hashed file, or why it is unknown. */
export const lookupOf = (st: State, name: string): { readonly file?: string; readonly opaque?: string } | undefined => {
  if (name.includes("/")) return undefined
  const file = st.hashed.get(name)
  if (file !== undefined && (!BUILTINS.has(name) || st.builtinsChanged)) return { file }
  if (st.search === undefined || (BUILTINS.has(name) && !st.builtinsChanged)) return undefined
  return { opaque: `${st.search}: \`${name}\` may be any program` }
}
