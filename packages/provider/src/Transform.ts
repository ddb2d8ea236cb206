import type { FilePart, ModelMessage, TextPart } from "ai"
import type { Message, Part, ProviderType } from "@reins/domain"

type UserContent = TextPart | FilePart

export interface MessageWithParts {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}

// Anthropic accepts only [a-zA-Z0-9_-] in tool-call ids (T22).
const sanitizeId = (id: string, type: ProviderType) => (type === "anthropic" ? id.replace(/[^a-zA-Z0-9_-]/g, "_") : id)

/** What the model sees of a pruned tool output when no lines were kept. */
export const prunedPlaceholder = (tool: string) => `[Old ${tool} tool result content cleared to save context]`

const toolOutput = (part: Extract<Part, { type: "tool" }>) => {
  switch (part.state.status) {
    case "completed":
      // A pruned output (T9) is shown as its placeholder or kept lines; the store keeps the whole.
      if (part.state.time.compacted !== undefined) return { type: "text" as const, value: part.state.pruned ?? prunedPlaceholder(part.tool) }
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
export const toModelMessages = (messages: ReadonlyArray<MessageWithParts>, type: ProviderType): Array<ModelMessage> =>
  messages.flatMap((message) => modelMessagesOf(message, type))

// Kept per message while the message is: a turn that keeps its messages in memory across steps
// passes its old ones as the same objects, so a step converts only what is new.
const converted = new WeakMap<MessageWithParts, { readonly type: ProviderType; readonly out: ReadonlyArray<ModelMessage> }>()

const modelMessagesOf = (message: MessageWithParts, type: ProviderType): ReadonlyArray<ModelMessage> => {
  const known = converted.get(message)
  if (known !== undefined && known.type === type) return known.out
  const out = convert(message, type)
  converted.set(message, { type, out })
  return out
}

const convert = ({ info, parts }: MessageWithParts, type: ProviderType): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  if (info.role === "user") {
    const content = parts.flatMap((p): Array<UserContent> =>
      p.type === "text" && p.text.trim() !== ""
        ? [{ type: "text" as const, text: p.text }]
        : p.type === "file"
          ? [{ type: "file" as const, data: p.url, mediaType: p.mime, ...(p.filename !== undefined ? { filename: p.filename } : {}) }]
          : []
    )
    if (content.length > 0) out.push({ role: "user", content })
    return out
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
  return out
}
