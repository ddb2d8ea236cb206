// Tool names, listings and settings of MCP servers: no SDK import, so the runtime can name tools without loading the SDK.
import { Context } from "effect"

/** How long one MCP tool call may take before the model is told the server did not answer (ms; the SDK's default). */
export const McpCallTimeout = Context.Reference<number>("reins/mcp/McpCallTimeout", { defaultValue: () => 60_000 })

/** What a server says about one of its tools (`tools/list`). */
export interface ListedTool {
  readonly name: string
  readonly description?: string | undefined
  readonly inputSchema: Record<string, unknown>
}

/** The longest tool name providers accept (OpenAI, Anthropic). */
const MAX_NAME = 64

/** A name made of the characters providers allow in tool names (`[A-Za-z0-9_-]`). */
export const sanitizeName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_")

/** The id a server's tool is offered under: `<server>_<tool>`, sanitised and at most 64 characters. */
export const toolId = (server: string, tool: string) => `${sanitizeName(server)}_${sanitizeName(tool)}`.slice(0, MAX_NAME)

/** The last line a server wrote to stderr (cut at 300 characters): usually the reason it stopped. */
export const lastLine = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .slice(-1)[0]
    ?.slice(0, 300) ?? ""
