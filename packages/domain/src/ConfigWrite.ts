// Changes to the user's own config file (`~/.config/reins/reins.json(c)`, the file the loader reads first): a few
// keys set in place, the rest of the file — other keys, comments, formatting — kept as it was.
import { Effect } from "effect"
import { applyEdits, modify, parse as parseJsonc, type JSONPath, type ParseError } from "jsonc-parser"
import * as fs from "node:fs"
import * as path from "node:path"
import { ConfigError, globalConfigFiles, userConfigDir } from "./ConfigLoader.ts"
import { writeFileWhole } from "./FileWrite.ts"

/** The user's config file a change goes to: the one the loader reads last of `reins.json` / `reins.jsonc`, else a new reins.json. */
export const userConfigFile = (env: Record<string, string | undefined>, home: string) =>
  globalConfigFiles(env, home).at(-1) ?? path.join(userConfigDir(env, home), "reins.json")

/** One key to set: its path in the file and its value. */
export interface ConfigEdit {
  readonly path: JSONPath
  readonly value: unknown
}

/** Sets `edits` in a JSON(C) file, creating it when missing; a file that does not parse is left alone and named. */
export const editConfigFile = (file: string, edits: ReadonlyArray<ConfigEdit>): Effect.Effect<void, ConfigError> =>
  Effect.gen(function* () {
    const before = yield* Effect.try({
      try: () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "{}\n"),
      catch: (e) => new ConfigError({ file, field: "", problem: `cannot read the file (${(e as Error).message})` })
    })
    const errors: Array<ParseError> = []
    const json = parseJsonc(before, errors, { allowTrailingComma: true })
    if (errors.length > 0 || typeof json !== "object" || json === null || Array.isArray(json)) {
      return yield* new ConfigError({ file, field: "", problem: "not a JSON object, so reins did not change it: fix the file, then try again" })
    }
    let text = before.trim() === "" ? "{}\n" : before
    for (const edit of edits) {
      text = applyEdits(text, modify(text, [...edit.path], edit.value, { formattingOptions: { insertSpaces: true, tabSize: 2 } }))
    }
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(path.dirname(file), { recursive: true })
        writeFileWhole(file, text.endsWith("\n") ? text : `${text}\n`)
      },
      catch: (e) => new ConfigError({ file, field: "", problem: `cannot write the file (${(e as Error).message})` })
    })
  })
