import { userFlag } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"
import { startsTurn } from "./Turns.ts"

/** Whether a message is pinned by the user (`metadata.pinned`). */
export const isMarkedPinned = (message: MessageWithParts): boolean => message.info.role === "user" && userFlag(message.info, "pinned")

/**
 * The messages never summarised away, in history order: the session's first real user message
 * (the original task; not a compaction continuation) and every user message marked pinned.
 */
export const pinnedMessages = (messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  const first = messages.find(startsTurn)
  return messages.filter((m) => m === first || isMarkedPinned(m))
}

/** The ids of `pinnedMessages`. */
export const pinnedIds = (messages: ReadonlyArray<MessageWithParts>): ReadonlySet<string> => new Set(pinnedMessages(messages).map((m) => m.info.id))
