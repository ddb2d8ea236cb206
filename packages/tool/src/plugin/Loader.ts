import { Context, Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { Permission } from "@reins/permission"
import type { Truncate } from "@reins/truncate"
import * as Tool from "../Tool.ts"
import {
  describeError,
  type AfterDecision,
  type BeforeDecision,
  type ChatParams,
  type ChatParamsInput,
  type HookCall,
  type HookResult,
  type SessionHooks,
  type ToolHook
} from "./Hooks.ts"
import { fromPlain, isPlainTool, plainToolProblem } from "./PlainTool.ts"
import type { Skipped } from "./Skills.ts"
import { isRecord } from "./Values.ts"

/** A plugin: hooks written as plain (sync or async) functions. */
export interface Plugin {
  /** Before a tool runs: return `{ args }` to change its arguments, `{ deny: reason }` to refuse it. */
  readonly "tool.before"?: (call: HookCall) => BeforeDecision | Promise<BeforeDecision>
  /** After a tool ran: return `{ output }` to change what the model sees. */
  readonly "tool.after"?: (call: HookCall & { readonly result: HookResult }) => AfterDecision | Promise<AfterDecision>
  /** Before each model call: temperature, top-p, provider options. */
  readonly "chat.params"?: (input: ChatParamsInput) => ChatParams | void | Promise<ChatParams | void>
  /** Sees every session event (observe only). */
  readonly event?: (event: unknown) => void | Promise<void>
}

/** What a plugin file's function export is given. */
export interface PluginContext {
  readonly cwd: string
  readonly home: string
}

const HOOK_KEYS = ["tool.before", "tool.after", "chat.params", "event"]

/** A tool a file exported: `Tool.define`'s effect or a plain tool, not yet built. */
export interface ToolDefinition {
  readonly id: string | undefined
  readonly file: string
  readonly build: Effect.Effect<unknown, unknown, Permission | Truncate>
}

const defined = new WeakMap<object, string>()

/** `Tool.define` as the `@reins/plugin` module offers it: the id is known before the tool is built. */
const defineTracked: typeof Tool.define = (id, spec) => {
  const effect = Tool.define(id, spec)
  defined.set(effect, id)
  return effect
}

/**
 * Lets tool and plugin files `import { Tool, Schema, Effect } from "@reins/plugin"`: the runtime's own copies, wherever
 * the file is. Loaded only when there are such files: the module hands over the whole Effect and Schema namespaces,
 * which keeps every export of both in the bundle's chunk for it, and a run without them does not load that chunk.
 */
export const registerPluginModule = () => import("./PluginModule.ts").then((m) => m.registerPluginModule(defineTracked))

/** The `.ts`/`.js` files of a folder, sorted; none when it does not exist. */
export const scriptFiles = (dir: string) =>
  Effect.promise(() => fs.promises.readdir(dir, { withFileTypes: true }).catch(() => [])).pipe(
    Effect.map((entries) =>
      entries
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.(ts|js|mjs|mts)$/.test(e.name) && !e.name.endsWith(".d.ts"))
        .map((e) => path.join(dir, e.name))
        .sort()
    )
  )

/** One build error with its line and column, when Bun gives them. */
const oneError = (e: unknown) => {
  const position = typeof e === "object" && e !== null && "position" in e ? (e as { position?: { line?: number; column?: number } | null }).position : undefined
  const where = position?.line !== undefined ? ` (line ${position.line}${position.column !== undefined ? `, column ${position.column}` : ""})` : ""
  return `${describeError(e)}${where}`
}

/** A syntax error is an AggregateError of Bun's build messages: the first few say what is wrong. */
const loadError = (file: string, e: unknown): Skipped => {
  const errors =
    typeof e === "object" && e !== null && "errors" in e && Array.isArray((e as { errors: unknown }).errors)
      ? (e as { errors: ReadonlyArray<unknown> }).errors
      : []
  return { path: file, error: errors.length > 0 ? errors.slice(0, 3).map(oneError).join("; ") : oneError(e) }
}

/** Imports a file; a syntax error or a throw at import is the file's failure. */
const importFile = (file: string) =>
  Effect.tryPromise({
    try: () => import(pathToFileURL(file).href) as Promise<Record<string, unknown>>,
    catch: (e) => loadError(file, e)
  })

/** How many tool or plugin files are imported at once. */
const IMPORT_CONCURRENCY = 8

/** Imports the files together (each is read and transpiled); the modules come back in the files' order, a failed one in `failed`. */
const importAll = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (files.length > 0) yield* Effect.promise(registerPluginModule)
    const imports = yield* Effect.forEach(files, (file) => Effect.result(importFile(file)), { concurrency: IMPORT_CONCURRENCY })
    const modules: Array<{ readonly file: string; readonly exports: Record<string, unknown> }> = []
    const failed: Array<Skipped> = []
    imports.forEach((loaded, i) => {
      if (loaded._tag === "Failure") failed.push(loaded.failure)
      else modules.push({ file: files[i]!, exports: loaded.success })
    })
    return { modules, failed }
  })

const stem = (file: string) => path.basename(file).replace(/\.[^.]+$/, "")

const ID = /^[a-zA-Z0-9_-]{1,64}$/

/** The tools of the files: each export `Tool.define(...)` or a plain tool; the default export's id is the file's name, another's `<file>_<export>`. */
export const loadToolFiles = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const tools: Array<ToolDefinition> = []
    const { modules, failed } = yield* importAll(files)
    for (const { file, exports } of modules) {
      const found: Array<ToolDefinition> = []
      const bad: Array<string> = []
      for (const [name, value] of Object.entries(exports)) {
        const plainId = name === "default" ? stem(file) : `${stem(file)}_${name}`
        if (Effect.isEffect(value)) found.push({ id: defined.get(value), file, build: value as Effect.Effect<unknown, unknown, Permission | Truncate> })
        else if (isPlainTool(value)) {
          const problem = plainToolProblem(value)
          if (!ID.test(plainId)) bad.push(`${name}: the tool id "${plainId}" must be letters, digits, _ or - (rename the file or export)`)
          else if (problem !== undefined) bad.push(`${name}: ${problem}`)
          else found.push({ id: plainId, file, build: fromPlain(plainId, value) })
        } else bad.push(`${name}: not a tool (export Tool.define(...) or { description, parameters, execute })`)
      }
      if (found.length === 0) failed.push({ path: file, error: bad.length > 0 ? bad.join("; ") : "it exports no tool" })
      else {
        tools.push(...found)
        for (const b of bad) failed.push({ path: file, error: b })
      }
    }
    return { tools, failed }
  })

/** Checks an object is a plugin: hook functions under known names only. */
const asPlugin = (value: unknown): Plugin | string => {
  if (!isRecord(value)) return "expected an object of hooks"
  const unknown = Object.keys(value).filter((k) => !HOOK_KEYS.includes(k))
  if (unknown.length > 0) return `unknown hook ${unknown.map((k) => `"${k}"`).join(", ")} (hooks: ${HOOK_KEYS.join(", ")})`
  const notFn = Object.entries(value).filter(([, v]) => typeof v !== "function")
  if (notFn.length > 0) return `the hook "${notFn[0]![0]}" is not a function`
  return value as Plugin
}

/** A loaded plugin, named for messages. */
export interface NamedPlugin {
  readonly name: string
  readonly plugin: Plugin
}

/** How long a plugin file's function export may take to return its hooks (ms); past it the plugin is skipped. */
export const PluginSetupTimeout = Context.Reference<number>("reins/tool/PluginSetupTimeout", { defaultValue: () => 10_000 })

/** The plugins of the files: each export a plugin object or a function (async allowed) of the context returning one. */
export const loadPluginFiles = (files: ReadonlyArray<string>, context: PluginContext) =>
  Effect.gen(function* () {
    const setupTimeout = yield* PluginSetupTimeout
    const plugins: Array<NamedPlugin> = []
    const { modules, failed } = yield* importAll(files)
    for (const { file, exports } of modules) {
      const entries = Object.entries(exports)
      if (entries.length === 0) failed.push({ path: file, error: "it exports no plugin" })
      for (const [name, value] of entries) {
        const label = name === "default" ? file : `${file}#${name}`
        const made = yield* Effect.result(
          typeof value === "function"
            ? Effect.tryPromise({
                try: async () => (await (value as (ctx: PluginContext) => unknown)(context)) as unknown,
                catch: (e) => `the plugin function threw: ${describeError(e)}`
              }).pipe(
                // a plugin that never finishes setting up would hold the runtime's start for ever
                Effect.timeoutOrElse({
                  duration: Duration.millis(setupTimeout),
                  orElse: () => Effect.fail(`the plugin function did not finish within ${setupTimeout} ms`)
                })
              )
            : Effect.succeed(value)
        )
        if (made._tag === "Failure") {
          failed.push({ path: label, error: made.failure })
          continue
        }
        const plugin = asPlugin(made.success)
        if (typeof plugin === "string") failed.push({ path: label, error: plugin })
        else plugins.push({ name: label, plugin })
      }
    }
    return { plugins, failed }
  })

const hookCall = <A>(f: () => A | Promise<A>) => Effect.tryPromise({ try: async () => await f(), catch: (e) => ({ message: describeError(e) }) })

/** A plugin's tool hooks for `Tool.define`'s pipeline; none when it has neither. */
export const toolHookOf = ({ name, plugin }: NamedPlugin): ToolHook | undefined => {
  const before = plugin["tool.before"]
  const after = plugin["tool.after"]
  if (!before && !after) return undefined
  return {
    name,
    ...(before
      ? {
          before: (call: HookCall) =>
            hookCall(() => before(call)).pipe(
              Effect.flatMap((d) =>
                d !== undefined && d !== null && !isRecord(d)
                  ? Effect.fail({ message: "it must return nothing, { args } or { deny: reason }" })
                  : d?.deny !== undefined && typeof d.deny !== "string"
                    ? Effect.fail({ message: "`deny` must be the reason, a string" })
                    : // `{ args: undefined }` (a hook that computed nothing) leaves the arguments as they were
                      Effect.succeed(d?.deny !== undefined ? { deny: d.deny } : d?.args !== undefined ? { args: d.args } : undefined)
              )
            )
        }
      : {}),
    ...(after
      ? {
          after: (call: HookCall & { readonly result: HookResult }) =>
            hookCall(() => after(call)).pipe(
              Effect.flatMap((d) =>
                d !== undefined && d !== null && (!isRecord(d) || (d.output !== undefined && typeof d.output !== "string"))
                  ? Effect.fail({ message: "it must return nothing or { output: string }" })
                  : Effect.succeed(d ?? undefined)
              )
            )
        }
      : {})
  }
}

/** The plugins' `chat.params` and `event` hooks. */
export const sessionHooksOf = (plugins: ReadonlyArray<NamedPlugin>): SessionHooks => ({
  chatParams: plugins.flatMap(({ name, plugin }) => {
    const f = plugin["chat.params"]
    return f ? [{ name, run: (input: ChatParamsInput) => hookCall(() => f(input)) }] : []
  }),
  events: plugins.flatMap(({ name, plugin }) => {
    const f = plugin.event
    return f ? [{ name, run: (event: unknown) => Effect.asVoid(hookCall(() => f(event))) }] : []
  })
})
