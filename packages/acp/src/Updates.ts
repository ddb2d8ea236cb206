// A turn's events and a session's history as ACP `session/update`s.
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk"
import { userFlag, type MessageWithParts, type Part, type SessionEvent, type ToolPart, type TurnResult } from "@reins/domain"
import { planOf, toolCall, toolCallUpdate } from "./ToolCalls.ts"

const chunk = (kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", text: string): SessionUpdate => ({
  sessionUpdate: kind,
  content: { type: "text", text }
})

/**
 * Turns the events of one turn of `sessionID` into updates. A text or reasoning part arrives whole
 * when it starts and ends and as deltas in between: only the text not yet sent is sent. Parts of
 * the user's messages and of sub-agents' sessions are not shown (a sub-agent is its `task` call).
 * Each call is announced once (`tool_call`, pending), then updated on every change of status.
 */
export const turnUpdates = (sessionID: string, cwd: string) => {
  const roles = new Map<string, "user" | "assistant">()
  const streamed = new Map<string, { readonly kind: "agent_message_chunk" | "agent_thought_chunk"; sent: number }>()
  const calls = new Map<string, string>()
  let title: string | undefined

  const text = (part: Extract<Part, { type: "text" | "reasoning" }>): Array<SessionUpdate> => {
    const kind = part.type === "text" ? "agent_message_chunk" : "agent_thought_chunk"
    const known = streamed.get(part.id) ?? { kind, sent: 0 }
    streamed.set(part.id, known)
    if (part.text.length <= known.sent) return []
    const fresh = part.text.slice(known.sent)
    known.sent = part.text.length
    return [chunk(kind, fresh)]
  }

  const tool = (part: ToolPart): Array<SessionUpdate> => {
    const out: Array<SessionUpdate> = []
    const previous = calls.get(part.callID)
    if (previous === undefined) out.push({ sessionUpdate: "tool_call", ...toolCall(part, cwd) })
    if (previous !== part.state.status && part.state.status !== "pending") out.push({ sessionUpdate: "tool_call_update", ...toolCallUpdate(part, cwd) })
    calls.set(part.callID, part.state.status)
    const plan = previous !== part.state.status && part.state.status === "completed" ? planOf(part) : undefined
    if (plan !== undefined) out.push({ sessionUpdate: "plan", entries: plan })
    return out
  }

  const update = (event: SessionEvent): Array<SessionUpdate> => {
    switch (event.type) {
      case "message.updated":
        roles.set(event.message.id, event.message.role)
        return []
      // the title a session gets from its first prompt, for the client's list of threads
      case "session.updated": {
        const session = event.session
        if (session.id !== sessionID || session.title === title) return []
        title = session.title
        return [{ sessionUpdate: "session_info_update", title: session.title, updatedAt: new Date(session.time.updated).toISOString() }]
      }
      case "part.updated": {
        const part = event.part
        if (part.sessionID !== sessionID || roles.get(part.messageID) === "user") return []
        if (part.type === "text") return part.synthetic ? [] : text(part)
        if (part.type === "reasoning") return text(part)
        if (part.type === "tool") return tool(part)
        return []
      }
      case "part.delta": {
        const known = event.sessionID === sessionID ? streamed.get(event.partID) : undefined
        if (known === undefined || event.delta === "") return []
        known.sent += event.delta.length
        return [chunk(known.kind, event.delta)]
      }
      default:
        return []
    }
  }

  /** The calls still open when the turn was cancelled, as failed: their parts are marked interrupted after the stream stops. */
  const interrupted = (): Array<SessionUpdate> =>
    [...calls].flatMap(([toolCallId, status]) =>
      status === "pending" || status === "running"
        ? [
            {
              sessionUpdate: "tool_call_update" as const,
              toolCallId,
              status: "failed" as const,
              content: [{ type: "content" as const, content: { type: "text" as const, text: "Interrupted: the turn was cancelled." } }]
            }
          ]
        : []
    )

  return { update, interrupted }
}

/** A session's stored messages as the updates that show them again (`session/load`): each call with its final state. */
export const historyUpdates = (messages: ReadonlyArray<MessageWithParts>, cwd: string): Array<SessionUpdate> =>
  messages.flatMap(({ info, parts }): Array<SessionUpdate> => {
    if (info.role === "user") {
      // the loop's own continuation after a compaction is not something the user said
      if (userFlag(info, "compaction_continue")) return []
      return parts.flatMap((part): Array<SessionUpdate> => {
        if (part.type === "text" && !part.synthetic && part.text !== "") return [chunk("user_message_chunk", part.text)]
        if (part.type === "file") return [chunk("user_message_chunk", `[attached ${part.filename ?? part.mime}]`)]
        return []
      })
    }
    return parts.flatMap((part): Array<SessionUpdate> => {
      if (part.type === "text" && !part.synthetic && part.text !== "") return [chunk("agent_message_chunk", part.text)]
      if (part.type === "reasoning" && part.text !== "") return [chunk("agent_thought_chunk", part.text)]
      if (part.type !== "tool") return []
      const plan = part.state.status === "completed" ? planOf(part) : undefined
      return [
        { sessionUpdate: "tool_call", ...toolCall(part, cwd) },
        ...(part.state.status === "pending" ? [] : [{ sessionUpdate: "tool_call_update" as const, ...toolCallUpdate(part, cwd) }]),
        ...(plan !== undefined ? [{ sessionUpdate: "plan" as const, entries: plan }] : [])
      ]
    })
  })

/**
 * Why a turn ended, as ACP says it: the output limit (`length`) is max_tokens, a content filter
 * a refusal, a loop stopped by the doom-loop guard or a last step that still wanted tools (the
 * step limit) max_turn_requests; anything else end_turn.
 */
export const stopReason = (result: TurnResult): StopReason => {
  const { assistant } = result
  if (assistant.error?.reason === "doom_loop" || assistant.error?.reason === "budget") return "max_turn_requests"
  switch (assistant.finish) {
    case "length":
      return "max_tokens"
    case "content-filter":
      return "refusal"
    case "tool-calls":
      return "max_turn_requests"
    default:
      return "end_turn"
  }
}
