import type { MessageWithParts } from "@reins/storage"
import { toolResultText } from "./Estimate.ts"
import defaultTemplate from "./summary.txt" with { type: "text" }

/** The summariser's system prompt (T12): the sections the model must fill. Replaceable by config or a plugin. */
export const SUMMARY_TEMPLATE: string = defaultTemplate.trim()

/** What the summariser is asked. */
export interface SummaryInput {
  /** The messages to summarise, oldest first. */
  readonly head: ReadonlyArray<MessageWithParts>
  /** The text of the last summary, to be updated rather than summarised again. */
  readonly previous?: string | undefined
  /** Messages kept verbatim beside the summary (the original task, pinned ones): context for the summariser, not to be copied. */
  readonly pinned?: ReadonlyArray<MessageWithParts> | undefined
  /** Replaces `SUMMARY_TEMPLATE`. */
  readonly template?: string | undefined
  /** Tokens the summary should stay within (a small window); unset: no limit is asked. */
  readonly maxTokens?: number | undefined
}

/** A summary budget is asked for only below this many tokens: a large window has room for any summary. */
export const SUMMARY_LIMIT_FROM = 4_000

/** The line asking for a short summary when the window is small, or undefined. */
export const lengthRule = (maxTokens: number | undefined): string | undefined => {
  if (maxTokens === undefined || maxTokens >= SUMMARY_LIMIT_FROM) return undefined
  const words = Math.max(50, Math.floor(maxTokens * 0.75))
  return `The agent's context window is small: keep the whole summary under about ${words} words, keeping the user's rules, what is done, and the next move; drop detail first.`
}

/** The summariser call without model and tools: the caller passes `tools: []` and `toolChoice: "none"`. */
export interface SummaryRequest {
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<MessageWithParts>
}

const fence = (tag: string, body: string) => `<${tag}>\n${body}\n</${tag}>`

/**
 * The messages as a plain-text transcript, tool results as the model sees them (pruned ones as
 * their placeholder or kept lines). Reasoning is left out: the summary needs what was done and said.
 */
export const transcript = (messages: ReadonlyArray<MessageWithParts>): string =>
  messages
    .map(({ info, parts }) => {
      const lines: Array<string> = []
      for (const part of parts) {
        if (part.type === "text" && part.text.trim() !== "") lines.push(part.text)
        if (part.type === "file") lines.push(`[Attached ${part.mime}: ${part.filename ?? "unnamed"}]`)
        if (part.type === "tool") {
          lines.push(`[Tool call: ${part.tool} ${JSON.stringify(part.state.input)}]`)
          lines.push(fence("tool-result", toolResultText(part)))
        }
      }
      const role = info.role === "user" ? "User" : "Assistant"
      return lines.length > 0 ? `### ${role}\n${lines.join("\n")}` : ""
    })
    .filter((block) => block !== "")
    .join("\n\n")

/**
 * T12: the summariser's request. The head goes in as one transcript, so the provider sees no tool
 * calls it was not offered tools for; with a previous summary the model is told to update it.
 */
export const summaryRequest = (input: SummaryInput): SummaryRequest => {
  const sessionID = input.head[0]?.info.sessionID ?? ""
  const body = transcript(input.head)
  const limit = lengthRule(input.maxTokens)
  const pinned = input.pinned?.length
    ? [
        "These messages stay in the context verbatim next to your summary; use them to understand the conversation but do not copy them into it:",
        fence("pinned-messages", transcript(input.pinned))
      ]
    : []
  const text =
    input.previous !== undefined
      ? [
          "Below is the summary written when this conversation was last compacted, followed by the conversation since then.",
          ...pinned,
          fence("previous-summary", input.previous),
          fence("transcript", body),
          "Update the previous summary with what happened since: keep every section, carry over what still holds (above all the user's rules and constraints), fold in the new work, and move finished items to Completed. Do not summarise the summary itself again or shorten it just for the sake of it. Answer with the updated summary only.",
          ...(limit ? [limit] : [])
        ].join("\n\n")
      : [
          "Below is the conversation so far between the user and a coding agent.",
          ...pinned,
          fence("transcript", body),
          "Write the summary of this conversation using the sections of your instructions. Answer with the summary only.",
          ...(limit ? [limit] : [])
        ].join("\n\n")
  return {
    system: [input.template ?? SUMMARY_TEMPLATE],
    messages: [
      {
        info: { id: "summary-request", sessionID, role: "user", time: { created: 0 } },
        parts: [{ id: "summary-request-text", sessionID, messageID: "summary-request", type: "text", text }]
      }
    ]
  }
}
