import { Context } from "effect"
import type { EditToolSetting } from "@reins/domain"

/** The file-editing tools offered to models outside the GPT family. */
export const EDIT_TOOLS: ReadonlyArray<string> = ["edit", "write"]
/** The file-editing tool offered to GPT-family models, which are trained on its patch format. */
export const PATCH_TOOLS: ReadonlyArray<string> = ["apply_patch"]

const editingTools = new Set([...EDIT_TOOLS, ...PATCH_TOOLS])

/** Which editing tools to offer; `edit_tool` in `reins.json`, `auto` by default. */
export const ToolChoiceSettings = Context.Reference<{ readonly edit_tool: EditToolSetting }>("reins/tool/ToolChoiceSettings", {
  defaultValue: () => ({ edit_tool: "auto" })
})

/** Whether a model id names a GPT-family model (`gpt-` or `codex`, any case, anywhere in the id). */
export const isPatchModel = (modelID: string): boolean => /gpt-|codex/i.test(modelID)

/** The editing tool ids a model is offered under a setting. */
export const editToolsFor = (modelID: string, setting: EditToolSetting = "auto"): ReadonlyArray<string> => {
  if (setting === "edit") return EDIT_TOOLS
  if (setting === "apply_patch") return PATCH_TOOLS
  return isPatchModel(modelID) ? PATCH_TOOLS : EDIT_TOOLS
}

/**
 * The tools a model is offered: the editing tools of the other family are dropped, the rest pass
 * untouched. Under `auto`, a family none of whose tools is in `tools` (not defined at all, e.g. a
 * custom tool list) is not chosen, so the model keeps the other family. Pass the tools before
 * permission filtering: a family that is defined but denied is not replaced.
 */
export const offeredFor = <T extends { readonly id: string }>(
  tools: ReadonlyArray<T>,
  modelID: string,
  setting: EditToolSetting = "auto"
): ReadonlyArray<T> => {
  const defines = (family: ReadonlyArray<string>) => tools.some((tool) => family.includes(tool.id))
  let chosen = editToolsFor(modelID, setting)
  if (setting === "auto" && !defines(chosen)) chosen = chosen === PATCH_TOOLS ? EDIT_TOOLS : PATCH_TOOLS
  return tools.filter((tool) => !editingTools.has(tool.id) || chosen.includes(tool.id))
}
