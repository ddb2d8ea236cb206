/**
 * The module that tool and plugin files in `.reins/tools/` and `.reins/plugins/` import. Inside reins the
 * loader serves `@reins/plugin` itself (packages/tool/src/plugin/Loader.ts: the runtime's own `Tool`,
 * `ToolError`, `Schema` and `Effect`), so this package is only needed for the types
 * (`npm i -D @reins/plugin`) and for running such a file outside reins: it exports the same things.
 */
import { Tool as Tools, ToolError } from "@reins/tool"

export { Effect, Schema } from "effect"
export { ToolError }
export type {
  AfterDecision,
  BeforeDecision,
  ChatParams,
  ChatParamsInput,
  HookCall,
  HookResult,
  PlainContext,
  PlainTool,
  Plugin,
  PluginContext,
  ToolContext,
  ToolResult
} from "@reins/tool"

/** `Tool.define` makes a tool (argument decoding, permission, truncation, a span); `Tool.render` fills a `{{name}}` template. */
export const Tool: { readonly define: typeof Tools.define; readonly render: typeof Tools.render } = { define: Tools.define, render: Tools.render }
