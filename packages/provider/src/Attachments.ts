import type { FilePart as SdkFilePart, ModelMessage, TextPart as SdkTextPart, ToolResultPart } from "ai"
import type { Attachment, Part, ProviderType, ToolPart } from "@reins/domain"
import type { MessageWithParts } from "./Transform.ts"

/** Whether an attachment is an image (sent as one only to models that take images). */
export const isImage = (mime: string) => mime.startsWith("image/")

/** Whether an attachment is a text file (always sent, as its text under its path). */
export const isText = (mime: string) => mime.startsWith("text/")

/** The text of a text attachment's data: URL. */
export const attachmentText = (url: string): string => {
  const comma = url.indexOf(",")
  if (!url.startsWith("data:") || comma < 0) return ""
  const body = url.slice(comma + 1)
  return url.slice(0, comma).endsWith(";base64") ? Buffer.from(body, "base64").toString("utf8") : decodeURIComponent(body)
}

/** A text file as the model reads it: its path, then its content. */
export const inlinedText = (filename: string | undefined, url: string) =>
  `<file path="${filename ?? "unnamed"}">\n${attachmentText(url).replace(/\n$/, "")}\n</file>`

/** What a model that takes no images sees instead of one. */
export const imageNote = (filename: string | undefined, mime: string) =>
  `[Image ${filename ?? "unnamed"} (${mime}) not shown: this model does not accept images.]`

const TOOL_IMAGE_NOTE = "(The image is not shown: this model does not accept images. Describe what you need from it to the user, or use another tool.)"

// Kept per message (and per answer to "takes images") while the message is, so the same stored
// message gives the same object every step and Transform's per-message cache keeps working.
const shaped = new WeakMap<MessageWithParts, { readonly images: boolean; readonly out: MessageWithParts }>()

/**
 * Messages as one model may see them: a text file attached to a user message becomes its text
 * under its path (every provider takes text); for a model that takes no images, an attached image
 * becomes a note, and a tool's images (read of a PNG) are left out with a note in its output.
 * Unchanged messages are returned as they are.
 */
export const forModel = (messages: ReadonlyArray<MessageWithParts>, images: boolean): ReadonlyArray<MessageWithParts> =>
  messages.map((message) => {
    const known = shaped.get(message)
    if (known !== undefined && known.images === images) return known.out
    const out = shapeMessage(message, images)
    shaped.set(message, { images, out })
    return out
  })

const shapeMessage = (message: MessageWithParts, images: boolean): MessageWithParts => {
  let changed = false
  const parts = message.parts.map((part): Part => {
    if (part.type === "file" && (isText(part.mime) || (!images && isImage(part.mime)))) {
      changed = true
      const text = isText(part.mime) ? inlinedText(part.filename, part.url) : imageNote(part.filename, part.mime)
      return { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text }
    }
    if (!images && part.type === "tool" && part.state.status === "completed" && part.state.attachments !== undefined) {
      changed = true
      const { attachments: _, ...state } = part.state
      return { ...part, state: { ...state, output: `${state.output}\n${TOOL_IMAGE_NOTE}` } }
    }
    return part
  })
  return changed ? { info: message.info, parts } : message
}

/** Providers whose tool results carry images themselves; to the others they follow in a user message. */
const MEDIA_IN_TOOL_RESULTS: ReadonlySet<ProviderType> = new Set(["anthropic", "openai", "amazon-bedrock"])

const sdkFile = (a: Attachment): SdkFilePart => ({
  type: "file",
  data: a.url,
  mediaType: a.mime,
  ...(a.filename !== undefined ? { filename: a.filename } : {})
})

/** The attachments of a tool call the model sees (not once its output is pruned). */
const shownAttachments = (part: ToolPart): ReadonlyArray<Attachment> =>
  part.state.status === "completed" && part.state.time.compacted === undefined ? (part.state.attachments ?? []) : []

/** A tool result with its images inside, where the provider takes them there. */
export const withToolMedia = (output: ToolResultPart["output"], part: ToolPart, type: ProviderType): ToolResultPart["output"] => {
  const attached = shownAttachments(part)
  if (attached.length === 0 || !MEDIA_IN_TOOL_RESULTS.has(type) || output.type !== "text") return output
  return {
    type: "content",
    value: [
      { type: "text", text: output.value },
      ...attached.map((a) => ({ type: "file" as const, mediaType: a.mime, data: { type: "data" as const, data: a.url.slice(a.url.indexOf(",") + 1) } }))
    ]
  }
}

/** For providers whose tool results are text only: the tool calls' images, in a user message after the results. */
export const toolMediaMessage = (parts: ReadonlyArray<Part>, type: ProviderType): ReadonlyArray<ModelMessage> => {
  if (MEDIA_IN_TOOL_RESULTS.has(type)) return []
  const content: Array<SdkTextPart | SdkFilePart> = []
  for (const part of parts) {
    if (part.type !== "tool") continue
    const attached = shownAttachments(part)
    if (attached.length === 0) continue
    content.push(
      { type: "text", text: `The ${part.tool} tool call ${part.callID} gave ${attached.length === 1 ? "this image" : "these images"}:` },
      ...attached.map(sdkFile)
    )
  }
  return content.length === 0 ? [] : [{ role: "user", content }]
}
