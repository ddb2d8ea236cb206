// Session events for the TUI view's tests, shaped as the session publishes them (see packages/session/src/Processor.ts).
import type { AssistantMessage, SessionEvent, ToolPart, UserMessage } from "@reins/domain"

export const SESSION = "ses_1"
const zero = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

export const user = (id: string, text: string, metadata?: Record<string, unknown>): ReadonlyArray<SessionEvent> => {
  const message: UserMessage = { id, sessionID: SESSION, role: "user", time: { created: 1 }, ...(metadata ? { metadata } : {}) }
  return [
    { type: "message.updated", message },
    {
      type: "part.updated",
      part: { id: `${id}-p`, sessionID: SESSION, messageID: id, type: "text", text, ...(metadata?.compaction_continue ? { synthetic: true } : {}) }
    }
  ]
}

export const assistant = (id: string, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  id,
  sessionID: SESSION,
  role: "assistant",
  parentID: "msg_u",
  model: { providerID: "local", modelID: "scripted" },
  time: { created: 2 },
  usage: zero,
  cost: 0,
  ...extra
})

export const text = (id: string, messageID: string, body: string, end?: number): SessionEvent => ({
  type: "part.updated",
  part: { id, sessionID: SESSION, messageID, type: "text", text: body, time: { start: 10, ...(end !== undefined ? { end } : {}) } }
})

export const delta = (partID: string, d: string, partType: "text" | "reasoning" = "text"): SessionEvent => ({
  type: "part.delta",
  sessionID: SESSION,
  partID,
  partType,
  delta: d
})

export const tool = (id: string, messageID: string, name: string, state: ToolPart["state"]): ToolPart => ({
  id,
  sessionID: SESSION,
  messageID,
  type: "tool",
  callID: `call-${id}`,
  tool: name,
  state
})

export const updated = (part: ToolPart): SessionEvent => ({ type: "part.updated", part })

export const running = (input: Record<string, unknown>, start: number, metadata?: Record<string, unknown>): ToolPart["state"] => ({
  status: "running",
  input,
  time: { start },
  ...(metadata ? { metadata } : {})
})

export const completed = (input: Record<string, unknown>, output: string, metadata: Record<string, unknown>, start = 1000, end = 2200): ToolPart["state"] => ({
  status: "completed",
  input,
  output,
  title: "",
  metadata,
  time: { start, end }
})

export const EDIT_DIFF = [
  "--- /repo/src/a.ts",
  "+++ /repo/src/a.ts",
  "@@ -1,3 +1,3 @@",
  " const a = 1",
  "-const b = 2",
  "+const b = 3",
  " export { a, b }"
].join("\n")
