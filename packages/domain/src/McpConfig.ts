import { Schema } from "effect"

const Timeout = Schema.Int.check(Schema.isGreaterThan(0, { message: "Expected a timeout in milliseconds greater than 0" }))
const Strings = Schema.Record(Schema.String, Schema.String)

/**
 * A local server's OS sandbox: `false` runs it outside (from a project's config, that needs trust), or
 * what it may reach besides the defaults (the network: `all` unless `none`; more writable directories).
 */
export const McpSandbox = Schema.Union([
  Schema.Literal(false),
  Schema.Struct({
    network: Schema.optional(Schema.Literals(["none", "all"])).annotate({ description: "The server's network: all (the default) or none." }),
    writable: Schema.optional(Schema.Array(Schema.String)).annotate({ description: "More directories the server may write, besides the project." })
  })
]).annotate({ message: 'Expected "sandbox" to be false or { "network": "none" | "all", "writable": [...] }' })
export type McpSandbox = typeof McpSandbox.Type

/** An MCP server reins starts itself and talks to over stdio. */
export const McpLocal = Schema.Struct({
  type: Schema.Literal("local").annotate({ description: "local: reins starts the server and talks to it over stdio." }),
  /** The program and its arguments, e.g. `["bunx", "my-mcp-server"]`. */
  command: Schema.Array(Schema.String)
    .check(Schema.isMinLength(1, { message: 'Expected "command" to name the program, e.g. ["bunx", "my-mcp-server"]' }))
    .annotate({ description: 'The program and its arguments, e.g. ["bunx", "my-mcp-server"].' }),
  /** Added to a minimal environment (PATH, HOME, …), not to the whole of reins's own. */
  env: Schema.optional(Strings).annotate({
    description: "Variables added to the server's minimal environment (PATH, HOME, …); your keys are not passed otherwise."
  }),
  enabled: Schema.optional(Schema.Boolean).annotate({ description: "false keeps the server off (default true)." }),
  /** How long connecting may take (ms, default 30000). */
  timeout: Schema.optional(Timeout).annotate({ description: "Milliseconds connecting may take (default 30000)." }),
  /** It runs in the OS sandbox (the project writable, secrets hidden, the network on); `false` opts out. */
  sandbox: Schema.optional(McpSandbox).annotate({
    description: "The server runs in the OS sandbox (the project writable, secrets hidden, the network on); false runs it outside."
  })
})
export type McpLocal = typeof McpLocal.Type

/** An MCP server reached over HTTP: streamable HTTP, falling back to SSE. */
export const McpRemote = Schema.Struct({
  type: Schema.Literal("remote").annotate({ description: "remote: reached over streamable HTTP, falling back to SSE." }),
  url: Schema.String.check(Schema.isPattern(/^https?:\/\//u, { message: 'Expected "url" to start with http:// or https://' })).annotate({
    description: "The server's URL (http:// or https://)."
  }),
  headers: Schema.optional(Strings).annotate({ description: "HTTP headers sent with every request (e.g. Authorization)." }),
  enabled: Schema.optional(Schema.Boolean).annotate({ description: "false keeps the server off (default true)." }),
  timeout: Schema.optional(Timeout).annotate({ description: "Milliseconds connecting may take (default 30000)." })
})
export type McpRemote = typeof McpRemote.Type

/** One entry of `mcp` in `reins.json`. */
export const McpServerConfig = Schema.Union([McpLocal, McpRemote]).annotate({
  message: 'Expected an MCP server: { "type": "local", "command": [...] } or { "type": "remote", "url": "..." }'
})
export type McpServerConfig = typeof McpServerConfig.Type

/** `mcp` in `reins.json`: servers by name; their tools are offered as `<name>_<tool>`. */
export const McpConfig = Schema.Record(Schema.String, McpServerConfig)
export type McpConfig = typeof McpConfig.Type
