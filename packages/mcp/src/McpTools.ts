import { Effect } from "effect"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError as SdkError } from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { Attachment } from "@reins/domain"
import { Tool, ToolError, describeError, objectSchema, type ToolInfo } from "@reins/tool"

import { McpCallTimeout, toolId, type ListedTool } from "./McpNames.ts"

export { sanitizeName, toolId, type ListedTool } from "./McpNames.ts"

const ajv = new AjvJsonSchemaValidator()

/** Checks arguments against a server's JSON Schema; a schema the validator cannot compile is left to the server. */
const validatorFor = (schema: Record<string, unknown>): ((args: unknown) => ReadonlyArray<Tool.ArgumentIssue>) => {
  let check: ((input: unknown) => { valid: boolean; errorMessage?: string | undefined }) | undefined
  try {
    check = ajv.getValidator(schema as Parameters<typeof ajv.getValidator>[0])
  } catch {
    check = undefined
  }
  return (args) => {
    if (!check) return []
    const result = check(args)
    return result.valid ? [] : [{ message: result.errorMessage ?? "does not match the schema" }]
  }
}

interface ContentItem {
  readonly type: string
  readonly text?: string
  readonly data?: string
  readonly mimeType?: string
  readonly uri?: string
  readonly name?: string
  readonly resource?: { readonly uri: string; readonly text?: string; readonly blob?: string; readonly mimeType?: string }
}

/** A `tools/call` result as the model sees it: text joined, images as attachments, the rest noted. */
export const renderResult = (result: Record<string, unknown>) => {
  const items: ReadonlyArray<ContentItem> = Array.isArray(result.content) ? (result.content as ReadonlyArray<ContentItem>) : []
  const text: Array<string> = []
  const attachments: Array<Attachment> = []
  for (const item of items) {
    if (item.type === "text" && item.text !== undefined) text.push(item.text)
    else if (item.type === "image" && item.data !== undefined)
      attachments.push({ mime: item.mimeType ?? "image/png", url: `data:${item.mimeType ?? "image/png"};base64,${item.data}` })
    else if (item.type === "resource" && item.resource?.text !== undefined) text.push(item.resource.text)
    else if (item.type === "resource" && item.resource)
      text.push(`[resource ${item.resource.uri}${item.resource.mimeType ? ` (${item.resource.mimeType})` : ""}: binary, not shown]`)
    else if (item.type === "resource_link" && item.uri) text.push(`[resource ${item.name ?? ""} ${item.uri}]`.replace("  ", " "))
    else text.push(`[${item.type} content: not shown]`)
  }
  if (text.length === 0 && result.structuredContent !== undefined) text.push(JSON.stringify(result.structuredContent))
  return { output: text.join("\n"), attachments }
}

/** One server tool as a reins tool: validated, permission-checked (`<server>_<tool>`), truncated and traced like a built-in. */
export const defineTool = (server: string, client: Client, listed: ListedTool) => {
  const id = toolId(server, listed.name)
  const schema = objectSchema(listed.inputSchema)
  return Tool.defineJson(id, {
    description: listed.description?.trim() || `The ${listed.name} tool of the ${server} MCP server.`,
    parameters: { jsonSchema: schema, validate: validatorFor(schema) },
    truncate: "head",
    permissions: () => [{ permission: id, patterns: ["*"], always: ["*"], title: `${server}: ${listed.name}` }],
    execute: (args) =>
      Effect.gen(function* () {
        const callTimeout = yield* McpCallTimeout
        const result: Record<string, unknown> = yield* Effect.tryPromise({
          try: (signal) => client.callTool({ name: listed.name, arguments: args }, undefined, { signal, timeout: callTimeout }),
          catch: (e) =>
            e instanceof SdkError && e.code === ErrorCode.RequestTimeout
              ? new ToolError({
                  reason: "timeout",
                  message: `The ${server} MCP server did not answer the ${listed.name} call within ${callTimeout} ms. Try again with less to do, or go on without it.`
                })
              : new ToolError({ reason: "failed", message: `The ${server} MCP server could not run ${listed.name}: ${describeError(e)}` })
        })
        const { output, attachments } = renderResult(result)
        if (result.isError === true)
          return yield* new ToolError({ reason: "failed", message: output || `${listed.name} failed (the ${server} MCP server gave no reason)` })
        return {
          title: `${server}: ${listed.name}`,
          output,
          ...(attachments.length > 0 ? { attachments } : {}),
          metadata: { mcp: { server, tool: listed.name } }
        }
      })
  })
}

export type { ToolInfo }
