import { Context, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ConfigError, type ModelRef, outsidePromptRoots } from "@reins/domain"
import type { InstructionFile } from "./Instructions.ts"
import anthropic from "./prompt/anthropic.txt" with { type: "text" }
import fallback from "./prompt/default.txt" with { type: "text" }
import gemini from "./prompt/gemini.txt" with { type: "text" }
import gpt from "./prompt/gpt.txt" with { type: "text" }

/** The model families that get their own system prompt header (T27). */
export type PromptFamily = "anthropic" | "gpt" | "gemini" | "default"

const HEADERS: Readonly<Record<PromptFamily, string>> = { anthropic, gpt, gemini, default: fallback }

/**
 * The family of a model, from its id (any provider: `anthropic.claude-…` on Bedrock,
 * `openai/gpt-5` on OpenRouter) and then its provider id: Claude, GPT/Codex/o-series, Gemini.
 */
export const promptFamily = (model: Pick<ModelRef, "providerID" | "modelID">): PromptFamily => {
  const id = model.modelID.toLowerCase()
  const bare = id.slice(id.lastIndexOf("/") + 1)
  if (id.includes("claude")) return "anthropic"
  if (/gpt|codex/.test(id) || /^o\d/.test(bare)) return "gpt"
  if (id.includes("gemini")) return "gemini"
  if (model.providerID === "anthropic") return "anthropic"
  if (model.providerID === "google") return "gemini"
  return "default"
}

/** The shipped static header of a family's system prompt. */
export const familyHeader = (family: PromptFamily): string => HEADERS[family].trim()

/** `agent.prompt` resolved (the header that replaces the family's, for every model), and the files `instructions` names, read. */
export const PromptSettings = Context.Reference<{ readonly header?: string; readonly instructions?: ReadonlyArray<InstructionFile> }>(
  "reins/session/PromptSettings",
  {
    defaultValue: () => ({})
  }
)

/** The static header for a model: the configured one when set, else its family's. */
export const headerFor = (model: Pick<ModelRef, "providerID" | "modelID">, settings: { readonly header?: string }): string =>
  settings.header ?? familyHeader(promptFamily(model))

/** A one-line value that names a file (`./x`, `../x`, `/x`, `~/x`, or `*.txt`/`*.md`) rather than being the prompt itself. */
export const isPromptPath = (value: string) => !/\n/.test(value) && !/\s/.test(value.trim()) && /^(\.{1,2}\/|\/|~\/)|\.(txt|md)$/i.test(value.trim())

/**
 * `agent.prompt` from reins.json: a path to a file (relative to the project directory) whose text
 * is the header, or the header itself inline. Read once when the runtime starts, so the header stays
 * byte-identical across steps and turns.
 */
export const loadPromptSettings = Effect.fn("Prompt.loadSettings")(function* (value: string | undefined, directory: string, home = os.homedir()) {
  if (value === undefined) return {}
  const problem = (text: string) => new ConfigError({ file: "reins.json", field: "agent.prompt", problem: text })
  if (!isPromptPath(value)) {
    if (value.trim() === "") return yield* problem("is empty: give the prompt text, or the path of a file that holds it")
    return { header: value.trim() }
  }
  const given = value.trim()
  const resolved = given.startsWith("~/") ? path.join(home, given.slice(2)) : path.resolve(directory, given)
  // the header goes to the provider: only a file of the project or of the user's config dir
  const outside = outsidePromptRoots(resolved, directory, path.join(home, ".config", "reins"))
  if (outside !== undefined) return yield* problem(`the prompt file ${outside}`)
  const text = yield* Effect.tryPromise({
    try: () => fs.promises.readFile(resolved, "utf8"),
    catch: (e) =>
      problem(
        `cannot read the prompt file ${resolved}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}. ` +
          `Fix the path (relative to ${directory}) or give the prompt text inline.`
      )
  })
  if (text.trim() === "") return yield* problem(`the prompt file ${resolved} is empty`)
  return { header: text.trim() }
})
