// reins mcp list: the MCP servers of reins.json, whether each connects, and the tools it offers.
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { McpServers, type ServerStatus } from "@reins/mcp"
import { makeRuntime } from "@reins/runtime"
import { Storage } from "@reins/storage"
import { fromRuntimeError } from "../CliError.ts"
import { loadSetup, runtimeProject } from "../Setup.ts"
import { VERSION } from "../version.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))

const NONE =
  'No MCP servers configured. Add them under "mcp" in reins.json, e.g. { "mcp": { "docs": { "type": "local", "command": ["bunx", "my-mcp-server"] } } }.'

const statusText = (server: ServerStatus) =>
  server.status === "connected"
    ? `connected (${server.transport ?? server.type}${server.sandboxed ? ", sandboxed" : ""})`
    : server.status === "failed"
      ? `failed: ${server.error ?? "unknown error"}`
      : "disabled"

/** One block per server: name, type and status, then its tools as offered to the model. */
export const renderServers = (servers: ReadonlyArray<ServerStatus>) =>
  servers
    .map((server) => {
      const head = `${server.name}  ${server.type}  ${statusText(server)}`
      if (server.status !== "connected") return head
      if (server.tools.length === 0) return `${head}\n  (no tools)`
      const width = Math.max(...server.tools.map((t) => t.id.length))
      return [head, ...server.tools.map((t) => `  ${t.id.padEnd(width)}  ${t.description.split("\n", 1)[0]!.slice(0, 100)}`.trimEnd())].join("\n")
    })
    .join("\n\n")

const list = Command.make("list", { format }, ({ format }) =>
  Effect.gen(function* () {
    // listing starts the servers: an untrusted project's are named, not started
    const setup = yield* loadSetup({ notice: false })
    const configured = Object.keys(setup.config.mcp ?? {})
    const untrusted = Object.keys(setup.project.config.mcp ?? {}).filter((name) => !configured.includes(name))
    const notStarted = untrusted.map((name) => `${name}  not started: ${setup.cwd} is not trusted (reins trust starts the project's MCP servers)`)
    if (configured.length === 0) {
      if (format === "json") return yield* Console.log(JSON.stringify({ servers: [], untrusted }, null, 2))
      return yield* Console.log(notStarted.length > 0 ? notStarted.join("\n") : NONE)
    }
    // connecting is the check: every enabled server is started (concurrently), asked for its tools, closed
    const layer = makeRuntime({
      cwd: setup.cwd,
      dataDir: setup.dataDir,
      config: setup.config,
      env: setup.env,
      storedKeys: setup.storedKeys,
      version: VERSION,
      project: runtimeProject(setup),
      store: Storage.layerMemory,
      permission: { nonInteractive: "deny" }
    })
    const servers = yield* Effect.gen(function* () {
      const mcp = yield* McpServers
      return yield* mcp.status
    }).pipe(Effect.provide(layer), Effect.scoped, Effect.mapError(fromRuntimeError))
    if (format === "json") return yield* Console.log(JSON.stringify({ servers, untrusted }, null, 2))
    yield* Console.log([renderServers(servers), ...notStarted].join("\n\n"))
  })
).pipe(Command.withDescription("List the MCP servers of reins.json: status (connected, failed with the reason, disabled) and tools"))

/** `reins mcp`: the MCP servers reins connects to. */
export const mcp = Command.make("mcp").pipe(Command.withDescription("MCP servers: reins mcp list"), Command.withSubcommands([list]))
