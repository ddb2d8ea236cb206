import { Schema } from "effect"

const Timeout = Schema.Int.check(Schema.isGreaterThan(0, { message: "Expected a timeout in milliseconds greater than 0" }))
const Strings = Schema.Record(Schema.String, Schema.String)

/** An MCP server reins starts itself and talks to over stdio. */
export const McpLocal = Schema.Struct({
  type: Schema.Literal("local"),
  /** The program and its arguments, e.g. `["bunx", "my-mcp-server"]`. */
  command: Schema.Array(Schema.String).check(Schema.isMinLength(1, { message: 'Expected "command" to name the program, e.g. ["bunx", "my-mcp-server"]' })),
  /** Added to a minimal environment (PATH, HOME, …), not to the whole of reins's own. */
  env: Schema.optional(Strings),
  enabled: Schema.optional(Schema.Boolean),
  /** How long connecting may take (ms, default 30000). */
  timeout: Schema.optional(Timeout)
})
export type McpLocal = typeof McpLocal.Type

/** An MCP server reached over HTTP: streamable HTTP, falling back to SSE. */
export const McpRemote = Schema.Struct({
  type: Schema.Literal("remote"),
  url: Schema.String.check(Schema.isPattern(/^https?:\/\//, { message: 'Expected "url" to start with http:// or https://' })),
  headers: Schema.optional(Strings),
  enabled: Schema.optional(Schema.Boolean),
  timeout: Schema.optional(Timeout)
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
