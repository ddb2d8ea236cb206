export * as Tool from "./Tool.ts"
export { ToolError, type ToolContext, type ToolResult, type Info as ToolInfo } from "./Tool.ts"
export * from "./Registry.ts"
export * from "./builtin/index.ts"
