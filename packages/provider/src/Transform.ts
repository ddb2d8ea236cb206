import type { ModelMessage } from "ai"
import type { Message, Part, ProviderType } from "@reins/domain"

export interface MessageWithParts {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}

// Anthropic accepts only [a-zA-Z0-9_-] in tool-call ids (T22).
const sanitizeId = (id: string, type: ProviderType) => (type === "anthropic" ? id.replace(/[^a-zA-Z0-9_-]/g, "_") : id)

const toolOutput = (part: Extract<Part, { type: "tool" }>) => {
  switch (part.state.status) {
    case "completed":
      return { type: "text" as const, value: part.state.output }
    case "error":
      return { type: "error-text" as const, value: part.state.error }
    default:
      return { type: "error-text" as const, value: "The tool call was interrupted before it finished." }
  }
}

/**
 * Stored messages → AI SDK model messages, with the per-provider fixes in one place (T22):
 * no empty text content, tool results right after the assistant message that called them.
 */
export const toModelMessages = (messages: ReadonlyArray<MessageWithParts>, type: ProviderType): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  for (const { info, parts } of messages) {
    if (info.role === "user") {
      const content = parts.flatMap((p) => (p.type === "text" && p.text.trim() !== "" ? [{ type: "text" as const, text: p.text }] : []))
      if (content.length > 0) out.push({ role: "user", content })
      continue
    }
    const content: Array<
      | { type: "text"; text: string }
      | { type: "reasoning"; text: string }
      | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }
    > = []
    const results: Array<{ type: "tool-result"; toolCallId: string; toolName: string; output: ReturnType<typeof toolOutput> }> = []
    for (const part of parts) {
      if (part.type === "text" && part.text.trim() !== "") content.push({ type: "text", text: part.text })
      if (part.type === "reasoning" && part.text.trim() !== "") content.push({ type: "reasoning", text: part.text })
      if (part.type === "tool") {
        const toolCallId = sanitizeId(part.callID, type)
        content.push({ type: "tool-call", toolCallId, toolName: part.tool, input: part.state.input })
        results.push({ type: "tool-result", toolCallId, toolName: part.tool, output: toolOutput(part) })
      }
    }
    if (content.length > 0) out.push({ role: "assistant", content })
    if (results.length > 0) out.push({ role: "tool", content: results })
  }
  return out
}
