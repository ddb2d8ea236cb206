import type { Part, ToolPart } from "@reins/domain"
import { prunedPlaceholder } from "@reins/provider"
import type { MessageWithParts } from "@reins/storage"

/** Tokens an image or other binary attachment is assumed to cost (providers bill them by size, not by bytes sent). */
export const ATTACHMENT_TOKENS = 1_000

/** A cheap token estimate of a text: one token per 4 characters, rounded up. */
export const estimateText = (text: string): number => Math.ceil(text.length / 4)

/** What the model sees of a tool call's result (T9: a pruned output is its pruned text). */
export const toolResultText = (part: ToolPart): string => {
  switch (part.state.status) {
    case "completed":
      return part.state.time.compacted !== undefined ? (part.state.pruned ?? prunedPlaceholder(part.tool)) : part.state.output
    case "error":
      return part.state.error
    default:
      return "The tool call was interrupted before it finished."
  }
}

/** The estimate of one part as the model sees it; step markers cost nothing. */
export const estimatePart = (part: Part): number => {
  switch (part.type) {
    case "text":
    case "reasoning":
      return estimateText(part.text)
    case "tool":
      return estimateText(part.tool) + estimateText(JSON.stringify(part.state.input)) + estimateText(toolResultText(part))
    case "file":
      // A text attachment is sent as its content; anything else costs a flat amount.
      return part.mime.startsWith("text/") ? estimateText(part.url) : ATTACHMENT_TOKENS
    default:
      return 0
  }
}

/** The estimate of a message as the model sees it. */
export const estimateMessage = (message: MessageWithParts): number => message.parts.reduce((sum, part) => sum + estimatePart(part), 0)

/** The estimate of a list of messages. */
export const estimateMessages = (messages: ReadonlyArray<MessageWithParts>): number => messages.reduce((sum, message) => sum + estimateMessage(message), 0)
