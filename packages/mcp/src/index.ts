export * from "./McpError.ts"
export * from "./McpTools.ts"
export * from "./McpConnect.ts"
export * from "./McpServers.ts"
