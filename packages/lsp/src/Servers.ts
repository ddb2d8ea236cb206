// Which language server serves a file: the built-in table by extension (changed or extended by `lsp` in reins.json),
// the root it runs for (the nearest directory with one of its markers, up to the project), and where its program is
// (the project's node_modules/.bin, then PATH). Nothing is ever downloaded: a server not found is simply not used.
import * as fs from "node:fs"
import * as path from "node:path"
import type { LspConfig } from "@reins/domain"

/** A server reins may start. */
export interface ServerDef {
  readonly id: string
  /** Shown in results: the program's name. */
  readonly name: string
  readonly extensions: ReadonlyArray<string>
  /** Files that mark a root, nearest first. */
  readonly markers: ReadonlyArray<string>
  /** Commands to try in order; the first whose program is found runs. */
  readonly commands: ReadonlyArray<ReadonlyArray<string>>
  /** The LSP language id of a file (by its extension). */
  readonly languages: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly startupTimeoutMs: number
  /** Whether it runs the project's own code (build scripts, proc macros, cgo): only for a project the user trusted. */
  readonly runsProjectCode: boolean
  /** Its root: the nearest directory with a marker, or the outermost within the project (one tsserver serves a monorepo). */
  readonly rootAt: "nearest" | "outermost"
}

/** How long an edit waits for a running server's diagnostics, and the first edit while the server starts. */
export const DEFAULT_TIMEOUT_MS = 5_000
export const DEFAULT_STARTUP_TIMEOUT_MS = 20_000

const builtin = (
  id: string,
  languages: Readonly<Record<string, string>>,
  markers: ReadonlyArray<string>,
  commands: ReadonlyArray<ReadonlyArray<string>>,
  more: { readonly runsProjectCode?: boolean; readonly rootAt?: "nearest" | "outermost" } = {}
): ServerDef => ({
  id,
  name: commands[0]![0]!,
  extensions: Object.keys(languages),
  markers,
  commands,
  languages,
  timeoutMs: DEFAULT_TIMEOUT_MS,
  startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
  runsProjectCode: more.runsProjectCode ?? false,
  rootAt: more.rootAt ?? "nearest"
})

/** The built-in servers (keys of `lsp` in reins.json). */
export const BUILTIN_SERVERS: ReadonlyArray<ServerDef> = [
  builtin(
    "typescript",
    {
      ".ts": "typescript",
      ".tsx": "typescriptreact",
      ".mts": "typescript",
      ".cts": "typescript",
      ".js": "javascript",
      ".jsx": "javascriptreact",
      ".mjs": "javascript",
      ".cjs": "javascript"
    },
    ["tsconfig.json", "jsconfig.json", "package.json"],
    [["typescript-language-server", "--stdio"]],
    // tsserver finds each file's tsconfig itself: one server for the whole repository, not one per package
    { rootAt: "outermost" }
  ),
  builtin(
    "python",
    { ".py": "python", ".pyi": "python" },
    ["pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg"],
    [
      ["pyright-langserver", "--stdio"],
      ["basedpyright-langserver", "--stdio"]
    ]
  ),
  // gopls runs `go list` (cgo: the C compiler with the package's flags); rust-analyzer runs build scripts and proc
  // macros, and a project's rust-toolchain.toml picks what the rustup proxy runs
  builtin("go", { ".go": "go" }, ["go.work", "go.mod"], [["gopls"]], { runsProjectCode: true }),
  builtin("rust", { ".rs": "rust" }, ["Cargo.toml"], [["rust-analyzer"]], { runsProjectCode: true }),
  builtin(
    "clangd",
    { ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp" },
    ["compile_commands.json", "compile_flags.txt", ".clangd"],
    [["clangd"]]
  )
]

/**
 * The servers in use: the built-ins with `lsp`'s changes (a command, more extensions, timeouts), without those it
 * switches off, and its own servers first (an extension it names is theirs). `false`: none.
 */
export const serverTable = (config: LspConfig | undefined): ReadonlyArray<ServerDef> => {
  if (config === false) return []
  const own = config ?? {}
  const changed = BUILTIN_SERVERS.flatMap((def) => {
    const entry = own[def.id]
    if (entry === undefined) return [def]
    if (entry.disabled === true) return []
    const extra = (entry.extensions ?? []).filter((e) => !(e in def.languages))
    return [
      {
        ...def,
        ...(entry.command !== undefined ? { commands: [entry.command], name: path.basename(entry.command[0]!) } : {}),
        extensions: [...def.extensions, ...extra],
        languages: { ...def.languages, ...Object.fromEntries(extra.map((e) => [e, def.languages[def.extensions[0]!]!])) },
        timeoutMs: entry.timeout ?? def.timeoutMs,
        startupTimeoutMs: entry.startup_timeout ?? def.startupTimeoutMs
      }
    ]
  })
  const custom = Object.entries(own).flatMap(([id, entry]): ReadonlyArray<ServerDef> => {
    if (BUILTIN_SERVERS.some((def) => def.id === id) || entry.disabled === true) return []
    if (entry.command === undefined || entry.extensions === undefined) return []
    return [
      {
        id,
        name: path.basename(entry.command[0]!),
        extensions: entry.extensions,
        markers: [],
        commands: [entry.command],
        languages: Object.fromEntries(entry.extensions.map((e) => [e, e.slice(1)])),
        timeoutMs: entry.timeout ?? DEFAULT_TIMEOUT_MS,
        startupTimeoutMs: entry.startup_timeout ?? DEFAULT_STARTUP_TIMEOUT_MS,
        // the project's own command (its config applies only once trusted)
        runsProjectCode: true,
        rootAt: "nearest"
      }
    ]
  })
  return [...custom, ...changed]
}

/** The server for a file, by its extension. */
export const serverFor = (table: ReadonlyArray<ServerDef>, file: string) => {
  const ext = path.extname(file).toLowerCase()
  return ext === "" ? undefined : table.find((def) => def.extensions.includes(ext))
}

/** Whether `file` lies inside `dir` (or is it). */
export const isInside = (dir: string, file: string) => {
  const rel = path.relative(dir, file)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

const exists = (file: string) => fs.existsSync(file)

/**
 * The nearest directory from the file's up to `project` holding one of `markers` (or the outermost such, for
 * `outermost`); `project` when none does.
 */
export const findRoot = (file: string, markers: ReadonlyArray<string>, project: string, at: "nearest" | "outermost" = "nearest") => {
  let found: string | undefined
  for (let dir = path.dirname(file); isInside(project, dir); dir = path.dirname(dir)) {
    if (markers.some((m) => exists(path.join(dir, m)))) {
      if (at === "nearest") return dir
      found = dir
    }
    if (dir === project) break
  }
  return found ?? project
}

const executable = (file: string) => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Where programs are looked for: what `where` says about the project, and PATH. */
export interface Where {
  /** The project directory; its node_modules/.bin (and those between it and the root) are searched when `useProject`. */
  readonly project: string
  readonly root: string
  /** Whether the project's own programs may run (false for a project that is not trusted). */
  readonly useProject: boolean
  readonly pathEnv: string | undefined
}

/** The directories from `root` up to `project`. */
const upTo = (root: string, project: string) => {
  const dirs: Array<string> = []
  for (let dir = root; isInside(project, dir); dir = path.dirname(dir)) {
    dirs.push(dir)
    if (dir === project) break
  }
  return dirs
}

/**
 * A program's path: as given when it has a slash (relative to the project), else the project's node_modules/.bin, then
 * PATH. PATH's relative entries (`.`, `./node_modules/.bin`) are skipped: they name the project's own programs; so are
 * entries inside the project unless its code may run.
 */
export const findProgram = (name: string, where: Where): string | undefined => {
  if (name.includes("/")) {
    const given = path.resolve(where.project, name)
    return executable(given) && (where.useProject || !isInside(where.project, given)) ? given : undefined
  }
  const local = where.useProject ? upTo(where.root, where.project).map((dir) => path.join(dir, "node_modules", ".bin")) : []
  const onPath = (where.pathEnv ?? "").split(path.delimiter).filter((d) => path.isAbsolute(d) && (where.useProject || !isInside(where.project, d)))
  return [...local, ...onPath].map((dir) => path.join(dir, name)).find(executable)
}

const TSSERVER = path.join("node_modules", "typescript", "lib", "tsserver.js")

const ancestors = (start: string, count: number) => {
  const dirs: Array<string> = []
  for (let dir = start; dirs.length < count; dir = path.dirname(dir)) {
    dirs.push(dir)
    if (path.dirname(dir) === dir) break
  }
  return dirs
}

const realpath = (file: string) => {
  try {
    return fs.realpathSync(file)
  } catch {
    return file
  }
}

/**
 * The tsserver typescript-language-server runs: the project's `typescript` (trusted only), else one installed
 * alongside the server (the same node_modules, a global install); undefined when there is none.
 */
export const findTsserver = (program: string, where: Where): string | undefined => {
  const local = where.useProject ? upTo(where.root, where.project) : []
  const beside = [...ancestors(path.dirname(program), 8), ...ancestors(path.dirname(realpath(program)), 8)].filter(
    (dir) => where.useProject || !isInside(where.project, dir)
  )
  return [...local, ...beside].map((dir) => path.join(dir, TSSERVER)).find(exists)
}

const statOf = (file: string) => {
  try {
    return fs.statSync(file)
  } catch {
    return undefined
  }
}

/** Whether `program` is rustup's proxy (a link to `rustup`, or the same file as the `rustup` beside it). */
const isRustupProxy = (program: string) => {
  if (path.basename(realpath(program)) === "rustup") return true
  const self = statOf(program)
  const rustup = statOf(path.join(path.dirname(program), "rustup"))
  return self !== undefined && rustup !== undefined && self.ino === rustup.ino && self.dev === rustup.dev
}

/**
 * Why `program` would not start when that can be told without running it: rustup's proxy for a component no toolchain
 * has (it exits 1: "rust-analyzer is not installed"); undefined when it looks runnable.
 */
export const cannotRun = (program: string, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (!isRustupProxy(program)) return undefined
  const home = env.RUSTUP_HOME ?? (env.HOME !== undefined ? path.join(env.HOME, ".rustup") : undefined)
  if (home === undefined) return `${program} is rustup's proxy and RUSTUP_HOME is unknown`
  const toolchains = path.join(home, "toolchains")
  let names: ReadonlyArray<string> = []
  try {
    names = fs.readdirSync(toolchains)
  } catch {
    names = []
  }
  const name = path.basename(program)
  return names.some((t) => executable(path.join(toolchains, t, "bin", name)))
    ? undefined
    : `${program} is rustup's proxy, and no toolchain in ${toolchains} has ${name} (rustup component add ${name})`
}
