import { Context, Effect, Layer } from "effect"
import { Permission } from "@reins/permission"
import type { Info } from "./Tool.ts"
import { ToolChoiceSettings, offeredFor } from "./ToolChoice.ts"

/** The tools offered to the model, after permission rules removed the denied ones. */
export class ToolRegistry extends Context.Service<ToolRegistry, {
  /** Every permitted tool, whatever the model. */
  readonly tools: ReadonlyArray<Info>
  get(id: string): Info | undefined
  /** The permitted tools offered to one model: its family's editing tools only (see ToolChoice). */
  forModel(modelID: string): ReadonlyArray<Info>
}>()("reins/tool/ToolRegistry") {
  /** Builds the registry from tool definitions (each an effect that builds an Info). */
  static readonly layer = <R>(definitions: ReadonlyArray<Effect.Effect<Info, never, R>>) =>
    Layer.effect(
      ToolRegistry,
      Effect.gen(function* () {
        const permission = yield* Permission
        const choice = yield* ToolChoiceSettings
        const all = yield* Effect.all(definitions)
        const tools = all.filter((tool) => !permission.isDisabled(tool.id))
        const byId = new Map(tools.map((tool) => [tool.id, tool]))
        // The choice is made over all defined tools, so a denied family is not swapped for the other.
        const forModel = (modelID: string) => offeredFor(all, modelID, choice.edit_tool).filter((tool) => byId.has(tool.id))
        return ToolRegistry.of({ tools, get: (id) => byId.get(id), forModel })
      })
    )
}
