import * as fs from "node:fs"
import * as path from "node:path"
import { gitReads } from "./GitReads.ts"
import { expandTilde, FILE_COMMANDS } from "./Paths.ts"
import { readsFiles, readWords, recursiveTrees } from "./Readers.ts"
import { findQuery, hostedNames, walk, type Names } from "./Recursive.ts"
import { add, addRead, locate, lookup, unique, type State, type Token } from "./ScanState.ts"
import { literal, resolve, UNKNOWN } from "./Words.ts"
import { isInterpreter } from "./Wrappers.ts"
import { codeFiles } from "./Writes.ts"

/**
 * Issue 25 item 4: what a command reads is judged by the read rules, as the read tool is. `cat
 * .env`, `grep x .env`, `cp .env /tmp`, `bash s.sh`, `git show HEAD:.env`: each file a command
 * reads is a `read` request (see {@link addRead}; input redirections are handled with the others).
 * A file the scan cannot name (`cat $F`) asks: for the file commands through `external_directory
 * *`, for the others as an opaque read.
 */

const SHOPT_GLOBS = ["dotglob", "nocaseglob", "globstar"]

/** `shopt -s dotglob`: later globs match more; one that is computed may turn on any of them. */
const noteShopt = (st: State, words: ReadonlyArray<string | undefined>) => {
  if (!words.includes("-s") && !words.some((w) => w === undefined)) return
  for (const w of words.slice(1))
    if (w === undefined || SHOPT_GLOBS.includes(w)) for (const o of w === undefined ? SHOPT_GLOBS : [w]) (st.globs ??= new Set()).add(o)
}

const exists = (file: string | undefined) => file !== undefined && fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined

/** The directory above `dir` that holds `.git` (the repository's top), else the worktree. */
const topOf = (st: State, dir: string) => {
  for (let at = dir; ; at = path.dirname(at)) {
    if (exists(path.join(at, ".git"))) return at
    if (path.dirname(at) === at) return st.worktree
  }
}

// the shape of a word find or xargs replaces when it runs (`{}`): the names it is given
const PLACEHOLDER = `${UNKNOWN}{}`

/** One request for every file a walk found under `anchor`; opaque when the walk stopped early. */
const addTree = (st: State, anchor: string, hidden: boolean, keep?: Parameters<typeof walk>[2]) => {
  const found = walk(anchor, hidden, keep)
  add(st, {
    permission: "read",
    patterns: unique([anchor, ...found.files]),
    always: [path.join(anchor, "*")],
    ...(found.complete ? {} : { opaque: "the command reads more files than the scan walks" }),
    ...(st.cwd ? { directory: st.cwd } : {})
  })
}

/** The names find or xargs gives a command at run time, each read (or one opaque read when unknown). */
const readNames = (st: State, name: string, names: Names) => {
  if (names.kind === "words") for (const w of names.words) addRead(st, w)
  else if (names.kind === "find") {
    const query = findQuery(names.words)
    for (const root of query.roots) {
      const at = root === undefined || root.includes(UNKNOWN) ? undefined : locate(st, root)
      if (at === undefined) readNames(st, name, { kind: "unknown", why: "find searches a directory named at run time" })
      else addTree(st, at, true, query.keep(at, root!))
    }
  } else
    add(st, {
      permission: "read",
      patterns: ["*"],
      always: ["*"],
      opaque: `${name} reads files named at run time (${names.why})`,
      ...(st.cwd ? { directory: st.cwd } : {})
    })
}

/** The files a layer's command reads become `read` requests (called once per layer, wrappers unwrapped). */
export const checkReads = (st: State, name: string, tokens: ReadonlyArray<Token>) => {
  if (name === "shopt")
    return noteShopt(
      st,
      tokens.map((t) => t.lit)
    )
  const interpreter = isInterpreter(name)
  if (!readsFiles(name) && !interpreter && name !== "git") return
  // a computed word: every value it may take, or its shape (its literal parts, UNKNOWN for the rest)
  const resolved = tokens.map((t, i) =>
    i === 0
      ? { values: [name], shape: name }
      : t.lit !== undefined
        ? { values: [t.lit], shape: t.lit }
        : // xargs -I and find -exec put a file nobody knows in place of `{}`
          literal(t.node) !== undefined
          ? { values: undefined, shape: PLACEHOLDER }
          : resolve(t.node, lookup(st))
  )
  const words = resolved.map((r) => (r.values?.length === 1 ? r.values[0]! : r.shape))
  // the values a word that readWords returns may take: a whole computed word's values, else only its text
  const valuesOf = (word: string): ReadonlyArray<string> | undefined => {
    if (!word.includes(UNKNOWN)) return [word]
    const same = resolved.filter((r) => r.shape === word)
    if (same.length === 0 || same.some((r) => r.values === undefined)) return undefined
    return same.flatMap((r) => r.values!)
  }
  const unknown = (word: string | undefined) => {
    // the file commands ask `external_directory *` for such an operand already (PathArgs)
    if (FILE_COMMANDS.has(name) || interpreter) return
    const text = (word ?? UNKNOWN).replaceAll(UNKNOWN, "*")
    add(st, {
      permission: "read",
      patterns: [text],
      always: [text],
      opaque: `${name} reads a file named at run time`,
      ...(st.cwd ? { directory: st.cwd } : {})
    })
  }
  const hosted = tokens[0] === undefined ? undefined : hostedNames(tokens[0].node)
  const read = (word: string | undefined, cwd = st.cwd, ifExists = false) => {
    if (word === PLACEHOLDER && hosted !== undefined) return readNames(st, name, hosted.names)
    const values = word === undefined ? undefined : valuesOf(word)
    if (values === undefined) return ifExists ? undefined : unknown(word)
    for (const value of values) {
      // before `--` git and an interpreter take the word as a file only when there is one
      if (ifExists && !exists(cwd === undefined && !path.isAbsolute(value) ? undefined : path.resolve(cwd ?? "/", expandTilde(value, st.home)))) continue
      addRead(st, value, cwd)
    }
  }
  if (name === "git") {
    const { chdir, reads, trees, opaque } = gitReads(words)
    let cwd = st.cwd
    for (const dir of chdir) cwd = dir === undefined || dir.includes(UNKNOWN) ? undefined : locate(st, dir, cwd)
    for (const r of reads) read(r.word, r.from === "top" && cwd !== undefined ? topOf(st, cwd) : cwd, r.ifExists)
    if (opaque !== undefined) readNames(st, name, { kind: "unknown", why: opaque })
    for (const tree of trees ?? []) {
      const at = tree === undefined || tree.includes(UNKNOWN) || cwd === undefined ? undefined : locate(st, tree, cwd)
      if (at !== undefined) addTree(st, at, true)
      else readNames(st, name, { kind: "unknown", why: "it searches a directory named at run time" })
    }
    return
  }
  // an interpreter's script (`bash s.sh`, `python3 x.py`) is read when it runs; its words may be a subcommand (`bun test`)
  if (interpreter) {
    // not the files it runs by convention (bun's package.json): only what the words name
    const implicit = new Set(codeFiles(name, [name]))
    for (const file of codeFiles(name, words)) if (file === undefined || !implicit.has(file)) read(file, st.cwd, true)
  }
  for (const word of readWords(name, words)) read(word)
  // `echo .env | xargs cat`: xargs appends the names it reads to the command
  if (hosted?.appends && readsFiles(name)) readNames(st, name, hosted.names)
  // `grep -r S .`, `tar cf - .`: every file under a directory operand is read
  for (const tree of recursiveTrees(name, words)) {
    const values = tree.word === undefined ? undefined : valuesOf(tree.word)
    for (const value of values ?? [undefined]) {
      const at = value === undefined ? undefined : locate(st, value)
      if (at !== undefined) addTree(st, at, tree.hidden)
      else if (value === undefined) readNames(st, name, { kind: "unknown", why: "it reads a directory named at run time" })
    }
  }
}
