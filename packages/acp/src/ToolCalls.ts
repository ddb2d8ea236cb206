// How a reins tool part is shown to an ACP client: its kind, title, locations, content and status.
import type { PlanEntry, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind } from "@agentclientprotocol/sdk"
import type { ToolPart, ToolState } from "@reins/domain"
import { diffTexts } from "@reins/tool"
import * as path from "node:path"

const KINDS: Readonly<Record<string, ToolKind>> = {
  read: "read",
  edit: "edit",
  write: "edit",
  apply_patch: "edit",
  glob: "search",
  grep: "search",
  list: "search",
  bash: "execute",
  job_output: "read",
  job_kill: "execute",
  task: "think",
  skill: "read",
  webfetch: "fetch",
  todowrite: "think",
  todo_write: "think"
}

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

/** The files a patch names, with what it does to each (its `*** Add/Update/Delete File:` and `*** Move to:` lines). */
const patchOps = (patchText: unknown) => {
  const ops: Array<{ readonly type: "add" | "update" | "delete"; readonly path: string; movePath?: string }> = []
  for (const line of (str(patchText) ?? "").split("\n")) {
    const op = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line.trim())
    if (op) ops.push({ type: op[1]!.toLowerCase() as "add" | "update" | "delete", path: op[2]!.trim() })
    const move = /^\*\*\* Move to: (.+)$/.exec(line.trim())
    if (move && ops.length > 0) ops[ops.length - 1]!.movePath = move[1]!.trim()
  }
  return ops
}

/** The ACP kind of a tool; a patch that only deletes is `delete`, one that only moves is `move`. */
export const toolKind = (tool: string, input: Record<string, unknown>): ToolKind => {
  if (tool === "apply_patch") {
    const ops = patchOps(input.patchText)
    if (ops.length > 0 && ops.every((op) => op.type === "delete")) return "delete"
    if (ops.length > 0 && ops.every((op) => op.movePath !== undefined)) return "move"
  }
  return KINDS[tool] ?? "other"
}

const absolute = (cwd: string, given: string) => path.resolve(cwd, given)

/** The files a call touches, absolute, with the line a read starts at. */
export const toolLocations = (tool: string, input: Record<string, unknown>, cwd: string): Array<ToolCallLocation> => {
  const file = str(input.filePath) ?? str(input.path)
  if (tool === "apply_patch")
    return patchOps(input.patchText)
      .flatMap((op) => [op.path, ...(op.movePath ? [op.movePath] : [])])
      .map((p) => ({ path: absolute(cwd, p) }))
  if (file === undefined) return []
  const offset = typeof input.offset === "number" && input.offset > 0 ? input.offset : undefined
  return [{ path: absolute(cwd, file), ...(offset !== undefined ? { line: offset } : {}) }]
}

/** A title for a call before the tool gave its own: what it runs or touches. */
export const toolTitle = (part: ToolPart, cwd: string): string => {
  const state = part.state
  if ((state.status === "running" || state.status === "completed") && state.title) return state.title
  const input = state.input
  const shown = (p: string) => {
    const rel = path.relative(cwd, absolute(cwd, p))
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p
  }
  switch (part.tool) {
    case "bash":
      return str(input.description) ?? str(input.command) ?? "bash"
    case "read":
    case "edit":
    case "write": {
      const file = str(input.filePath)
      return file ? `${part.tool[0]!.toUpperCase()}${part.tool.slice(1)} ${shown(file)}` : part.tool
    }
    case "apply_patch": {
      const ops = patchOps(input.patchText)
      return ops.length > 0 ? `Patch ${ops.map((op) => shown(op.path)).join(", ")}` : "apply_patch"
    }
    case "grep":
    case "glob":
      return str(input.pattern) ? `${part.tool} ${input.pattern as string}` : part.tool
    case "task":
      return str(input.description) ?? "task"
    default:
      return part.tool
  }
}

/** The ACP status of a tool state. */
export const toolStatus = (state: ToolState): ToolCallStatus =>
  state.status === "pending" ? "pending" : state.status === "running" ? "in_progress" : state.status === "completed" ? "completed" : "failed"

/** The diffs of a finished edit, write or apply_patch call, one per file. */
export const toolDiffs = (part: ToolPart, cwd: string): Array<ToolCallContent> => {
  const state = part.state
  if (state.status !== "completed") return []
  const input = state.input
  const meta = state.metadata
  if (part.tool === "edit") {
    const file = str(meta.filePath) ?? str(input.filePath)
    if (file === undefined) return []
    const oldString = typeof input.oldString === "string" ? input.oldString : ""
    return [
      {
        type: "diff",
        path: absolute(cwd, file),
        oldText: oldString === "" ? null : oldString,
        newText: typeof input.newString === "string" ? input.newString : ""
      }
    ]
  }
  if (part.tool === "write") {
    const file = str(meta.filePath) ?? str(input.filePath)
    if (file === undefined) return []
    const texts = meta.exists === true && typeof meta.diff === "string" ? diffTexts(meta.diff) : undefined
    return [
      {
        type: "diff",
        path: absolute(cwd, file),
        oldText: texts?.oldText ?? null,
        newText: texts?.newText ?? (typeof input.content === "string" ? input.content : "")
      }
    ]
  }
  if (part.tool === "apply_patch" && Array.isArray(meta.files)) {
    return meta.files.flatMap((f: unknown): Array<ToolCallContent> => {
      if (typeof f !== "object" || f === null) return []
      const file = f as { path?: unknown; movePath?: unknown; type?: unknown; diff?: unknown }
      const target = str(file.movePath) ?? str(file.path)
      if (target === undefined) return []
      const texts = typeof file.diff === "string" ? diffTexts(file.diff) : undefined
      return [{ type: "diff", path: absolute(cwd, target), oldText: file.type === "add" ? null : (texts?.oldText ?? ""), newText: texts?.newText ?? "" }]
    })
  }
  return []
}

/** What a finished call shows: its diffs, or its output (the error of a failed one) as text. */
export const toolContent = (part: ToolPart, cwd: string): Array<ToolCallContent> => {
  const state = part.state
  if (state.status === "error") return [{ type: "content", content: { type: "text", text: state.error } }]
  if (state.status !== "completed") return []
  const diffs = toolDiffs(part, cwd)
  if (diffs.length > 0) return diffs
  return state.output === "" ? [] : [{ type: "content", content: { type: "text", text: state.output } }]
}

/** The `tool_call` that announces a call. */
export const toolCall = (part: ToolPart, cwd: string): ToolCall => ({
  toolCallId: part.callID,
  title: toolTitle(part, cwd),
  kind: toolKind(part.tool, part.state.input),
  status: "pending",
  locations: toolLocations(part.tool, part.state.input, cwd),
  rawInput: part.state.input
})

/** The `tool_call_update` for a call's new state: its status, and once finished its content. */
export const toolCallUpdate = (part: ToolPart, cwd: string): ToolCallUpdate => {
  const state = part.state
  const done = state.status === "completed" || state.status === "error"
  return {
    toolCallId: part.callID,
    status: toolStatus(state),
    title: toolTitle(part, cwd),
    kind: toolKind(part.tool, state.input),
    locations: toolLocations(part.tool, state.input, cwd),
    rawInput: state.input,
    ...(done ? { content: toolContent(part, cwd) } : {}),
    ...(state.status === "completed" ? { rawOutput: { output: state.output, metadata: state.metadata } } : {})
  }
}

const PLAN_STATUSES = new Set(["pending", "in_progress", "completed"])
const PLAN_PRIORITIES = new Set(["high", "medium", "low"])

/**
 * A plan from a todo tool's input (`todos: [{ content, status, priority }]`: reins's `todowrite`, or a plugin
 * or MCP tool of that name and shape); a cancelled item is no longer part of it.
 */
export const planOf = (part: ToolPart): Array<PlanEntry> | undefined => {
  if (part.tool !== "todowrite" && part.tool !== "todo_write") return undefined
  const todos = part.state.input.todos
  if (!Array.isArray(todos)) return undefined
  return todos.flatMap((t: unknown): Array<PlanEntry> => {
    if (typeof t !== "object" || t === null) return []
    const todo = t as { content?: unknown; status?: unknown; priority?: unknown }
    const content = str(todo.content)
    if (content === undefined || todo.status === "cancelled") return []
    const status = typeof todo.status === "string" && PLAN_STATUSES.has(todo.status) ? (todo.status as PlanEntry["status"]) : "pending"
    const priority = typeof todo.priority === "string" && PLAN_PRIORITIES.has(todo.priority) ? (todo.priority as PlanEntry["priority"]) : "medium"
    return [{ content, status, priority }]
  })
}
