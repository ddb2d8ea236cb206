import { Context, Effect } from "effect"

/** One tool call as hooks see it. */
export interface HookCall {
  readonly tool: string
  readonly sessionID: string
  readonly callID: string
  readonly cwd: string
  /** The arguments as the model sent them (after earlier `tool.before` hooks changed them). */
  readonly args: unknown
}

/** What a `tool.before` hook decides: nothing (go on), new arguments, or a denial with its reason. */
export type BeforeDecision = void | undefined | { readonly args?: unknown; readonly deny?: string }

/** What a `tool.after` hook decides: nothing, or the output the model sees instead. */
export type AfterDecision = void | undefined | { readonly output?: string }

/** The result a `tool.after` hook is shown. */
export interface HookResult {
  readonly title: string
  readonly output: string
  readonly metadata: Record<string, unknown>
}

/** A hook that failed: its message says what went wrong (the pipeline names the hook). */
export interface HookFailure {
  readonly message: string
}

/** Hooks around every tool call, from a plugin file, `makeRuntime`'s `plugins` or config `hooks`. */
export interface ToolHook {
  /** Who the hook is, in messages: the plugin's path, or `hooks.tool.after[0]`. */
  readonly name: string
  readonly before?: (call: HookCall) => Effect.Effect<BeforeDecision, HookFailure>
  readonly after?: (call: HookCall & { readonly result: HookResult }) => Effect.Effect<AfterDecision, HookFailure>
}

/** The tool hooks in force (default none); `Tool.define` reads them when a tool is built. */
export const ToolHooks = Context.Reference<ReadonlyArray<ToolHook>>("reins/tool/ToolHooks", { defaultValue: () => [] })

/** A thrown value or rejection as one line. */
export const describeError = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
