import { Clock, Effect, Layer } from "effect"
import { Compaction, CompactionSettings, loadSettings, type CompactionError } from "@reins/compaction"
import {
  Bus,
  cleanTempFiles,
  DataDir,
  noteTempFilesIn,
  GenAiTracing,
  HomeDir,
  Ids,
  WorkDir,
  captureContentFromEnv,
  userConfigDir,
  type Config,
  ConfigError,
  type PermissionConfig
} from "@reins/domain"
import type { ClusterOptions } from "./ClusterRunner.ts"
import { Permission, PermissionGrants, PermissionQuestions, PermissionSettings, defaultRules, fromConfig, realLocation, type Prompter } from "@reins/permission"
import { authFile, Provider, ProviderSettings, readStoredKeys, RetryPolicy, type StoredKeys } from "@reins/provider"
import {
  Agents,
  DoomLoopSettings,
  EventAppender,
  layerSubAgents,
  layerTodoLists,
  loadAgents,
  makeAgents,
  PromptSettings,
  RunSettings,
  LeaseHolder,
  asRunner,
  SessionProcessor,
  SessionRuns,
  SessionService,
  Sessions,
  SessionSettings,
  BudgetSettings,
  Turn,
  defaultDoomLoopLimits,
  loadInstructions,
  loadPromptSettings,
  runTimingFromEnv
} from "@reins/session"
import { databaseIdentity, type EventLog, Grants, PendingQuestions, type RunClaims, type SessionStore, Storage, type StoreError } from "@reins/storage"
import { CheckpointSettings, Checkpoints } from "@reins/workspace"
import {
  Extensions,
  layerJobs,
  ToolChoiceSettings,
  type ToolRegistry,
  builtins,
  layerEventHooks,
  layerSessionExtensions,
  layerToolHooks,
  layerToolRegistry,
  type Plugin,
  type ToolInfo
} from "@reins/tool"
import { Reducers, builtinReducers, type Reducer } from "@reins/reduce"
import { LanguageServers } from "@reins/lsp"
import { McpServers, McpSettings } from "@reins/mcp"
import { RetentionLive, spillDirectory, spillFolder, Truncate, TruncateSettings, settingsFromConfig } from "@reins/truncate"
import { protectedPaths } from "./Protected.ts"
import { layerTelemetry } from "./Telemetry.ts"
import { layerBusMetrics } from "./Metrics.ts"
import { layerHostTracer } from "./HostTracer.ts"
import { layerTraceFilter, traceLevelFromEnv, type TraceLevel } from "./TraceFilter.ts"
import * as os from "node:os"
import * as path from "node:path"
import { DATA_DIR_SECRETS } from "@reins/sandbox"
import { sandboxLayer } from "./SandboxPlaces.ts"

/** Everything a composed runtime offers to its caller. */
export type RuntimeServices =
  | McpServers
  | Sessions
  | SessionService
  | SessionStore
  | RunClaims
  | Grants
  | EventLog
  | PendingQuestions
  | EventAppender
  | Bus
  | Provider
  | ToolRegistry
  | Permission
  | Compaction

export interface RuntimeOptions {
  /** The project directory the agent works in. */
  readonly cwd: string
  /** Where the database and spill files live (the CLI passes `REINS_DATA_DIR`, else `~/.local/share/reins`: see `defaultDataDir`). */
  readonly dataDir: string
  readonly config?: Config
  readonly env?: Readonly<Record<string, string | undefined>>
  /** What `~` and `$HOME` mean in permission patterns and scanned commands (default the process's home directory). */
  readonly home?: string
  /**
   * Storage (sessions, run claims, grants, the event log over one database): default `Storage.layerFor` with
   * `database` — PostgreSQL for a postgres:// URL, else SQLite in `dataDir`; `Storage.layerMemory` keeps nothing.
   */
  readonly store?: Layer.Layer<Storage.Services, StoreError>
  /** The database URL the default store opens (a postgres:// URL); default `REINS_DATABASE_URL` of `env`, else SQLite in `dataDir`. */
  readonly database?: string
  /** The model provider; default the AI SDK provider layer. */
  readonly provider?: Layer.Layer<Provider>
  /** Tool definitions; default the built-ins. */
  readonly tools?: ReadonlyArray<Effect.Effect<ToolInfo, never, Permission | Truncate>>
  /** What "ask" becomes without a person; `yolo` allows everything. */
  readonly permission?: {
    readonly nonInteractive?: "allow" | "deny"
    readonly yolo?: boolean
    readonly prompter?: Prompter
    /** How long a question waits for a reply (ms) before the policy decides; overrides `permission_timeout`. */
    readonly timeoutMs?: number
  }
  /** Plugins given in code (hooks: `tool.before`, `tool.after`, `chat.params`, `event`), after those of `.reins/plugins`. */
  readonly plugins?: ReadonlyArray<Plugin>
  /** Output reducers tried before the built-ins (the plugin API for reducers). */
  readonly reducers?: ReadonlyArray<Reducer>
  /** OTLP export: default on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. */
  readonly telemetry?: Layer.Layer<never>
  /** What the spans show and where they go (docs/tracing.md). */
  readonly tracing?: {
    /** `default`: the GenAI spans (agent turn, model calls, tools, permission questions); `debug`: every span. Default `REINS_TRACE_LEVEL`. */
    readonly level?: TraceLevel
    /** Prompts, answers, tool arguments and results on the spans. Default `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. */
    readonly captureContent?: boolean
    /** Send the spans through the process's OpenTelemetry SDK, under its active span, instead of reins's own exporter. */
    readonly host?: boolean
    /** The AI SDK's own spans (a registered telemetry integration's), nested under each `chat` span. */
    readonly aiSdkSpans?: boolean
  }
  readonly version?: string
  /**
   * What the user decided about the project directory (the CLI asks; `reins trust`). Untrusted, its
   * `.reins/` plugins, tools and agents are not loaded (nor skills that bring scripts), and `restrict`
   * — its ask and deny rules — tightens the rules without loosening them. Default: trusted (a library
   * caller passes the config it chose). `explicit`: the user trusted it themselves (not merely nothing to trust);
   * only then do its own programs run as language servers (default: `trusted`).
   */
  readonly project?: { readonly trusted: boolean; readonly explicit?: boolean; readonly restrict?: PermissionConfig }
  /** `--sandbox MODE`: overrides `sandbox.mode` for this run. */
  readonly sandbox?: { readonly mode?: "auto" | "required" | "off" }
  /** API keys by provider id, used when neither reins.json nor `env` has one; default those `reins auth login` stored in `dataDir` (auth.json). */
  readonly storedKeys?: StoredKeys
  /**
   * `reins serve --runner HOST:PORT`: this runtime is a runner of the cluster on its PostgreSQL `database` (issue 28):
   * it runs the turns of the sessions it owns, taking their leases over from runners that lost them.
   */
  readonly cluster?: ClusterOptions
}

/** Permission's `QuestionStore` port over storage's `PendingQuestions`: a failure is logged, and the question stays this process's own. */
const storedQuestions = Layer.effect(
  PermissionQuestions,
  Effect.gen(function* () {
    const stored = yield* PendingQuestions
    const appender = yield* EventAppender
    const warn =
      <A>(fallback: A) =>
      (e: StoreError) =>
        Effect.as(Effect.logWarning(`Permission questions: ${e.message}`), fallback)
    return {
      put: (asked) =>
        Effect.gen(function* () {
          const rootSessionID = yield* appender.rootOf(asked.sessionID)
          const created = yield* Clock.currentTimeMillis
          yield* stored.put({ id: asked.id, sessionID: asked.sessionID, rootSessionID, time: { created }, asked })
        }).pipe(Effect.catch(warn(undefined))),
      remove: (id) => stored.remove(id).pipe(Effect.catch(warn(undefined))),
      // a session's own, and (a top-level session's) its sub-agents'
      list: (sessionID) =>
        Effect.all(sessionID === undefined ? [stored.list()] : [stored.list({ rootSessionID: sessionID }), stored.list({ sessionID })]).pipe(
          Effect.map((lists) => [...new Map(lists.flat().map((row) => [row.id, row] as const)).values()].sort((a, b) => a.time.created - b.time.created)),
          Effect.map((rows) => rows.map((row) => row.asked)),
          Effect.catch(warn([]))
        ),
      answer: (id, answer) => stored.answer(id, answer).pipe(Effect.catch(warn(false))),
      takeAnswers: (sessionID) =>
        stored.takeAnswers(sessionID).pipe(
          Effect.map((rows) => rows.flatMap((row) => (row.reply === undefined ? [] : [{ id: row.id, answer: row.reply }]))),
          Effect.catch(warn([]))
        )
    }
  })
)

/** Permission's `GrantStore` port over storage's `Grants`; a failed write keeps the grant for the session only. */
const projectGrants = Layer.effect(
  PermissionGrants,
  Effect.gen(function* () {
    const grants = yield* Grants
    const ids = yield* Ids
    return {
      load: (project: string) =>
        grants.list(project).pipe(
          Effect.map((saved) => saved.map((g) => ({ permission: g.permission, pattern: g.pattern, action: "allow" as const }))),
          Effect.catch((e) => Effect.as(Effect.logWarning(`Could not load saved permission grants: ${e.message}`), []))
        ),
      save: (project: string, rules: ReadonlyArray<{ readonly permission: string; readonly pattern: string }>) =>
        Effect.forEach(rules, (rule) =>
          Effect.flatMap(Effect.all([ids.next("grt"), Clock.currentTimeMillis]), ([id, created]) =>
            grants.add({ id, project, permission: rule.permission, pattern: rule.pattern, time: { created } })
          )
        ).pipe(
          Effect.asVoid,
          Effect.catch((e) => Effect.logWarning(`Could not save the permission grant (kept for this session only): ${e.message}`))
        )
    }
  })
)

/** The database recorded in a checkpoint store for sessions kept in a store passed to the runtime: never one a prune reads. */
const EXTERNAL_STORE = "a session store passed to the runtime"

/** Composes a runtime from options; each part can be swapped without touching the others. */
export const makeRuntime = (options: RuntimeOptions): Layer.Layer<RuntimeServices, StoreError | CompactionError | ConfigError> => {
  const config = options.config ?? {}
  const env = options.env ?? process.env
  const database = options.database ?? env.REINS_DATABASE_URL
  const home = options.home ?? os.homedir()
  const yolo = options.permission?.yolo ?? false
  const timeoutMs = options.permission?.timeoutMs ?? (config.permission_timeout !== undefined ? config.permission_timeout * 1000 : undefined)
  // Spill files live in the data dir, outside the worktree, one folder per session: a session reads
  // its own back without a prompt, any other session's asks, and nothing writes there but reins.
  const spill = spillDirectory(options.dataDir)
  // resolved once here: the rules of a session are asked for on every permission check
  const spillRoots = [...new Set([spill, realLocation(spill)])]
  const patternsUnder = (dirs: ReadonlyArray<string>) => dirs.flatMap((d) => [d, `${d}/*`])
  const spillRules = (sessionID: string) => {
    const own = patternsUnder(spillRoots.map((root) => spillFolder(root, sessionID)))
    return ["read", "grep", "glob", "list", "external_directory"].flatMap((permission) =>
      own.map((pattern) => ({ permission, pattern, action: "allow" as const }))
    )
  }
  const spillWrites = patternsUnder(spillRoots).map((pattern) => ({ permission: "edit", pattern, action: "deny" as const }))
  // reins's own secrets in the data dir (the stored API keys, the trust store, the servers' tokens): no tool reads or
  // writes them, not even under --yolo or after an "always" for the data dir (the OS sandbox hides them from bash)
  const secretRoots = [...new Set([options.dataDir, realLocation(options.dataDir)])].flatMap((root) => DATA_DIR_SECRETS.map((name) => path.join(root, name)))
  const secretRules = ["read", "grep", "glob", "list", "edit"].flatMap((permission) =>
    patternsUnder(secretRoots).map((pattern) => ({ permission, pattern, action: "deny" as const }))
  )
  const rules = yolo
    ? // --yolo allows every tool and lifts no part of the OS sandbox (`--sandbox off` does that)
      [
        ...defaultRules,
        { permission: "*", pattern: "*", action: "allow" as const },
        { permission: "sandbox", pattern: "*", action: "deny" as const },
        ...spillWrites,
        ...secretRules
      ]
    : [...defaultRules, ...fromConfig(config.permission, home), ...spillWrites, ...secretRules]
  // the built-in agents, those of ~/.config/reins/agents and .reins/agents, and `agent.<name>` (T19)
  const trusted = options.project?.trusted ?? true
  const agents = Layer.effect(Agents, Effect.map(loadAgents({ config: config.agent, cwd: options.cwd, home, trusted }), makeAgents))
  // editing what makes reins or git run code always asks (under --yolo: is denied)
  const protect = protectedPaths({
    cwd: options.cwd,
    home,
    configDir: userConfigDir(env, home),
    ...(env.REINS_CONFIG ? { configFile: path.resolve(options.cwd, env.REINS_CONFIG) } : {})
  })
  const restrict = options.project?.restrict !== undefined ? fromConfig(options.project.restrict, home) : []
  const settings = Layer.mergeAll(
    Layer.succeed(DataDir, options.dataDir),
    // the temporary files a reins killed half way left beside the files it wrote go; this process's are noted from now on
    Layer.effectDiscard(
      Effect.gen(function* () {
        noteTempFilesIn(options.dataDir)
        const removed = yield* Effect.sync(() => cleanTempFiles(options.dataDir))
        if (removed.length > 0)
          yield* Effect.logInfo(`Removed ${removed.length} temporary file(s) a reins process stopped half way left: ${removed.join(", ")}`)
      })
    ),
    Layer.succeed(WorkDir, options.cwd),
    // every command the agent runs goes through the OS sandbox (bubblewrap): the project writable, secrets hidden, no network
    sandboxLayer({
      cwd: options.cwd,
      home,
      dataDir: options.dataDir,
      config: { ...config.sandbox, ...(options.sandbox?.mode ? { mode: options.sandbox.mode } : {}) },
      rules: [...defaultRules, ...fromConfig(config.permission, home), ...restrict],
      env
    }),
    Layer.succeed(HomeDir, home),
    Layer.effect(
      PermissionSettings,
      Effect.map(
        Effect.service(Agents),
        (agents) =>
          ({
            rules,
            sessionRules: spillRules,
            // a session's agent (T19): its rules over these, and the grants of the session that started it
            agentOf: (sessionID: string) => {
              const entry = agents.of(sessionID)
              return entry && { rules: entry.agent.rules, ...(entry.parent !== undefined ? { parent: entry.parent } : {}) }
            },
            nonInteractive: yolo ? "allow" : (options.permission?.nonInteractive ?? "deny"),
            ...(options.permission?.prompter && !yolo ? { prompter: options.permission.prompter } : {}),
            ...(config.permission_mode ? { mode: config.permission_mode } : {}),
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            persist: config.permission_persist ?? "session",
            project: options.cwd,
            protect,
            yolo,
            ...(restrict.length > 0 ? { restrict } : {})
          }) satisfies PermissionSettings
      )
    ),
    Layer.effect(
      ProviderSettings,
      Effect.map(
        options.storedKeys !== undefined
          ? Effect.succeed(options.storedKeys)
          : readStoredKeys(options.dataDir).pipe(Effect.mapError((e) => new ConfigError({ file: authFile(options.dataDir), field: "", problem: e.message }))),
        (stored) => ({
          providers: config.provider ?? {},
          env,
          stored,
          ...(config.provider_timeout ? { timeout: config.provider_timeout } : {}),
          ...(config.variant !== undefined ? { variant: config.variant } : {})
        })
      )
    ),
    Layer.succeed(RetryPolicy, {
      attempts: config.retry?.attempts ?? 5,
      initialDelayMs: config.retry?.initial_delay_ms ?? 2_000,
      maxDelayMs: config.retry?.max_delay_ms ?? 30_000
    }),
    Layer.succeed(SessionSettings, config.agent?.steps !== undefined ? { maxSteps: config.agent.steps } : {}),
    Layer.succeed(BudgetSettings, config.budget ?? {}),
    Layer.succeed(RunSettings, runTimingFromEnv(env) ?? RunSettings.defaultValue()),
    // a runner's leases name it: whoever reads one (GET /session/{id}, a runner taking the session over) knows where it runs
    Layer.succeed(LeaseHolder, options.cluster === undefined ? LeaseHolder.defaultValue() : asRunner(options.cluster.runner.trim())),
    Layer.succeed(DoomLoopSettings, {
      identical: config.doom_loop?.identical ?? defaultDoomLoopLimits.identical,
      cycles: config.doom_loop?.cycles ?? defaultDoomLoopLimits.cycles,
      pairs: config.doom_loop?.pairs ?? defaultDoomLoopLimits.pairs
    }),
    Layer.succeed(TruncateSettings, settingsFromConfig(config.tool_output)),
    Layer.succeed(ToolChoiceSettings, { edit_tool: config.edit_tool ?? "auto" }),
    // a local MCP server's environment is drawn from `env`, not from the whole process
    Layer.succeed(McpSettings, { servers: config.mcp ?? {}, env, cwd: options.cwd }),
    Layer.succeed(Reducers, [...(options.reducers ?? []), ...builtinReducers]),
    // skills, tool and plugin files (T20), found once when the runtime starts; failures reported, the rest load
    layerSessionExtensions.pipe(
      Layer.provideMerge(Extensions.layer({ cwd: options.cwd, home, hooks: config.hooks, trusted, ...(options.plugins ? { plugins: options.plugins } : {}) }))
    ),
    // the `task` tool's port: its calls run on the runner the session service provides to each turn
    layerSubAgents
  ).pipe(Layer.provideMerge(agents))
  const core = Layer.mergeAll(
    Bus.layer,
    Ids.layer,
    options.store ?? Storage.layerFor({ url: database, dataDir: options.dataDir }),
    options.provider ?? Provider.layer
  )
  // The spill sweeper starts with the runtime: once at once, then hourly (SPEC T15).
  // the bus feeds reins's own metrics (tool durations, compactions, permission answers) when they are exported
  // the appender stores the bus's events in the event log (in batches; a step's before the step goes on)
  const guarded = Layer.mergeAll(
    Permission.layer.pipe(Layer.provide(Layer.merge(projectGrants, storedQuestions)), Layer.provideMerge(EventAppender.layer)),
    Truncate.layer,
    RetentionLive,
    layerBusMetrics,
    layerEventHooks
  ).pipe(Layer.provideMerge(core))
  const tools = layerToolRegistry(options.tools ?? builtins).pipe(
    // MCP servers start on the first turn (ToolRegistry.refresh), not when the runtime is built; closed with it
    Layer.provide(McpServers.dynamicTools),
    // todoread reads the session's last todowrite from the store
    Layer.provide(layerTodoLists),
    // bash's background jobs: killed, each with its whole process group, when the runtime closes (the TUI lists them)
    Layer.provideMerge(layerJobs()),
    // the edit tools ask language servers for new errors (started on the first file each serves, closed with the runtime)
    Layer.provide(LanguageServers.layer({ cwd: options.cwd, config: config.lsp, env, projectCode: options.project?.explicit ?? trusted })),
    Layer.provideMerge(McpServers.layer),
    // plugins' and config command hooks run around every tool, MCP servers' included
    Layer.provideMerge(layerToolHooks(config.hooks).pipe(Layer.provideMerge(guarded)))
  )
  // The summary template file named in config is read once, when the runtime starts.
  const compactionSettings = Layer.effect(CompactionSettings, loadSettings(config.compaction, options.cwd, userConfigDir(env, home)))
  const compaction = Compaction.layer.pipe(Layer.provide(compactionSettings), Layer.provideMerge(tools))
  // The session's parts: the claims of running sessions, the step loop, the step processor.
  // `agent.prompt` (a file or the text) is read once, when the runtime starts: the header stays byte-identical.
  const promptSettings = Layer.effect(
    PromptSettings,
    Effect.map(
      Effect.all([
        loadPromptSettings(config.agent?.prompt, options.cwd, home),
        loadInstructions(config.instructions, { cwd: options.cwd, home, configDir: userConfigDir(env, home) })
      ]),
      ([settings, instructions]) => ({ ...settings, ...(instructions.length > 0 ? { instructions } : {}) })
    )
  )
  // every step's changes to the project's files checkpointed (undo, redo), in the data dir
  // each store says which database's sessions name its copies (a prune reading another database leaves it alone); a
  // store passed in (a library's own) is one no prune reads
  const checkpointSettings = Layer.effect(
    CheckpointSettings,
    Effect.gen(function* () {
      const settings = yield* CheckpointSettings
      const identity = options.store === undefined ? databaseIdentity({ url: database, dataDir: options.dataDir, env }) : EXTERNAL_STORE
      return { ...settings, database: identity }
    })
  )
  const turns = Layer.mergeAll(SessionRuns.layer, Turn.layer.pipe(Layer.provide(Layer.merge(SessionProcessor.layer, promptSettings)))).pipe(
    Layer.provideMerge(Checkpoints.layer.pipe(Layer.provide(checkpointSettings)))
  )
  // `Sessions` (the use cases) shares the loop's SessionRuns: one registry of this process's holds
  const session = SessionService.layerWithRuns.pipe(Layer.provideMerge(turns), Layer.provideMerge(compaction))
  const exporter = options.telemetry ?? (options.tracing?.host ? layerHostTracer : layerTelemetry(env, options.version ?? "0.0.0"))
  // the exporter's tracer, filtered to the GenAI spans unless the level is debug
  const telemetry = layerTraceFilter(options.tracing?.level ?? traceLevelFromEnv(env)).pipe(Layer.provideMerge(exporter))
  const tracing = Layer.succeed(GenAiTracing, {
    captureContent: options.tracing?.captureContent ?? captureContentFromEnv(env),
    aiSdkSpans: options.tracing?.aiSdkSpans ?? false
  })
  const runtime = Sessions.layer
    .pipe(Layer.provideMerge(session))
    .pipe(Layer.provide(Layer.merge(settings, tracing)), Layer.provideMerge(agents), Layer.provideMerge(telemetry))
  if (options.cluster === undefined) return runtime
  const cluster = options.cluster
  // loaded only by a cluster runner: effect/cluster and its transport stay out of every other command's startup
  const runner = Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./ClusterRunner.ts")),
      (module) => module.clusterRunnerLayer(cluster, database, options.cwd)
    )
  )
  return runner.pipe(Layer.provideMerge(runtime))
}
