import { userFlag, type AssistantMessage, type Part } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"
import { toolResultText } from "./Estimate.ts"
import { pinnedIds } from "./Pinned.ts"

type Summary = NonNullable<AssistantMessage["summary"]>

/** The newest complete summary of a history and where its verbatim tail starts. */
export interface SummaryBoundary {
  /** Index of the summary message. */
  readonly index: number
  /** Index of the first message kept verbatim (`index` when the summary kept no tail). */
  readonly tailIndex: number
  readonly info: AssistantMessage & { readonly summary: Summary }
  /** The summary's text. */
  readonly text: string
  /** Messages before the tail shown verbatim before the summary (pinned). */
  readonly pinned: ReadonlySet<string>
}

/** Whether a message is a compaction's summary message (complete or not). */
export const isSummaryMessage = (message: MessageWithParts): boolean => message.info.role === "assistant" && message.info.summary !== undefined

/** A message's text parts, joined. */
export const messageText = (message: MessageWithParts): string => message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")

/** The newest summary message that finished without error, if any; a failed, unfinished or undone one is ignored. */
export const latestSummary = (messages: ReadonlyArray<MessageWithParts>): SummaryBoundary | undefined => {
  const index = messages.findLastIndex(
    (m) =>
      m.info.role === "assistant" &&
      m.info.summary !== undefined &&
      m.info.time.completed !== undefined &&
      m.info.error === undefined &&
      m.info.reverted == null
  )
  const found = messages[index]
  if (found?.info.role !== "assistant" || !found.info.summary) return undefined
  const info = { ...found.info, summary: found.info.summary }
  const tailStart = info.summary.tailStart
  const tail = tailStart === undefined ? -1 : messages.findIndex((m) => m.info.id === tailStart)
  const tailIndex = tail >= 0 && tail < index ? tail : index
  const before = messages.slice(0, tailIndex)
  const marked = new Set(info.summary.pinned)
  const pinned = new Set([...pinnedIds(before), ...before.filter((m) => marked.has(m.info.id)).map((m) => m.info.id)])
  return { index, tailIndex, info, text: messageText(found), pinned }
}

/** The text the model sees in place of the summarised turns. */
export const summaryNote = (summary: string): string =>
  [
    "The earlier part of this conversation was summarised to save context; the messages after this one continue it verbatim.",
    `<conversation-summary>\n${summary.trim()}\n</conversation-summary>`
  ].join("\n")

/** T5: how the model sees a message the user sent while the agent was working. */
export const queuedNote = (text: string): string =>
  `<system-reminder>\nThe user sent the following message:\n${text}\n\nPlease address this message and continue with your tasks.\n</system-reminder>`

// Pruned outputs carry their pruned text as `output` too, so the view holds nothing the model must not see.
const showPart = (part: Part): Part =>
  part.type === "tool" && part.state.status === "completed" && part.state.time.compacted !== undefined
    ? { ...part, state: { ...part.state, output: toolResultText(part) } }
    : part

// What the model sees of each message, kept while the message is: a loop that keeps its window in
// memory across steps shows an unchanged message as the same object, not a new copy per step.
const shown = new WeakMap<MessageWithParts, MessageWithParts>()

const show = (message: MessageWithParts): MessageWithParts => {
  let seen = shown.get(message)
  if (seen === undefined) {
    seen = showUncached(message)
    shown.set(message, seen)
  }
  return seen
}

const showUncached = (message: MessageWithParts): MessageWithParts => {
  const parts = message.parts.map(showPart)
  if (message.info.role !== "user" || !userFlag(message.info, "queued")) return { info: message.info, parts }
  const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
  const first = parts.find((p) => p.type === "text")
  if (first?.type !== "text") return { info: message.info, parts }
  return { info: message.info, parts: parts.flatMap((p): Array<Part> => (p === first ? [{ ...first, text: queuedNote(text) }] : p.type === "text" ? [] : [p])) }
}

const verbatim = (messages: ReadonlyArray<MessageWithParts>) => messages.filter((m) => !isSummaryMessage(m)).map(show)

/** Whether a message was taken back by an undo (`reins undo` marks each message of the turns it undoes). */
export const isUndone = (message: { readonly info: MessageWithParts["info"] }): boolean =>
  message.info.role === "user" ? message.info.metadata?.reverted != null : message.info.reverted != null

/**
 * The messages less those undone. Each message of an undone turn carries the mark (its prompt, answers, messages queued
 * into it, the loop's own after a compaction, its summary), so a window read in pieces (pinned messages, then the tail)
 * is filtered message by message.
 */
export const withoutUndone = <M extends { readonly info: MessageWithParts["info"] }>(messages: ReadonlyArray<M>): ReadonlyArray<M> =>
  messages.some(isUndone) ? messages.filter((m) => !isUndone(m)) : messages

/**
 * The messages the model sees. After a complete summary: the pinned messages from before its tail,
 * a user message holding the summary, the tail (from `summary.tailStart`), then everything after
 * the summary. Queued user messages are wrapped in a system reminder; pruned tool outputs show
 * their pruned text; undone messages are left out. The stored messages are not changed.
 */
export const modelView = (all: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  const messages = withoutUndone(all)
  const boundary = latestSummary(messages)
  if (!boundary) return verbatim(messages)
  const { info } = boundary
  const note: MessageWithParts = {
    info: { id: info.id, sessionID: info.sessionID, role: "user", time: { created: info.time.created }, metadata: { compaction_summary: true } },
    parts: [{ id: `${info.id}-summary`, sessionID: info.sessionID, messageID: info.id, type: "text", text: summaryNote(boundary.text), synthetic: true }]
  }
  return [
    ...verbatim(messages.slice(0, boundary.tailIndex).filter((m) => boundary.pinned.has(m.info.id))),
    note,
    ...verbatim(messages.slice(boundary.tailIndex, boundary.index)),
    ...verbatim(messages.slice(boundary.index + 1))
  ]
}

/**
 * What a loop needs to keep of a history: the pinned messages before the newest complete summary's
 * tail, then everything from the tail on (the summary included). `modelView` of the result equals
 * `modelView` of the whole history.
 */
export const fromBoundary = (messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  const boundary = latestSummary(messages)
  if (!boundary) return messages
  return [...messages.slice(0, boundary.tailIndex).filter((m) => boundary.pinned.has(m.info.id)), ...messages.slice(boundary.tailIndex)]
}
