import { emptyUsage, type AssistantMessage, type Part, type UserMessage } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"

export const SESSION = "ses_test"

export interface ToolSpec {
  readonly tool: string
  readonly output?: string
  readonly input?: Record<string, unknown>
  readonly status?: "completed" | "error" | "running"
  readonly compacted?: number
  readonly pruned?: string
}

export interface AssistantSpec {
  readonly text?: string
  readonly tools?: ReadonlyArray<ToolSpec>
  readonly finish?: string
  readonly error?: { reason: string; message: string }
  readonly summary?: AssistantMessage["summary"]
  readonly completed?: boolean
}

/** Builds a history with ascending ids (msg_0001, prt_0002, …), as the store would order it. */
export const history = () => {
  let seq = 0
  const next = (prefix: string) => `${prefix}_${String(++seq).padStart(4, "0")}`
  const messages: Array<MessageWithParts> = []
  let lastUser = ""
  const base = (messageID: string) => ({ id: next("prt"), sessionID: SESSION, messageID })
  return {
    messages,
    user(text: string, options: { metadata?: Record<string, unknown>; files?: ReadonlyArray<{ mime: string; filename?: string; url?: string }> } = {}) {
      const id = next("msg")
      const info: UserMessage = { id, sessionID: SESSION, role: "user", time: { created: seq }, ...(options.metadata ? { metadata: options.metadata } : {}) }
      const parts: Array<Part> = []
      if (text !== "") parts.push({ ...base(id), type: "text", text })
      for (const f of options.files ?? []) {
        parts.push({
          ...base(id),
          type: "file",
          mime: f.mime,
          url: f.url ?? "data:application/octet-stream;base64,AAAA",
          ...(f.filename ? { filename: f.filename } : {})
        })
      }
      messages.push({ info, parts })
      lastUser = id
      return id
    },
    assistant(spec: AssistantSpec = {}) {
      const id = next("msg")
      const info: AssistantMessage = {
        id,
        sessionID: SESSION,
        role: "assistant",
        parentID: lastUser,
        model: { providerID: "local", modelID: "m" },
        time: { created: seq, ...(spec.completed === false ? {} : { completed: seq }) },
        finish: spec.finish ?? (spec.tools?.length ? "tool-calls" : "stop"),
        ...(spec.error ? { error: spec.error } : {}),
        usage: emptyUsage,
        cost: 0,
        ...(spec.summary ? { summary: spec.summary } : {})
      }
      const parts: Array<Part> = []
      if (spec.text !== undefined) parts.push({ ...base(id), type: "text", text: spec.text })
      for (const t of spec.tools ?? []) {
        const input = t.input ?? { command: t.tool }
        const p = base(id)
        const callID = `call_${p.id}`
        if (t.status === "error")
          parts.push({ ...p, type: "tool", callID, tool: t.tool, state: { status: "error", input, error: t.output ?? "failed", time: { start: 1, end: 2 } } })
        else if (t.status === "running") parts.push({ ...p, type: "tool", callID, tool: t.tool, state: { status: "running", input, time: { start: 1 } } })
        else
          parts.push({
            ...p,
            type: "tool",
            callID,
            tool: t.tool,
            state: {
              status: "completed",
              input,
              output: t.output ?? "ok",
              title: t.tool,
              metadata: {},
              time: { start: 1, end: 2, ...(t.compacted !== undefined ? { compacted: t.compacted } : {}) },
              ...(t.pruned !== undefined ? { pruned: t.pruned } : {})
            }
          })
      }
      messages.push({ info, parts })
      return id
    }
  }
}

/** The completed tool parts of a history, by tool output. */
export const toolParts = (messages: ReadonlyArray<MessageWithParts>) => messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p] : [])))

/** `n` numbered lines. */
export const lines = (n: number, label = "line") => Array.from({ length: n }, (_, i) => `${label} ${i + 1}`).join("\n")
