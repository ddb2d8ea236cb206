import { Schema } from "effect"

/** An MCP server that could not be reached or stopped answering; the message says which and why. */
export class McpError extends Schema.TaggedError<McpError>()("McpError", {
  server: Schema.String,
  reason: Schema.Literals(["start", "timeout", "closed", "list"]),
  message: Schema.String
}) {}
