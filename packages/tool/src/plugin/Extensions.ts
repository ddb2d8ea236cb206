import { Context, Duration, Effect, Layer, Queue } from "effect"
import * as path from "node:path"
import { Bus, type HooksConfig, projectSkillRoots } from "@reins/domain"
import type { Permission } from "@reins/permission"
import type { Truncate } from "@reins/truncate"
import { ToolRegistry } from "../Registry.ts"
import type { Info } from "../Tool.ts"
import { skill } from "../builtin/skill.ts"
import { diagnostics } from "../builtin/diagnostics.ts"
import { Diagnostics } from "../builtin/DiagnosticsPort.ts"
import { commandHooks, listCommandHooks } from "./CommandHooks.ts"
import { SessionHooks, ToolHooks } from "./Hooks.ts"
import { loadPluginFiles, loadToolFiles, scriptFiles, sessionHooksOf, toolHookOf, type NamedPlugin, type Plugin, type ToolDefinition } from "./Loader.ts"
import { Skills, discoverSkills, skillRoots, type Skill, type Skipped } from "./Skills.ts"

/** What was found where, and what was skipped and why: `reins debug config` prints it. */
export interface ExtensionReport {
  readonly skills: {
    readonly found: ReadonlyArray<{ readonly name: string; readonly description: string; readonly path: string }>
    readonly skipped: ReadonlyArray<Skipped>
  }
  readonly tools: { readonly found: ReadonlyArray<{ readonly id: string; readonly path: string }>; readonly failed: ReadonlyArray<Skipped> }
  readonly plugins: { readonly found: ReadonlyArray<{ readonly name: string; readonly hooks: ReadonlyArray<string> }>; readonly failed: ReadonlyArray<Skipped> }
  readonly hooks: { readonly found: ReadonlyArray<{ readonly name: string; readonly command: string }>; readonly failed: ReadonlyArray<Skipped> }
}

/** Everything discovered from the folders (and passed in code). */
export interface Discovery {
  readonly skills: ReadonlyArray<Skill>
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly plugins: ReadonlyArray<NamedPlugin>
  readonly report: ExtensionReport
}

export interface DiscoveryOptions {
  /** The project directory. */
  readonly cwd: string
  /** The home directory (the runtime's HomeDir). */
  readonly home: string
  /** Plugins given in code (`makeRuntime({ plugins })`), after the folders'. */
  readonly plugins?: ReadonlyArray<Plugin>
  /** Config command hooks, listed in the report. */
  readonly hooks?: HooksConfig
  /**
   * Whether the project's own folders count (default true): untrusted, its `.reins/tools` and
   * `.reins/plugins` are not loaded, nor its skills that bring scripts.
   */
  readonly trusted?: boolean
}

/** Where tool files are looked for: the project's `.reins/tools`, then `~/.config/reins/tools`. */
export const toolRoots = (cwd: string, home: string) => [path.join(cwd, ".reins", "tools"), path.join(home, ".config", "reins", "tools")]
/** Where plugin files are looked for: the project's `.reins/plugins`, then `~/.config/reins/plugins`. */
export const pluginRoots = (cwd: string, home: string) => [path.join(cwd, ".reins", "plugins"), path.join(home, ".config", "reins", "plugins")]

const hookNames = (p: Plugin) => Object.keys(p)

/** Finds skills, tool files and plugin files; anything that fails to load is in the report, the rest load. */
export const discoverExtensions = (options: DiscoveryOptions) =>
  Effect.gen(function* () {
    const trusted = options.trusted ?? true
    const skills = yield* discoverSkills(skillRoots(options.cwd, options.home), trusted ? {} : { untrusted: projectSkillRoots(options.cwd) })
    // the home folder's always; the project's once it is trusted
    const ours = (roots: ReadonlyArray<string>) => (trusted ? roots : roots.slice(1))
    const toolFiles = (yield* Effect.forEach(ours(toolRoots(options.cwd, options.home)), scriptFiles)).flat()
    const tools = yield* loadToolFiles(toolFiles)
    const pluginFiles = (yield* Effect.forEach(ours(pluginRoots(options.cwd, options.home)), scriptFiles)).flat()
    const loaded = yield* loadPluginFiles(pluginFiles, { cwd: options.cwd, home: options.home })
    const plugins = [...loaded.plugins, ...(options.plugins ?? []).map((plugin, i) => ({ name: `plugins[${i}]`, plugin }))]
    const commands = listCommandHooks(options.hooks)
    const report: ExtensionReport = {
      skills: { found: skills.skills.map((s) => ({ name: s.name, description: s.description, path: s.file })), skipped: skills.skipped },
      tools: { found: tools.tools.map((t) => ({ id: t.id ?? "(id known once built)", path: t.file })), failed: tools.failed },
      plugins: { found: plugins.map((p) => ({ name: p.name, hooks: hookNames(p.plugin) })), failed: loaded.failed },
      hooks: {
        found: commands.filter((c) => c.problem === undefined).map((c) => ({ name: c.name, command: c.hook.command })),
        failed: commands.flatMap((c) => (c.problem === undefined ? [] : [{ path: c.name, error: c.problem }]))
      }
    }
    return { skills: skills.skills, tools: tools.tools, plugins, report } satisfies Discovery
  })

/** The discovery of one runtime, and what building its tools and hooks added to the report. */
export class Extensions extends Context.Service<
  Extensions,
  {
    readonly discovery: Discovery
    /** The report, with the tools that failed when built. */
    report(): ExtensionReport
    /** Records a failure found after discovery (a tool that did not build). */
    fail(kind: "tools", failure: Skipped): void
  }
>()("reins/tool/Extensions") {
  /** Discovers once, when the runtime starts; logs every failure once. */
  static readonly layer = (options: DiscoveryOptions) =>
    Layer.effect(
      Extensions,
      Effect.gen(function* () {
        const discovery = yield* discoverExtensions(options)
        const late = { tools: [] as Array<Skipped> }
        const r = discovery.report
        for (const s of [...r.skills.skipped, ...r.tools.failed, ...r.plugins.failed, ...r.hooks.failed])
          yield* Effect.logWarning(`Skipped ${s.path}: ${s.error}`)
        return Extensions.of({
          discovery,
          report: () => ({
            ...r,
            tools: { found: r.tools.found, failed: [...r.tools.failed, ...late.tools] }
          }),
          fail: (kind, failure) => void late[kind].push(failure)
        })
      })
    )
}

const isInfo = (v: unknown): v is Info =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as Info).id === "string" &&
  typeof (v as Info).execute === "function" &&
  typeof (v as Info).description === "string"

/**
 * The tool hooks in force: the plugins' (in load order), then the config's command hooks. Provided
 * under the tool registry and MCP servers, so every tool, wherever it comes from, runs them.
 */
export const layerToolHooks = (hooksConfig: HooksConfig | undefined) =>
  Layer.effect(
    ToolHooks,
    Effect.gen(function* () {
      const extensions = yield* Extensions
      // a hook that cannot run (its `match` is no regular expression) was reported by the discovery
      const command = yield* commandHooks(hooksConfig)
      return [...extensions.discovery.plugins.flatMap((p) => toolHookOf(p) ?? []), ...command.hooks]
    })
  )

/**
 * The tool registry with the extensions: the given tools, `skill` when there are skills, and the
 * custom tools (one that fails to build or reuses an id is reported and left out); every tool
 * built with the `ToolHooks` in force (`layerToolHooks`).
 */
export const layerToolRegistry = (base: ReadonlyArray<Effect.Effect<Info, never, Permission | Truncate>>) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const extensions = yield* Extensions
      const { discovery } = extensions
      const hooks = yield* ToolHooks
      // every tool is built with the hooks; `skill` reads the skills when it runs
      const withHooks = <A, E, R>(definition: Effect.Effect<A, E, R>) =>
        definition.pipe(Effect.provideService(ToolHooks, hooks), Effect.provideService(Skills, discovery.skills))
      // `diagnostics` only where a language server could answer it (every request carries the tools' definitions)
      const languageServers = (yield* Diagnostics).offered
      const builtins: ReadonlyArray<Effect.Effect<Info, never, Permission | Truncate>> = [
        ...base,
        ...(languageServers ? [diagnostics] : []),
        ...(discovery.skills.length > 0 ? [skill] : [])
      ]
      const given = yield* Effect.forEach(builtins, withHooks)
      const builtIn = new Set(given.map((t) => t.id))
      const custom: Array<Info> = []
      for (const def of discovery.tools) {
        const built = yield* Effect.exit(withHooks(def.build))
        const tool = built._tag === "Success" && isInfo(built.value) ? built.value : undefined
        const failure =
          built._tag === "Failure"
            ? `it failed to build: ${String(built.cause)}`
            : tool === undefined
              ? "the export is an Effect that is not a tool (use Tool.define)"
              : custom.some((t) => t.id === tool.id) || builtIn.has(tool.id)
                ? `the tool id "${tool.id}" is already taken`
                : undefined
        if (failure !== undefined || tool === undefined) {
          extensions.fail("tools", { path: def.file, error: failure ?? "not a tool" })
          yield* Effect.logWarning(`Skipped a tool of ${def.file}: ${failure}`)
          continue
        }
        custom.push(tool)
      }
      return ToolRegistry.layer([...given, ...custom].map((t) => Effect.succeed(t)))
    })
  )

/** The skills and session hooks of the extensions, for the session (system prompt, chat.params). */
export const layerSessionExtensions = Layer.mergeAll(
  Layer.effect(
    Skills,
    Effect.map(Extensions, (e) => e.discovery.skills)
  ),
  Layer.effect(
    SessionHooks,
    Effect.map(Extensions, (e) => sessionHooksOf(e.discovery.plugins))
  )
)

/** How long one `event` hook may take with one event before it is given up and the next event is fed (ms). */
export const EventHookTimeout = Context.Reference<number>("reins/tool/EventHookTimeout", { defaultValue: () => 10_000 })

/**
 * Feeds every bus event to the plugins' `event` hooks, in order, off the publisher's path. Each
 * hook gets its own copy (observe only: what it changes reaches no one else); one that fails or
 * takes longer than `EventHookTimeout` is logged, so a stuck hook cannot hold the queue forever.
 */
export const layerEventHooks = Layer.effectDiscard(
  Effect.gen(function* () {
    const { events } = sessionHooksOf((yield* Extensions).discovery.plugins)
    if (events.length === 0) return
    const bus = yield* Bus
    const timeout = yield* EventHookTimeout
    const queue = yield* Queue.unbounded<unknown>()
    yield* bus.listen((event) => Queue.offer(queue, event))
    const feed = (hook: (typeof events)[number], event: unknown) =>
      // an event that cannot be copied (it holds a function) is given as it is
      Effect.try({ try: () => structuredClone(event), catch: () => "cannot be copied" }).pipe(
        Effect.orElseSucceed(() => event),
        Effect.flatMap((copy) => hook.run(copy)),
        Effect.timeoutOrElse({
          duration: Duration.millis(timeout),
          orElse: () => Effect.fail({ message: `it did not finish within ${timeout} ms` })
        }),
        Effect.catch((e) => Effect.logWarning(`The hook ${hook.name} (event) failed: ${e.message}`))
      )
    yield* Effect.forkScoped(
      Effect.forever(Effect.flatMap(Queue.take(queue), (event) => Effect.forEach(events, (hook) => feed(hook, event), { discard: true })))
    )
  })
)
