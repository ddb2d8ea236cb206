import type { AssistantModelMessage, FilePart, ModelMessage, TextPart, ToolCallPart, ToolResultPart } from "ai"
import type { Message, MessageWithParts, ModelRef, Part, ProviderType } from "@reins/domain"
import { toolMediaMessage, withToolMedia } from "./Attachments.ts"

type UserContent = TextPart | FilePart
type SdkReasoningPart = Extract<Exclude<AssistantModelMessage["content"], string>[number], { type: "reasoning" }>
type AssistantContent = TextPart | SdkReasoningPart | ToolCallPart
type ToolPart = Extract<Part, { type: "tool" }>

export type { MessageWithParts }

/**
 * Stored messages → AI SDK model messages for one provider, with every per-provider fix in this
 * module (T22):
 * - all: no empty text; tool results right after the assistant message that called them;
 *   reasoning replayed with its provider metadata (Anthropic's thinking signature or redacted
 *   thinking, OpenAI's encrypted reasoning) only to the model that produced it, dropped for any other;
 * - Anthropic: tool-call ids limited to `[a-zA-Z0-9_-]`, the same in the call and its result; no
 *   empty text, and no reasoning without its signature (or redacted data); with thinking on, a tool
 *   loop whose assistant message has no thinking (another model's, or made without thinking) is
 *   closed by an assistant "Done." before the next user message: Anthropic refuses a final
 *   assistant message with tool calls and no thinking block while thinking is on;
 * - Mistral: tool-call ids of exactly 9 letters and digits; a tool message never directly followed
 *   by a user message (an assistant "Done." goes between, as opencode does);
 * - Gemini: system messages only at the start (merged into one there); a tool call's thought
 *   signature replayed to the model that made it.
 */
export const toModelMessages = (
  messages: ReadonlyArray<MessageWithParts>,
  type: ProviderType,
  model?: ModelRef,
  call: { readonly thinking?: boolean } = {}
): Array<ModelMessage> => {
  const out = messages.flatMap((message) => modelMessagesOf(message, type, model))
  switch (type) {
    case "mistral":
      return doneBetweenToolAndUser(out)
    case "anthropic":
    case "amazon-bedrock":
      return call.thinking === true ? doneBetweenToolAndUser(out, unthought) : out
    case "google":
      return systemFirst(out)
    default:
      return out
  }
}

/** What the model sees of a pruned tool output when no lines were kept. */
export const prunedPlaceholder = (tool: string) => `[Old ${tool} tool result content cleared to save context]`

/** Anthropic accepts only `[a-zA-Z0-9_-]` in tool-call ids. */
export const anthropicToolCallId = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, "_")

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

/**
 * Mistral accepts only tool-call ids of exactly 9 letters and digits. Another id is hashed to one
 * (the same every time, so a call and its result agree; two ids rarely share one, unlike cutting
 * `toolu_01…` ids short).
 */
export const mistralToolCallId = (id: string) => {
  if (/^[a-zA-Z0-9]{9}$/.test(id)) return id
  // FNV-1a, 64 bits
  let h = 0xcbf29ce484222325n
  for (const byte of new TextEncoder().encode(id)) h = BigInt.asUintN(64, (h ^ BigInt(byte)) * 0x100000001b3n)
  let out = ""
  for (let i = 0; i < 9; i++) {
    out += ALPHANUMERIC[Number(h % 62n)]
    h /= 62n
  }
  return out
}

const toolCallId = (id: string, type: ProviderType) => (type === "anthropic" ? anthropicToolCallId(id) : type === "mistral" ? mistralToolCallId(id) : id)

/**
 * A tool message directly followed by a user message gets an assistant "Done." between them (Mistral
 * always; Anthropic with thinking on when `when` says so of the assistant message that made the calls).
 */
export const doneBetweenToolAndUser = (
  messages: ReadonlyArray<ModelMessage>,
  when: (caller: ModelMessage | undefined) => boolean = () => true
): Array<ModelMessage> =>
  messages.flatMap((message, i) =>
    message.role === "tool" && messages[i + 1]?.role === "user" && when(messages[i - 1])
      ? [message, { role: "assistant" as const, content: [{ type: "text" as const, text: "Done." }] }]
      : [message]
  )

/** An assistant message with no reasoning in it. */
const unthought = (message: ModelMessage | undefined) =>
  message?.role === "assistant" && (typeof message.content === "string" || !message.content.some((c) => c.type === "reasoning"))

/** Gemini: system messages only at the start: any later one is merged into the first. */
export const systemFirst = (messages: ReadonlyArray<ModelMessage>): Array<ModelMessage> => {
  const system = messages.flatMap((m) => (m.role === "system" ? [m] : []))
  const leading = messages.findIndex((m) => m.role !== "system")
  if (system.length === 0 || (system.length <= 1 && (leading === -1 || leading === system.length))) return [...messages]
  const rest = messages.filter((m) => m.role !== "system")
  return [{ role: "system", content: system.map((m) => m.content).join("\n\n") }, ...rest]
}

/** Whether the stored assistant message was made by this model (same provider and model id; the variant does not matter). */
const sameModel = (info: Message, model: ModelRef | undefined) =>
  model === undefined || (info.role === "assistant" && info.model.providerID === model.providerID && info.model.modelID === model.modelID)

const toolOutput = (part: ToolPart) => {
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

// Kept per message while the message is: a turn that keeps its messages in memory across steps
// passes its old ones as the same objects, so a step converts only what is new.
const converted = new WeakMap<MessageWithParts, { readonly key: string; readonly out: ReadonlyArray<ModelMessage> }>()

const modelMessagesOf = (message: MessageWithParts, type: ProviderType, model: ModelRef | undefined): ReadonlyArray<ModelMessage> => {
  const key = model === undefined ? type : `${type}|${model.providerID}/${model.modelID}`
  const known = converted.get(message)
  if (known !== undefined && known.key === key) return known.out
  const out = convert(message, type, model)
  converted.set(message, { key, out })
  return out
}

const signed = (metadata: Record<string, unknown> | undefined) => {
  const anthropic = metadata?.anthropic
  return typeof anthropic === "object" && anthropic !== null && ("signature" in anthropic || "redactedData" in anthropic)
}

/**
 * A stored reasoning part as the model sees it: with its metadata to the model that made it; nothing
 * to another (its signature or encrypted content means nothing there, and its text would be shown
 * as if the new model had thought it). Empty reasoning without metadata is dropped.
 */
const reasoning = (part: Extract<Part, { type: "reasoning" }>, type: ProviderType, mine: boolean): Array<SdkReasoningPart> => {
  if (!mine) return []
  const metadata = part.providerMetadata !== undefined && Object.keys(part.providerMetadata).length > 0 ? part.providerMetadata : undefined
  if (part.text.trim() === "" && metadata === undefined) return []
  // Anthropic refuses thinking without its signature (a step cut off before it came)
  if (type === "anthropic" && !signed(metadata)) return []
  return [{ type: "reasoning", text: part.text, ...(metadata ? { providerOptions: metadata as SdkReasoningPart["providerOptions"] } : {}) }]
}

const convert = ({ info, parts }: MessageWithParts, type: ProviderType, model: ModelRef | undefined): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  if (info.role === "user") {
    const content = parts.flatMap(
      (p): Array<UserContent> =>
        p.type === "text" && p.text.trim() !== ""
          ? [{ type: "text" as const, text: p.text }]
          : p.type === "file"
            ? [{ type: "file" as const, data: p.url, mediaType: p.mime, ...(p.filename !== undefined ? { filename: p.filename } : {}) }]
            : []
    )
    if (content.length > 0) out.push({ role: "user", content })
    return out
  }
  const mine = sameModel(info, model)
  const content: Array<AssistantContent> = []
  const results: Array<ToolResultPart> = []
  for (const part of parts) {
    if (part.type === "text" && part.text.trim() !== "") content.push({ type: "text", text: part.text })
    if (part.type === "reasoning") content.push(...reasoning(part, type, mine))
    if (part.type === "tool") {
      const id = toolCallId(part.callID, type)
      const replayed = mine && type === "google" ? part.providerMetadata : undefined
      content.push({
        type: "tool-call",
        toolCallId: id,
        toolName: part.tool,
        input: part.state.input,
        ...(replayed ? { providerOptions: replayed as ToolCallPart["providerOptions"] } : {})
      })
      results.push({ type: "tool-result", toolCallId: id, toolName: part.tool, output: withToolMedia(toolOutput(part), part, type) })
    }
  }
  if (content.length > 0) out.push({ role: "assistant", content })
  if (results.length > 0) out.push({ role: "tool", content: results }, ...toolMediaMessage(parts, type))
  return out
}
