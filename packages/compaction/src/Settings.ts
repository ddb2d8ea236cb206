import { Context, Effect } from "effect"
import { type CompactionConfig, outsidePromptRoots } from "@reins/domain"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { CompactionError } from "./CompactionError.ts"
import { DEFAULT_PROTECTED_TOOLS } from "./Prune.ts"

/** The `compaction` section of `reins.json` with its defaults applied (SPEC §2). */
export interface CompactionSettings {
  /** Compact when the context is about to overflow. */
  readonly auto: boolean
  /** Tokens kept free for the answer; unset: min(20_000, the model's output limit). */
  readonly reserved?: number | undefined
  /** User turns kept verbatim after a summary. */
  readonly tailTurns: number
  /** Tools whose outputs are never pruned. */
  readonly protectedTools: ReadonlyArray<string>
  /** First and last lines a pruned long output keeps (0: none). */
  readonly pruneKeepLines: number
  /** The summary template's text, replacing the built-in one. */
  readonly template?: string | undefined
}

export const defaultSettings: CompactionSettings = {
  auto: true,
  tailTurns: 2,
  protectedTools: DEFAULT_PROTECTED_TOOLS,
  pruneKeepLines: 0
}

/** Compaction settings for the runtime; defaults as SPEC T7–T12. */
export const CompactionSettings = Context.Reference<CompactionSettings>("reins/compaction/Settings", {
  defaultValue: () => defaultSettings
})

/** Settings from the `compaction` section of `reins.json`; `template` is the text of the file `config.template` names. */
export const settingsFromConfig = (config: CompactionConfig | undefined, template?: string): CompactionSettings => ({
  auto: config?.auto ?? true,
  ...(config?.reserved !== undefined ? { reserved: config.reserved } : {}),
  tailTurns: config?.tail_turns ?? defaultSettings.tailTurns,
  protectedTools: config?.protected_tools ?? DEFAULT_PROTECTED_TOOLS,
  pruneKeepLines: config?.prune_keep_lines ?? 0,
  ...(template !== undefined ? { template } : {})
})

/** Settings from config, reading the template file it names (relative to `directory`). */
export const loadSettings = Effect.fn("Compaction.loadSettings")(function* (config: CompactionConfig | undefined, directory: string, configDir?: string) {
  const file = config?.template
  if (file === undefined) return settingsFromConfig(config)
  const resolved = path.resolve(directory, file)
  // the template goes to the provider: only a file of the project or of the user's config dir
  const outside = configDir === undefined ? undefined : outsidePromptRoots(resolved, directory, configDir)
  if (outside !== undefined) return yield* new CompactionError({ reason: "template", message: `The compaction template ${outside}` })
  const text = yield* Effect.tryPromise({
    try: () => fs.readFile(resolved, "utf8"),
    catch: (e) =>
      new CompactionError({
        reason: "template",
        message: `Cannot read the compaction template ${resolved}: ${(e as Error).message}. Fix "compaction.template" in reins.json.`
      })
  })
  if (text.trim() === "") {
    return yield* new CompactionError({ reason: "template", message: `The compaction template ${resolved} is empty. Fix "compaction.template" in reins.json.` })
  }
  return settingsFromConfig(config, text)
})
