import { Duration, Effect } from "effect"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { McpServerConfig } from "@reins/domain"
import type { Sandbox } from "@reins/sandbox"
import { describeError } from "@reins/tool"
import { McpError } from "./McpError.ts"
import { lastLine } from "./McpNames.ts"

/** How long a server may take to connect when its config names no `timeout` (ms). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000

/** What a local server inherits from reins's environment; its config's `env` is added on top. */
export const BASE_ENV_KEYS: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TZ",
  "SYSTEMROOT",
  "APPDATA"
]

/** A local server's environment: the base keys present in `env`, then the config's own. */
export const serverEnv = (env: Readonly<Record<string, string | undefined>>, own: Readonly<Record<string, string>> | undefined): Record<string, string> => {
  const base: Record<string, string> = {}
  for (const key of BASE_ENV_KEYS) {
    const value = env[key]
    if (value !== undefined) base[key] = value
  }
  return { ...base, ...own }
}

/** A connected client, what it is talking to, and the last of a local server's stderr (for the reason it stopped). */
export interface Connection {
  readonly client: Client
  readonly transport: "stdio" | "streamable-http" | "sse"
  readonly stderrTail: () => string
  /** A local server that runs inside the OS sandbox. */
  readonly sandboxed?: boolean
}

const STDERR_TAIL = 2_000

/** The clients made while connecting: every one is closed when connecting fails or the runtime stops. */
export type Track = (client: Client) => void

const newClient = (track: Track) => {
  const client = new Client({ name: "reins", version: "0.1.0" }, { capabilities: {} })
  track(client)
  return client
}

const attempt = (server: string, client: Client, transport: Transport) =>
  Effect.tryPromise({
    try: () => client.connect(transport),
    catch: (e) => new McpError({ server, reason: "start", message: `MCP server "${server}" could not start: ${describeError(e)}` })
  })

/**
 * Connects to one server within its timeout: a local one is started over stdio with a minimal
 * environment; a remote one is tried with streamable HTTP, then SSE.
 */
export const connect = (
  server: string,
  config: McpServerConfig,
  options: {
    readonly env: Readonly<Record<string, string | undefined>>
    readonly cwd: string
    readonly track: Track
    /** The runtime's OS sandbox: a local server starts inside it (unless its config says `"sandbox": false`). */
    readonly sandbox?: Sandbox["Service"]
  }
) => {
  const timeout = config.timeout ?? DEFAULT_CONNECT_TIMEOUT_MS
  const run: Effect.Effect<Connection, McpError> =
    config.type === "local"
      ? Effect.gen(function* () {
          const env = serverEnv(options.env, config.env)
          const launch =
            options.sandbox === undefined
              ? { file: config.command[0]!, args: config.command.slice(1), env, sandboxed: false }
              : yield* options.sandbox
                  .wrapServer(config.command[0]!, config.command.slice(1), {
                    cwd: options.cwd,
                    env,
                    ...(config.sandbox !== undefined ? { sandbox: config.sandbox } : {})
                  })
                  .pipe(
                    Effect.mapError(
                      (e) =>
                        new McpError({
                          server,
                          reason: "start",
                          message: `MCP server "${server}" not started: ${e.message.replace("give this server", `give mcp.${server}`)}`
                        })
                    )
                  )
          let tail = ""
          const transport = new StdioClientTransport({ command: launch.file, args: [...launch.args], env: { ...launch.env }, cwd: options.cwd, stderr: "pipe" })
          transport.stderr?.on("data", (chunk: Buffer) => {
            tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL)
          })
          const client = newClient(options.track)
          const stderrTail = () => tail.trim()
          return yield* attempt(server, client, transport).pipe(
            Effect.mapError((e) =>
              // bwrap says it on stderr when the program is not there
              /\bENOENT\b/.test(e.message) || /execvp [^\n]*: No such file or directory/.test(stderrTail())
                ? new McpError({
                    ...e,
                    message: `MCP server "${server}" could not start: there is no program ${JSON.stringify(config.command[0])} (install it, or fix mcp.${server}.command in reins.json)`
                  })
                : stderrTail()
                  ? new McpError({ ...e, message: `${e.message} (stderr: ${lastLine(stderrTail())})` })
                  : e
            ),
            // a server that failed or timed out is killed at once: closing would wait for it to exit
            Effect.onError(() =>
              Effect.sync(() => {
                const pid = transport.pid
                if (pid !== null) process.kill(pid, "SIGKILL")
              }).pipe(Effect.ignore)
            ),
            Effect.as({ client, transport: "stdio" as const, stderrTail, sandboxed: launch.sandboxed })
          )
        })
      : Effect.suspend(() => {
          const url = new URL(config.url)
          const requestInit = { headers: { ...config.headers } }
          const streamable = newClient(options.track)
          return attempt(server, streamable, new StreamableHTTPClientTransport(url, { requestInit })).pipe(
            Effect.as({ client: streamable, transport: "streamable-http" as const, stderrTail: () => "" }),
            Effect.catch((first) => {
              // servers of the 2024-11-05 protocol speak SSE only
              const sse = newClient(options.track)
              return attempt(server, sse, new SSEClientTransport(url, { requestInit })).pipe(
                Effect.as({ client: sse, transport: "sse" as const, stderrTail: () => "" }),
                Effect.mapError(
                  (second) =>
                    new McpError({
                      server,
                      reason: "start",
                      message: `${first.message}; over SSE: ${second.message.replace(/^MCP server "[^"]*" could not start: /, "")}`
                    })
                )
              )
            })
          )
        })
  return run.pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(timeout),
      orElse: () =>
        Effect.fail(
          new McpError({
            server,
            reason: "timeout",
            message: `MCP server "${server}" did not connect within ${timeout} ms (raise "timeout" under mcp.${server} in reins.json if it is slow to start)`
          })
        )
    })
  )
}
