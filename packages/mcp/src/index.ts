export * from "./McpError.ts"
export * from "./McpNames.ts"
export * from "./McpServers.ts"
// The SDK-backed modules are not re-exported: importing them loads the MCP SDK (see McpServers' lazy import).
export type { Connection, Track } from "./McpConnect.ts"
