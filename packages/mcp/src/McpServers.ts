import { Context, Effect, Layer, Option, Scope } from "effect"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Bus, type McpConfig } from "@reins/domain"
import type { Permission } from "@reins/permission"
import { Sandbox } from "@reins/sandbox"
import { DynamicTools, describeError, type ToolInfo } from "@reins/tool"
import type { Truncate } from "@reins/truncate"
import type { Connection } from "./McpConnect.ts"
import { McpError } from "./McpError.ts"
import { lastLine, toolId, type ListedTool } from "./McpNames.ts"

/**
 * The MCP SDK (its client, transports, zod schemas and ajv), imported only when a server is
 * started: a run with no MCP server configured never loads it (about 80 ms of module start-up).
 */
const loadSdk = async () => {
  const [{ connect }, { defineTool }, { ToolListChangedNotificationSchema }] = await Promise.all([
    import("./McpConnect.ts"),
    import("./McpTools.ts"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { connect, defineTool, ToolListChangedNotificationSchema }
}
let sdkLoading: ReturnType<typeof loadSdk> | undefined
/** The SDK's modules; one that cannot be loaded (a broken install) fails the server, not the turn, and is tried again next time. */
const sdk = (server: string) =>
  Effect.tryPromise({
    try: () => {
      const loading = (sdkLoading ??= loadSdk())
      loading.catch(() => {
        if (sdkLoading === loading) sdkLoading = undefined
      })
      return loading
    },
    catch: (e) =>
      new McpError({
        server,
        reason: "start",
        message: `MCP server "${server}" could not start: the MCP client did not load (${describeError(e)}); reinstall reins`
      })
  })

/** The servers of `mcp` in reins.json, and what a local one's environment is drawn from. */
export const McpSettings = Context.Reference<{
  readonly servers: McpConfig
  /** The runtime's environment: a local server gets only its base keys (PATH, HOME, …) plus its own `env`. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where local servers start. */
  readonly cwd: string
}>("reins/mcp/McpSettings", { defaultValue: () => ({ servers: {}, env: {}, cwd: "." }) })

/** One server as `reins mcp list` shows it. */
export interface ServerStatus {
  readonly name: string
  readonly type: "local" | "remote"
  readonly status: "connected" | "failed" | "disabled"
  /** Why it failed. */
  readonly error?: string
  /** stdio, streamable-http or sse, once connected. */
  readonly transport?: string
  /** A connected local server runs inside the OS sandbox. */
  readonly sandboxed?: boolean
  readonly tools: ReadonlyArray<{ readonly id: string; readonly name: string; readonly description: string }>
}

interface Live {
  readonly name: string
  readonly type: "local" | "remote"
  status: "connected" | "failed" | "disabled"
  error?: string
  connection?: Connection
  listed: ReadonlyArray<ListedTool>
  infos: ReadonlyArray<ToolInfo>
  /** The server said its tool list changed: listed again before the next step. */
  dirty: boolean
  /** Its failure was told (warning and `mcp.failed`): once per server. */
  reported: boolean
}

/** The MCP servers of a runtime: started on first use, all at once, closed with the runtime. */
export class McpServers extends Context.Service<
  McpServers,
  {
    /** Every connected server's tools (starting the servers on the first call); a list that changed is read again. */
    tools(sessionID?: string): Effect.Effect<ReadonlyArray<ToolInfo>>
    /** Each configured server's state (starting them on the first call). */
    readonly status: Effect.Effect<ReadonlyArray<ServerStatus>>
  }
>()("reins/mcp/McpServers") {
  /** The real servers, from `McpSettings`; their clients and children are closed when the layer's scope closes. */
  static readonly layer = Layer.effect(
    McpServers,
    Effect.gen(function* () {
      const settings = yield* McpSettings
      const bus = yield* Bus
      const scope = yield* Scope.Scope
      // what tools are built with: the runtime's permission, truncation, reducers and tracing settings
      const context = yield* Effect.context<Permission | Truncate>()
      // the runtime's OS sandbox, when there is one: local servers start inside it
      const sandbox = yield* Effect.serviceOption(Sandbox)
      let stopping = false
      const clients = new Set<Client>()
      yield* Scope.addFinalizer(
        scope,
        Effect.suspend(() => {
          stopping = true
          return Effect.forEach([...clients], (client) => Effect.promise(() => client.close().catch(() => undefined)), {
            concurrency: "unbounded",
            discard: true
          })
        })
      )
      const servers: Array<Live> = Object.entries(settings.servers).map(([name, config]) => ({
        name,
        type: config.type,
        status: config.enabled === false ? "disabled" : "failed",
        listed: [],
        infos: [],
        dirty: false,
        reported: false
      }))

      // told once: a warning (stderr in the CLI), and `mcp.failed` to the session whose turn found it
      const report = (live: Live, sessionID: string | undefined) =>
        Effect.suspend(() => {
          if (live.reported) return Effect.void
          live.reported = true
          const error = live.error ?? "unknown error"
          return Effect.logWarning(`${error}; going on without its tools`).pipe(
            Effect.andThen(sessionID === undefined ? Effect.void : bus.publish({ type: "mcp.failed", sessionID, server: live.name, error }))
          )
        })

      const fail = (live: Live, error: McpError) =>
        Effect.suspend(() => {
          live.status = "failed"
          live.error = error.message
          live.infos = []
          const client = live.connection?.client
          live.connection = undefined
          return client ? Effect.promise(() => client.close().catch(() => undefined)) : Effect.void
        })

      const list = (live: Live, client: Client) =>
        Effect.gen(function* () {
          live.dirty = false
          const listed: Array<ListedTool> = []
          let cursor: string | undefined
          do {
            const page = yield* Effect.tryPromise({
              try: () => client.listTools(cursor ? { cursor } : {}),
              catch: (e) =>
                new McpError({ server: live.name, reason: "list", message: `MCP server "${live.name}" could not list its tools: ${describeError(e)}` })
            })
            listed.push(...page.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> })))
            cursor = page.nextCursor
          } while (cursor)
          live.listed = listed
          const { defineTool } = yield* sdk(live.name)
          live.infos = yield* Effect.forEach(listed, (tool) => defineTool(live.name, client, tool).pipe(Effect.provideContext(context)))
        })

      const start = (live: Live) =>
        Effect.gen(function* () {
          const config = settings.servers[live.name]!
          const { connect, ToolListChangedNotificationSchema } = yield* sdk(live.name)
          const connection = yield* connect(live.name, config, {
            env: settings.env,
            cwd: settings.cwd,
            track: (client) => clients.add(client),
            ...(Option.isSome(sandbox) ? { sandbox: sandbox.value } : {})
          })
          live.connection = connection
          live.status = "connected"
          const client = connection.client
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
            live.dirty = true
          })
          // A server that stops while reins runs: noted here, told before the next step.
          client.onclose = () => {
            if (stopping || live.connection?.client !== client) return
            live.status = "failed"
            const tail = lastLine(connection.stderrTail())
            live.error = `MCP server "${live.name}" stopped${tail ? ` (stderr: ${tail})` : ""}`
            live.infos = []
            live.connection = undefined
          }
          yield* list(live, client)
        }).pipe(
          Effect.catch((error: McpError) => fail(live, error)),
          // stopped half-way (Ctrl+C on the first step): the next step starts the server again, so this
          // connection is closed now rather than left running beside the new one until reins exits
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              const client = live.connection?.client
              live.status = "failed"
              live.connection = undefined
              live.infos = []
              if (client) void client.close().catch(() => undefined)
            })
          )
        )

      // Once, on first use; every server at the same time, each within its own timeout.
      const startAll = yield* Effect.cached(
        Effect.forEach(
          servers.filter((live) => live.status !== "disabled"),
          (live) => start(live),
          { concurrency: "unbounded", discard: true }
        ).pipe(Effect.withSpan("McpServers.start"))
      )

      // Two tools whose ids come out the same (`a.b` and `a_b`, names cut at 64 characters) would be
      // one name twice in the request, which providers refuse: the first is kept, the other told once.
      const clashes = new Set<string>()
      const offered = Effect.gen(function* () {
        const byId = new Map<string, { readonly server: string; readonly name: string }>()
        const tools: Array<ToolInfo> = []
        for (const live of servers) {
          if (live.status !== "connected") continue
          for (const [i, info] of live.infos.entries()) {
            const name = live.listed[i]?.name ?? info.id
            const owner = byId.get(info.id)
            if (owner === undefined) {
              byId.set(info.id, { server: live.name, name })
              tools.push(info)
              continue
            }
            const clash = `${live.name}/${name}`
            if (clashes.has(clash)) continue
            clashes.add(clash)
            const fix = owner.server === live.name ? "" : " (rename one of the servers in reins.json to offer both)"
            yield* Effect.logWarning(
              `The ${name} tool of the MCP server "${live.name}" is left out: its id ${info.id} is taken by the ${owner.name} tool of "${owner.server}"${fix}`
            )
          }
        }
        return tools
      })

      const failed = (live: Live) => live.status === "failed"
      // a failure is told by the first step that finds it (`reins mcp list` shows it instead)
      const current = (sessionID: string | undefined, tell: boolean) =>
        Effect.gen(function* () {
          yield* startAll
          for (const live of servers) {
            if (live.status === "failed") {
              if (tell) yield* report(live, sessionID)
            } else if (live.status === "connected" && live.dirty && live.connection) {
              const client = live.connection.client
              yield* list(live, client).pipe(
                Effect.catch((error: McpError) => fail(live, error)),
                // interrupted half-way: the change is still to be read
                Effect.onInterrupt(() => Effect.sync(() => void (live.dirty = true)))
              )
              if (tell && failed(live)) yield* report(live, sessionID)
            }
          }
          return yield* offered
        })

      const status = Effect.map(current(undefined, false), () =>
        servers.map(
          (live): ServerStatus => ({
            name: live.name,
            type: live.type,
            status: live.status,
            ...(live.error !== undefined && live.status === "failed" ? { error: live.error } : {}),
            ...(live.connection ? { transport: live.connection.transport } : {}),
            ...(live.connection?.sandboxed !== undefined ? { sandboxed: live.connection.sandboxed } : {}),
            tools:
              live.status === "connected" ? live.listed.map((t) => ({ id: toolId(live.name, t.name), name: t.name, description: t.description ?? "" })) : []
          })
        )
      )

      return McpServers.of({ tools: (sessionID) => current(sessionID, true), status })
    })
  )

  /** Offers the servers' tools to the registry (`DynamicTools`), asked for before each step. */
  static readonly dynamicTools = Layer.effect(
    DynamicTools,
    Effect.gen(function* () {
      const servers = yield* McpServers
      return { current: (sessionID: string) => servers.tools(sessionID) }
    })
  )
}
