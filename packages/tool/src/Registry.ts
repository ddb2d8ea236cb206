import { Context, Effect, Layer } from "effect"
import { Permission } from "@reins/permission"
import type { Info } from "./Tool.ts"
import { ToolChoiceSettings, offeredFor } from "./ToolChoice.ts"

/**
 * Tools that come and go while the runtime runs (MCP servers' tools): asked for before each step,
 * so a source may start lazily on the first ask and change its list between steps.
 */
export const DynamicTools = Context.Reference<{ current(sessionID: string): Effect.Effect<ReadonlyArray<Info>> }>("reins/tool/DynamicTools", {
  defaultValue: () => ({ current: () => Effect.succeed([]) })
})

/** The tools offered to the model, after permission rules removed the denied ones. */
export class ToolRegistry extends Context.Service<
  ToolRegistry,
  {
    /** Every permitted tool, whatever the model. */
    readonly tools: ReadonlyArray<Info>
    get(id: string): Info | undefined
    /** The permitted tools offered to one model: its family's editing tools only (see ToolChoice). */
    forModel(modelID: string): ReadonlyArray<Info>
    /**
     * Asks the dynamic sources (`DynamicTools`) for their current tools, and the tools offered only some of the time
     * (`Info.offered`) whether they are; called before each step of a session.
     */
    refresh(sessionID: string): Effect.Effect<void>
  }
>()("reins/tool/ToolRegistry") {
  /** Builds the registry from tool definitions (each an effect that builds an Info), plus the `DynamicTools` of the context. */
  static readonly layer = <R>(definitions: ReadonlyArray<Effect.Effect<Info, never, R>>) =>
    Layer.effect(
      ToolRegistry,
      Effect.gen(function* () {
        const permission = yield* Permission
        const choice = yield* ToolChoiceSettings
        const dynamic = yield* DynamicTools
        const all = yield* Effect.all(definitions)
        const fixed = all.filter((tool) => !permission.isDisabled(tool.id))
        // a tool offered only some of the time is left out until a refresh finds it is
        const shownIn = (sessionID: string | undefined) =>
          fixed.filter((tool) => tool.offered === undefined || (sessionID !== undefined && tool.offered(sessionID)))
        let tools = shownIn(undefined)
        let extra: ReadonlyArray<Info> = []
        let byId = new Map(tools.map((tool) => [tool.id, tool]))
        // A dynamic tool never shadows a defined one; a denied one is not offered, like a built-in.
        const refresh = (sessionID: string) =>
          Effect.map(dynamic.current(sessionID), (found) => {
            const taken = new Set(all.map((tool) => tool.id))
            extra = found.filter((tool) => !taken.has(tool.id) && !permission.isDisabled(tool.id))
            tools = [...shownIn(sessionID), ...extra]
            byId = new Map(tools.map((tool) => [tool.id, tool]))
          })
        // The choice is made over all defined tools, so a denied family is not swapped for the other.
        const forModel = (modelID: string) => [...offeredFor(all, modelID, choice.edit_tool).filter((tool) => byId.has(tool.id)), ...extra]
        return ToolRegistry.of({
          get tools() {
            return tools
          },
          get: (id) => byId.get(id),
          forModel,
          refresh
        })
      })
    )
}
