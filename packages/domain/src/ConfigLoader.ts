import { Effect, Schema, SchemaAST, SchemaIssue } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser"
import { type BudgetConfig, Config } from "./Config.ts"
import { configKeysAt } from "./ConfigSchema.ts"
import { xdgDir } from "./Paths.ts"

/** A config file that cannot be used: which file, which field, what is wrong. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.file}: ${this.field ? `${this.field}: ` : ""}${this.problem}`
  }
}

const PROJECT_FILES = ["reins.jsonc", "reins.json"]

/** The config files that apply to `cwd`, by whose they are: the user's (the global dir, and REINS_CONFIG) and the project's. */
export interface ConfigFiles {
  /** `~/.config/reins/reins.json(c)`: the user's own, always in force. */
  readonly global: ReadonlyArray<string>
  /** `reins.json(c)` in `cwd` and every directory above it, outermost first: the project's, inert in part until trusted. */
  readonly project: ReadonlyArray<string>
  /** The file REINS_CONFIG names: the user's own, over everything else. */
  readonly named: ReadonlyArray<string>
}

/** The user's config directory (`$XDG_CONFIG_HOME/reins`, else `~/.config/reins`). */
export const userConfigDir = (env: Record<string, string | undefined>, home: string) =>
  path.join(xdgDir(env.XDG_CONFIG_HOME) ?? path.join(home, ".config"), "reins")

/** The user's own config files that exist, in the order the loader reads them (`reins.json`, then `reins.jsonc`). */
export const globalConfigFiles = (env: Record<string, string | undefined>, home: string) => {
  const dir = userConfigDir(env, home)
  return ["reins.json", "reins.jsonc"].map((name) => path.join(dir, name)).filter((file) => fs.existsSync(file))
}

/** Where config files are looked for, by whose they are. */
export const configSources = (options: { cwd: string; env: Record<string, string | undefined>; home: string }): ConfigFiles => {
  const global = globalConfigFiles(options.env, options.home)
  const project: Array<string> = []
  let dir = path.resolve(options.cwd)
  while (true) {
    for (const name of PROJECT_FILES) {
      const file = path.join(dir, name)
      if (fs.existsSync(file) && !global.includes(file)) project.unshift(file)
    }
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  const named = options.env.REINS_CONFIG ? [path.resolve(options.cwd, options.env.REINS_CONFIG)] : []
  return { global, project: project.filter((f) => !named.includes(f)), named }
}

/** Where config files are looked for, lowest precedence first. */
export const configFiles = (options: { cwd: string; env: Record<string, string | undefined>; home: string }) => {
  const sources = configSources(options)
  return [...sources.global, ...sources.project, ...sources.named]
}

const lineCol = (text: string, offset: number) => {
  const before = text.slice(0, offset).split("\n")
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`
}

const decode = Schema.decodeUnknownExit(Config, { onExcessProperty: "error" })
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The keys an object schema declares (a struct's fields; a map declares none of its own). */
const keysOf = (ast: SchemaAST.AST): ReadonlyArray<string> =>
  SchemaAST.isObjects(ast) ? ast.propertySignatures.flatMap((p) => (typeof p.name === "string" ? [p.name] : [])) : []

/** The keys declared where the unknown key at `path` was found, if the issue tree holds that UnexpectedKey. */
const knownKeysAt = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, at: ReadonlyArray<PropertyKey> = []): ReadonlyArray<string> | undefined => {
  switch (issue._tag) {
    case "UnexpectedKey":
      return at.length === path.length && at.every((k, i) => k === path[i]) ? keysOf(issue.ast) : undefined
    case "Pointer":
      return knownKeysAt(issue.issue, path, [...at, ...issue.path])
    case "Filter":
    case "Encoding":
      return knownKeysAt(issue.issue, path, at)
    case "Composite":
    case "AnyOf":
      for (const child of issue.issues) {
        const found = knownKeysAt(child, path, at)
        if (found !== undefined) return found
      }
      return undefined
    default:
      return undefined
  }
}

/** Edits (insertions, deletions, substitutions, swaps of neighbours) that turn `a` into `b`. */
const distance = (a: string, b: string) => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/** The known key `key` is most likely a typo of: within a third of its length in edits (case aside), else none. */
export const closestKey = (key: string, known: ReadonlyArray<string>): string | undefined => {
  // no known key is this long: a huge key (a hostile file's) would cost its length times each key's in edits
  if (key.length > 64) return undefined
  const scored = known.map((k) => ({ k, d: distance(key.toLowerCase(), k.toLowerCase()) })).sort((x, y) => x.d - y.d)
  const best = scored[0]
  return best !== undefined && best.d <= Math.max(1, Math.floor(key.length / 3)) ? best.k : undefined
}

/** A key from the file as a message shows it: control characters (a terminal's escapes) escaped, a long one cut. */
export const shownKey = (key: string) => {
  const escaped = JSON.stringify(key).slice(1, -1)
  return escaped.length > 80 ? `${escaped.slice(0, 80)}…` : escaped
}

/** The problem with an unknown key: a did-you-mean when one key is close, else the keys allowed there. */
const unknownKeyProblem = (key: string, known: ReadonlyArray<string>) => {
  const close = closestKey(key, known)
  if (close !== undefined) return `unknown key "${shownKey(key)}"; did you mean "${close}"?`
  return known.length > 0 ? `unknown key "${shownKey(key)}"; the keys here are ${known.join(", ")}` : `unknown key "${shownKey(key)}"`
}

/** Reads, parses and validates one config file. */
export const readConfigFile = (file: string): Effect.Effect<Config, ConfigError> =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (e) => new ConfigError({ file, field: "", problem: `cannot read the file (${(e as Error).message})` })
    })
    const errors: Array<ParseError> = []
    // a file nested thousands deep overflows the parser's or the decoder's stack: an error naming it, not a crash
    const tooDeep = new ConfigError({ file, field: "", problem: "nested too deeply to read; a reins config is a few levels deep" })
    const json = yield* Effect.try({ try: () => parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false }), catch: () => tooDeep })
    const first = errors[0]
    if (first) {
      return yield* new ConfigError({
        file: `${file}:${lineCol(text, first.offset)}`,
        field: "",
        problem: `invalid JSON (${printParseErrorCode(first.error)}); fix the syntax at that position`
      })
    }
    const exit = yield* Effect.try({ try: () => decode(json ?? {}), catch: () => tooDeep })
    if (exit._tag === "Success") return exit.value
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    const issue = error && error._tag === "Fail" ? formatIssue(error.error.issue).issues[0] : undefined
    const path = (issue?.path ?? []).map((k) => (typeof k === "object" ? k.key : k))
    // an unknown key (a typo, most often) is named, with the key it was probably meant to be
    const known = error && error._tag === "Fail" && path.length > 0 ? knownKeysAt(error.error.issue, path) : undefined
    const key = String(path.at(-1))
    // a map's entry named like one of its fields (`agent.stesp`) is most likely that field misspelt
    const sibling = known === undefined && path.length > 0 ? closestKey(key, configKeysAt(path.slice(0, -1))) : undefined
    const problem = issue?.message ?? "invalid config"
    return yield* new ConfigError({
      file,
      field: path.map((k) => shownKey(String(k))).join("."),
      problem:
        known !== undefined ? unknownKeyProblem(key, known) : sibling !== undefined && sibling !== key ? `${problem}; did you mean "${sibling}"?` : problem
    })
  })

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Deep merge where later wins; arrays and scalars are replaced. */
export const mergeConfig = (a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...a }
  for (const [key, value] of Object.entries(b)) {
    const prev = out[key]
    out[key] = isPlainObject(prev) && isPlainObject(value) ? mergeConfig(prev, value) : value
  }
  return out
}

const readAll = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let merged: Record<string, unknown> = {}
    for (const file of files) {
      if (!fs.existsSync(file)) {
        return yield* new ConfigError({ file, field: "", problem: "file not found (named by --config or REINS_CONFIG)" })
      }
      merged = mergeConfig(merged, yield* readConfigFile(file))
    }
    return merged as Config
  })

/** The config that applies to `cwd`, by whose it is: the user's files and the project's, each merged. */
export interface ConfigLayers {
  readonly files: ConfigFiles
  readonly global: Config
  readonly project: Config
  readonly named: Config
}

/** Reads every config file that applies to `cwd`, keeping the user's and the project's apart (trust decides how much of the project's applies). */
export const loadConfigLayers = (options: { cwd: string; env: Record<string, string | undefined>; home: string }) =>
  Effect.gen(function* () {
    const files = configSources(options)
    // typed, not inferred: the published declaration then names Config instead of spelling out a type tsc cannot
    const layers: ConfigLayers = { files, global: yield* readAll(files.global), project: yield* readAll(files.project), named: yield* readAll(files.named) }
    return layers
  })

/** The config in force: the user's global files, then the project's part (all of it once trusted), then REINS_CONFIG's file. */
export const effectiveConfig = (layers: Pick<ConfigLayers, "global" | "named">, project: Config): Config => {
  const merged = mergeConfig(
    mergeConfig(layers.global as Record<string, unknown>, project as Record<string, unknown>),
    layers.named as Record<string, unknown>
  ) as Config
  // paths hidden from commands add up: one file's list never un-hides another's
  const denyRead = [...new Set([layers.global, project, layers.named].flatMap((c) => c.sandbox?.deny_read ?? []))]
  const withDenyRead = denyRead.length > 0 ? { ...merged, sandbox: { ...merged.sandbox, deny_read: denyRead } } : merged
  // a budget only tightens: a cloned project (or any file) can lower the user's caps, never raise them
  const budget = lowestBudget([layers.global.budget, project.budget, layers.named.budget])
  return budget === undefined ? withDenyRead : { ...withDenyRead, budget }
}

/** Each cap at its smallest over the config files that set it; undefined when none does. */
const lowestBudget = (budgets: ReadonlyArray<BudgetConfig | undefined>): BudgetConfig | undefined => {
  const out: { session?: number; turn?: number; subagent?: number } = {}
  for (const key of ["session", "turn", "subagent"] as const) {
    const set = budgets.flatMap((b) => (b?.[key] !== undefined ? [b[key]] : []))
    if (set.length > 0) out[key] = Math.min(...set)
  }
  return Object.keys(out).length > 0 ? out : undefined
}

/** Loads and merges every config file that applies to `cwd`, the project's whole (a trusted project); returns the files used too. */
export const loadConfig = (options: { cwd: string; env: Record<string, string | undefined>; home: string }) =>
  Effect.map(loadConfigLayers(options), (layers): { config: Config; files: Array<string> } => ({
    config: effectiveConfig(layers, layers.project),
    files: [...layers.files.global, ...layers.files.project, ...layers.files.named]
  }))
