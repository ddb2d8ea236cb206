import type { SessionEvent } from "@reins/domain"

/**
 * Whether an event of a turn's stream is the session's own, not one of its sub-agents' (whose
 * progress the stream carries too: `--format json` prints it, the text view shows their `task` line).
 * `usage`: a sub-agent's step ends (`step-finish`, with its tokens and cost) pass too, so the
 * closing line's totals count what the sub-agents spent.
 */
export const ownEvents =
  (sessionID: string, options: { readonly usage?: boolean } = {}) =>
  (event: SessionEvent): boolean => {
    switch (event.type) {
      case "session.created":
      case "session.updated":
        return event.session.id === sessionID
      case "message.updated":
        return event.message.sessionID === sessionID
      case "part.updated":
        return event.part.sessionID === sessionID || (options.usage === true && event.part.type === "step-finish")
      case "turn.finished":
        return true
      default:
        return event.sessionID === sessionID
    }
  }
