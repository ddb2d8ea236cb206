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
    /** Every permitted tool, whatever the model, but those offered only some of the time (`Info.offered`). */
    readonly tools: ReadonlyArray<Info>
    get(id: string): Info | undefined
    /**
     * The permitted tools offered to one model in one session: its family's editing tools only (see ToolChoice), the
     * tools offered some of the time asked now whether they are for this session (without one, left out), and the
     * session's dynamic tools as its last refresh found them.
     */
    forModel(modelID: string, sessionID?: string): ReadonlyArray<Info>
    /** Asks the dynamic sources (`DynamicTools`) for a session's current tools; called before each step of a session. */
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
        const always = fixed.filter((tool) => tool.offered === undefined)
        // each session's dynamic tools as its last refresh found them; `latest` for a caller that names no session
        const extras = new Map<string, ReadonlyArray<Info>>()
        let latest: ReadonlyArray<Info> = []
        const byId = () => new Map([...always, ...latest].map((tool) => [tool.id, tool]))
        // A dynamic tool never shadows a defined one; a denied one is not offered, like a built-in.
        const refresh = (sessionID: string) =>
          Effect.map(dynamic.current(sessionID), (found) => {
            const taken = new Set(all.map((tool) => tool.id))
            latest = found.filter((tool) => !taken.has(tool.id) && !permission.isDisabled(tool.id))
            extras.set(sessionID, latest)
          })
        // Asked at each call, per session: one session's jobs never offer job_output to another. The choice is made
        // over all defined tools, so a denied family is not swapped for the other.
        const forModel = (modelID: string, sessionID?: string) => {
          const shown = new Set(fixed.filter((tool) => tool.offered === undefined || (sessionID !== undefined && tool.offered(sessionID))).map((t) => t.id))
          const extra = sessionID === undefined ? latest : (extras.get(sessionID) ?? [])
          return [...offeredFor(all, modelID, choice.edit_tool).filter((tool) => shown.has(tool.id)), ...extra]
        }
        return ToolRegistry.of({
          get tools() {
            return [...always, ...latest]
          },
          get: (id) => byId().get(id),
          forModel,
          refresh
        })
      })
    )
}
