import { userFlag } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"

/** Whether a message starts a user turn: a user message the loop did not write after a compaction. */
export const startsTurn = (message: MessageWithParts): boolean => message.info.role === "user" && !userFlag(message.info, "compaction_continue")

/**
 * Index of the first message of the last `turns` user turns; 0 when the history has fewer turns,
 * `messages.length` when `turns` is 0.
 */
export const lastTurnsStart = (messages: ReadonlyArray<MessageWithParts>, turns: number): number => {
  if (turns <= 0) return messages.length
  let seen = 0
  for (let i = messages.length - 1; i >= 0; i--) {
    if (startsTurn(messages[i]!) && ++seen === turns) return i
  }
  return 0
}
