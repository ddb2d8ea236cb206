import { Effect, Schema, SchemaIssue } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser"
import { Config } from "./Config.ts"

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

/** Where config files are looked for, lowest precedence first. */
export const configFiles = (options: { cwd: string; env: Record<string, string | undefined>; home: string }) => {
  const home = options.home
  const files: Array<string> = []
  const globalDir = options.env.XDG_CONFIG_HOME ? path.join(options.env.XDG_CONFIG_HOME, "reins") : path.join(home, ".config", "reins")
  for (const name of ["reins.json", "reins.jsonc"]) {
    const file = path.join(globalDir, name)
    if (fs.existsSync(file)) files.push(file)
  }
  const project: Array<string> = []
  let dir = path.resolve(options.cwd)
  while (true) {
    for (const name of PROJECT_FILES) {
      const file = path.join(dir, name)
      if (fs.existsSync(file) && !files.includes(file)) project.unshift(file)
    }
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  files.push(...project)
  if (options.env.REINS_CONFIG) files.push(path.resolve(options.cwd, options.env.REINS_CONFIG))
  return files
}

const lineCol = (text: string, offset: number) => {
  const before = text.slice(0, offset).split("\n")
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`
}

const decode = Schema.decodeUnknownExit(Config, { onExcessProperty: "error" })
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** Reads, parses and validates one config file. */
export const readConfigFile = (file: string): Effect.Effect<Config, ConfigError> =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (e) => new ConfigError({ file, field: "", problem: `cannot read the file (${(e as Error).message})` })
    })
    const errors: Array<ParseError> = []
    const json = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false })
    const first = errors[0]
    if (first) {
      return yield* new ConfigError({
        file: `${file}:${lineCol(text, first.offset)}`,
        field: "",
        problem: `invalid JSON (${printParseErrorCode(first.error)}); fix the syntax at that position`
      })
    }
    const exit = decode(json ?? {})
    if (exit._tag === "Success") return exit.value
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    const issue = error && error._tag === "Fail" ? formatIssue(error.error.issue).issues[0] : undefined
    return yield* new ConfigError({
      file,
      field: issue?.path?.map(String).join(".") ?? "",
      problem: issue?.message ?? "invalid config"
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

/** Loads and merges every config file that applies to `cwd`; returns the files used too. */
export const loadConfig = (options: { cwd: string; env: Record<string, string | undefined>; home: string }) =>
  Effect.gen(function* () {
    const files = configFiles(options)
    let merged: Record<string, unknown> = {}
    for (const file of files) {
      if (!fs.existsSync(file)) {
        return yield* new ConfigError({ file, field: "", problem: "file not found (REINS_CONFIG points here)" })
      }
      merged = mergeConfig(merged, yield* readConfigFile(file))
    }
    return { config: merged as Config, files }
  })
