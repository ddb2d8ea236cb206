// `instructions` in reins.json: more files for the system prompt beside AGENTS.md — paths or globs,
// relative to the project's root (or `~/…`, or absolute). Read once when the runtime starts, so the
// prompt stays byte-identical across steps (its cache holds). A file is read only from the project or
// the user's reins config dir, symlinks resolved: a glob cannot pull `~/.ssh/*` into a prompt.
import { Effect } from "effect"
import { outsidePromptRoots, projectRoot } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"

/** An instruction file and its text. */
export interface InstructionFile {
  readonly file: string
  readonly text: string
}

/** Files matched by one entry of `instructions`, sorted; a plain path matches itself when it exists. */
const matches = (entry: string, base: string, home: string): Array<string> => {
  const given = entry.startsWith("~/") ? path.join(home, entry.slice(2)) : path.resolve(base, entry)
  if (!/[*?[{]/.test(entry)) return fs.existsSync(given) && fs.statSync(given).isFile() ? [given] : []
  // a glob: scanned from its longest literal directory
  const parts = given.split(path.sep)
  const literal = parts.findIndex((p) => /[*?[{]/.test(p))
  const root = parts.slice(0, literal).join(path.sep) || path.sep
  const pattern = parts.slice(literal).join("/")
  if (!fs.existsSync(root)) return []
  return [...new Bun.Glob(pattern).scanSync({ cwd: root, absolute: true, onlyFiles: true })].sort()
}

/**
 * The files `instructions` names, in order, each once: what does not exist, or lies outside the
 * project and the config dir, is left out with a warning saying why.
 */
export const loadInstructions = Effect.fn("Prompt.loadInstructions")(function* (
  entries: ReadonlyArray<string> | undefined,
  options: { readonly cwd: string; readonly home: string; readonly configDir: string }
) {
  const out: Array<InstructionFile> = []
  const seen = new Set<string>()
  const base = projectRoot(options.cwd)
  for (const entry of entries ?? []) {
    const files = matches(entry, base, options.home)
    if (files.length === 0) yield* Effect.logWarning(`instructions: nothing matches "${entry}" (relative to ${base}); fix the entry in reins.json`)
    for (const file of files) {
      if (seen.has(file)) continue
      seen.add(file)
      const outside = outsidePromptRoots(file, options.cwd, options.configDir)
      if (outside !== undefined) {
        yield* Effect.logWarning(`instructions: ${outside}`)
        continue
      }
      const text = yield* Effect.promise(() => fs.promises.readFile(file, "utf8").catch(() => undefined))
      if (text === undefined) yield* Effect.logWarning(`instructions: cannot read ${file}`)
      else out.push({ file, text })
    }
  }
  return out
})
