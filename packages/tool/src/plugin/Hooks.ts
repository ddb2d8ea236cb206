import { Context, Effect } from "effect"
import { isRecord } from "./Values.ts"

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

/** What `chat.params` hooks may set on a model call. */
export interface ChatParams {
  readonly temperature?: number
  readonly topP?: number
  /** AI SDK `providerOptions`, merged over the model's own (provider key by provider key). */
  readonly providerOptions?: Record<string, Record<string, unknown>>
}

/** What a `chat.params` hook is shown. */
export interface ChatParamsInput {
  readonly sessionID: string
  readonly providerID: string
  readonly modelID: string
}

/** Hooks that are not about tools: model call parameters and observers of every event. */
export interface SessionHooks {
  readonly chatParams: ReadonlyArray<{
    readonly name: string
    readonly run: (input: ChatParamsInput) => Effect.Effect<ChatParams | void | undefined, HookFailure>
  }>
  readonly events: ReadonlyArray<{ readonly name: string; readonly run: (event: unknown) => Effect.Effect<void, HookFailure> }>
}

/** The session hooks in force (default none). */
export const SessionHooks = Context.Reference<SessionHooks>("reins/tool/SessionHooks", { defaultValue: () => ({ chatParams: [], events: [] }) })

/**
 * What of a `chat.params` hook's answer can be used, and what cannot (each a phrase): a value of
 * the wrong type would reach the provider and fail the model call, so it is dropped and reported.
 */
export const checkChatParams = (got: unknown): { readonly params: ChatParams; readonly problems: ReadonlyArray<string> } => {
  if (got === undefined || got === null) return { params: {}, problems: [] }
  if (!isRecord(got)) return { params: {}, problems: ["it must return nothing or { temperature?, topP?, providerOptions? }"] }
  const problems: Array<string> = []
  const number = (key: "temperature" | "topP") => {
    const v = got[key]
    if (v === undefined) return {}
    if (typeof v === "number" && Number.isFinite(v)) return { [key]: v }
    problems.push(`\`${key}\` must be a number, not ${typeof v === "number" ? String(v) : JSON.stringify(v)}`)
    return {}
  }
  const options = got.providerOptions
  const validOptions = options === undefined || (isRecord(options) && Object.values(options).every(isRecord))
  if (!validOptions) problems.push("`providerOptions` must be an object of objects, one per provider (e.g. { openai: { … } })")
  const providerOptions = options !== undefined && validOptions ? { providerOptions: options as Record<string, Record<string, unknown>> } : {}
  const unknown = Object.keys(got).filter((k) => !["temperature", "topP", "providerOptions"].includes(k))
  if (unknown.length > 0) problems.push(`unknown ${unknown.map((k) => `\`${k}\``).join(", ")} (it may set temperature, topP and providerOptions)`)
  return { params: { ...number("temperature"), ...number("topP"), ...providerOptions }, problems }
}

/** Runs the `chat.params` hooks in order, each seeing the input; later ones win field by field. A failing one is logged and skipped, a wrong value logged and dropped. */
export const chatParamsFor = (hooks: SessionHooks, input: ChatParamsInput) =>
  Effect.gen(function* () {
    let params: ChatParams = {}
    for (const hook of hooks.chatParams) {
      const got = yield* hook
        .run(input)
        .pipe(
          Effect.catch((e) => Effect.as(Effect.logWarning(`The hook ${hook.name} (chat.params) failed; its parameters are not used: ${e.message}`), undefined))
        )
      const checked = checkChatParams(got)
      if (checked.problems.length > 0)
        yield* Effect.logWarning(`The hook ${hook.name} (chat.params) returned what cannot be used: ${checked.problems.join("; ")}`)
      const p = checked.params
      params = {
        ...params,
        ...(p.temperature !== undefined ? { temperature: p.temperature } : {}),
        ...(p.topP !== undefined ? { topP: p.topP } : {}),
        ...(p.providerOptions ? { providerOptions: { ...params.providerOptions, ...p.providerOptions } } : {})
      }
    }
    return params
  })
