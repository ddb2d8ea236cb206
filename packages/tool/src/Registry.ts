import { Context, Effect, Layer } from "effect"
import { Permission } from "@reins/permission"
import type { Info } from "./Tool.ts"

/** The tools offered to the model, after permission rules removed the denied ones. */
export class ToolRegistry extends Context.Service<ToolRegistry, {
  readonly tools: ReadonlyArray<Info>
  get(id: string): Info | undefined
}>()("reins/tool/ToolRegistry") {
  /** Builds the registry from tool definitions (each an effect that builds an Info). */
  static readonly layer = <R>(definitions: ReadonlyArray<Effect.Effect<Info, never, R>>) =>
    Layer.effect(
      ToolRegistry,
      Effect.gen(function* () {
        const permission = yield* Permission
        const all = yield* Effect.all(definitions)
        const tools = all.filter((tool) => !permission.isDisabled(tool.id))
        const byId = new Map(tools.map((tool) => [tool.id, tool]))
        return ToolRegistry.of({ tools, get: (id) => byId.get(id) })
      })
    )
}
