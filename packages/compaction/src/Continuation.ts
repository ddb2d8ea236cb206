import type { FilePart } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"
import { startsTurn } from "./Turns.ts"

/** The message the loop continues with after a compaction (T11). */
export interface Continuation {
  /** `media`: the last request replayed as text with notes of its attachments; `replay`: the unanswered request again; `continue`: a synthetic prompt. */
  readonly kind: "media" | "replay" | "continue"
  readonly text: string
  /** The user message replayed, for `media` and `replay`. */
  readonly source?: string
}

/** The synthetic prompt after a compaction when the last request was answered. */
export const CONTINUE_PROMPT =
  "Continue with the task where you left off. The earlier conversation was summarised above and the most recent messages follow it verbatim: " +
  "use them to pick up the next step of the work in progress instead of starting over, and do not repeat work the summary marks as done. " +
  "If the task is already complete, say so briefly and stop. If you need something from the user, ask for it."

const textOf = (message: MessageWithParts) =>
  message.parts
    .flatMap((p) => (p.type === "text" && !p.synthetic ? [p.text] : []))
    .join("\n")
    .trim()

// A file: URL names its file; a data: URL names nothing.
const fileName = (part: FilePart) => part.filename ?? (part.url.startsWith("file:") ? (part.url.split("/").pop() ?? "") : "")

/** The note that replaces an attachment the summary cannot carry. */
export const attachmentNote = (part: FilePart): string => `[Attached ${part.mime}: ${fileName(part) || "unnamed"}]`

// An answer ends the turn (T1): a finished step other than tool calls, no tool calls, no error.
// Summary messages are compaction's own and never answer anything.
const answers = (message: MessageWithParts) =>
  message.info.role === "assistant" &&
  message.info.summary === undefined &&
  message.info.error === undefined &&
  message.info.finish !== undefined &&
  message.info.finish !== "tool-calls" &&
  message.info.finish !== "unknown" &&
  !message.parts.some((p) => p.type === "tool")

// A step the model made for the request: an assistant message (not a summary, no error) with text or a tool call.
const isStep = (message: MessageWithParts) =>
  message.info.role === "assistant" &&
  message.info.summary === undefined &&
  message.info.error === undefined &&
  message.parts.some((p) => (p.type === "text" && p.text.trim() !== "") || p.type === "tool")

/** Options of `continuation`. */
export interface ContinuationOptions {
  /**
   * Whether the model already worked on the request (the loop knows: a step of the turn succeeded).
   * Default: a step of it is among `messages`.
   */
  readonly progressed?: boolean
}

/**
 * T11: what the loop says after compacting, from the messages before the compaction. A request the
 * model has not worked on yet: (a) with attachments → its text with one `[Attached <mime>: <name>]`
 * line per file; (b) else its text again. (c) Otherwise a synthetic "continue" prompt: once the turn
 * made steps, repeating the request as the newest message makes a model start the task over and
 * run its tool calls again, while the request itself stays in view (compaction pins it).
 * The caller stores the text as a user message with `metadata.compaction_continue = true`.
 */
export const continuation = (messages: ReadonlyArray<MessageWithParts>, options: ContinuationOptions = {}): Continuation => {
  const index = messages.findLastIndex(startsTurn)
  const last = messages[index]
  if (!last) return { kind: "continue", text: CONTINUE_PROMPT }
  const after = messages.slice(index + 1)
  const progressed = options.progressed ?? after.some(isStep)
  if (progressed || after.some(answers)) return { kind: "continue", text: CONTINUE_PROMPT }
  const files = last.parts.filter((p): p is FilePart => p.type === "file")
  const text = textOf(last)
  if (files.length > 0) {
    return { kind: "media", text: [...(text ? [text] : []), ...files.map(attachmentNote)].join("\n"), source: last.info.id }
  }
  if (text !== "") return { kind: "replay", text, source: last.info.id }
  return { kind: "continue", text: CONTINUE_PROMPT }
}
