import { Schema } from "effect"
import { AssistantMessage, Message, MessageError } from "./Message.ts"
import { Part } from "./Part.ts"
import { Session } from "./Session.ts"

export const SessionCreated = Schema.Struct({ type: Schema.Literal("session.created"), session: Session })
export const SessionUpdated = Schema.Struct({ type: Schema.Literal("session.updated"), session: Session })
export const MessageUpdated = Schema.Struct({ type: Schema.Literal("message.updated"), message: Message })
/**
 * A part changed; the part is whole. Streamed text and reasoning are published whole when they
 * start and when they end, and as `part.delta` in between. `delta` is no longer set (it was the
 * appended text, next to a part carrying all the text so far).
 */
export const PartUpdated = Schema.Struct({
  type: Schema.Literal("part.updated"),
  part: Part,
  delta: Schema.optional(Schema.String)
})
/**
 * Text appended to a streaming text or reasoning part, named by its session and id (its message
 * came with the part's first `part.updated`), so a long answer costs about its own length in
 * events rather than the square of it. The whole part follows in a `part.updated` when it ends.
 */
export const PartDelta = Schema.Struct({
  type: Schema.Literal("part.delta"),
  sessionID: Schema.String,
  partID: Schema.String,
  partType: Schema.Literals(["text", "reasoning"]),
  delta: Schema.String
})
export const SessionStatus = Schema.Struct({
  type: Schema.Literal("session.status"),
  sessionID: Schema.String,
  status: Schema.Literals(["busy", "retry", "idle"]),
  attempt: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String),
  next: Schema.optional(Schema.Number)
})
export const SessionError = Schema.Struct({
  type: Schema.Literal("session.error"),
  sessionID: Schema.String,
  error: MessageError
})
/** One file an edit would change: its absolute path and the unified diff; `created` when it does not exist yet. */
export const ChangePreview = Schema.Struct({
  path: Schema.String,
  diff: Schema.String,
  created: Schema.optional(Schema.Boolean)
})
export type ChangePreview = typeof ChangePreview.Type
export const PermissionAsked = Schema.Struct({
  type: Schema.Literal("permission.asked"),
  id: Schema.String,
  sessionID: Schema.String,
  permission: Schema.String,
  patterns: Schema.Array(Schema.String),
  always: Schema.Array(Schema.String),
  callID: Schema.optional(Schema.String),
  /** The rule that made this a question; absent when no rule matched. */
  rule: Schema.optional(Schema.Struct({ permission: Schema.String, pattern: Schema.String, action: Schema.String })),
  /** Where the command runs (bash, after any `cd`). */
  directory: Schema.optional(Schema.String),
  /** Why the command cannot be judged by its text (eval, a computed command name, …). */
  opaque: Schema.optional(Schema.String),
  /** The whole tool input the request came from (e.g. the full bash command). */
  command: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  /** What an edit would change, one unified diff per file, shown with the question (cut when long). */
  diffs: Schema.optional(Schema.Array(ChangePreview))
})
export type PermissionAsked = typeof PermissionAsked.Type
export const PermissionReplied = Schema.Struct({
  type: Schema.Literal("permission.replied"),
  id: Schema.String,
  sessionID: Schema.String,
  reply: Schema.Literals(["once", "always", "reject"]),
  by: Schema.Literals(["user", "policy", "rule"]),
  /** What "always" granted, exactly. */
  granted: Schema.optional(Schema.Array(Schema.String)),
  /** Whether the grant was saved for the project (`permission_persist: "project"`). */
  persisted: Schema.optional(Schema.Boolean),
  message: Schema.optional(Schema.String)
})

/** Compaction began: why, and the tokens the context held. */
export const CompactionStarted = Schema.Struct({
  type: Schema.Literal("compaction.started"),
  sessionID: Schema.String,
  reason: Schema.Literals(["overflow", "provider", "manual"]),
  tokens: Schema.Number
})
/** Compaction finished: what was pruned and summarised, the summary, and the tokens before and after. */
export const CompactionCompleted = Schema.Struct({
  type: Schema.Literal("compaction.completed"),
  sessionID: Schema.String,
  /** The summary message. */
  messageID: Schema.String,
  tokensBefore: Schema.Number,
  tokensAfter: Schema.Number,
  /** Tool parts whose output is now hidden from the model. */
  pruned: Schema.Array(Schema.String),
  /** Messages the summary replaces. */
  summarised: Schema.Array(Schema.String),
  summary: Schema.String
})

/** Every change to a session, as published on the bus and printed by `reins run --format json`. */
/** An MCP server failed to start or stopped while the run went on: told once per server; its tools are gone. */
export const McpServerFailed = Schema.Struct({
  type: Schema.Literal("mcp.failed"),
  /** The session whose turn found it failed. */
  sessionID: Schema.String,
  server: Schema.String,
  error: Schema.String
})
export type McpServerFailed = typeof McpServerFailed.Type

export const Event = Schema.Union([
  SessionCreated,
  SessionUpdated,
  MessageUpdated,
  PartUpdated,
  PartDelta,
  SessionStatus,
  SessionError,
  PermissionAsked,
  PermissionReplied,
  CompactionStarted,
  CompactionCompleted,
  McpServerFailed
])
export type Event = typeof Event.Type

/** What a finished turn gives its caller: its last assistant message and that message's text. */
export const TurnResult = Schema.Struct({
  sessionID: Schema.String,
  steps: Schema.Number,
  /** The last assistant message of the turn. */
  assistant: AssistantMessage,
  /** The text of that message. */
  text: Schema.String
})
export type TurnResult = typeof TurnResult.Type

/**
 * The last event of a turn consumed as a stream (`SessionService.stream`), carrying its result.
 * Not published on the bus: observers see the turn end with `session.status` idle.
 */
export const TurnFinished = Schema.Struct({ type: Schema.Literal("turn.finished"), result: TurnResult })
export type TurnFinished = typeof TurnFinished.Type

/** The events of one turn, as `SessionService.stream` yields them: the session's bus events, then `turn.finished`. */
export const SessionEvent = Schema.Union([Event, TurnFinished])
export type SessionEvent = typeof SessionEvent.Type

/** A turn a server ran ended in an error (its `turn.finished` counterpart); `tag` names the error. */
export const TurnFailed = Schema.Struct({
  type: Schema.Literal("turn.failed"),
  sessionID: Schema.String,
  error: Schema.Struct({ tag: Schema.String, message: Schema.String })
})
export type TurnFailed = typeof TurnFailed.Type

/**
 * A session was deleted (with its messages and its events in the log): the last event a follower of it gets, appended
 * once the deletion is done, so a client following it learns why nothing more comes.
 */
export const SessionDeleted = Schema.Struct({ type: Schema.Literal("session.deleted"), sessionID: Schema.String })
export type SessionDeleted = typeof SessionDeleted.Type

/**
 * What the event log stores: every bus event, the end of each turn a server ran (so a client replaying the log sees it
 * in place), and a session's deletion.
 */
export const LogEvent = Schema.Union([Event, TurnFinished, TurnFailed, SessionDeleted])
export type LogEvent = typeof LogEvent.Type

/** The session an event belongs to (every event names one). */
export const eventSessionID = (event: LogEvent): string => {
  switch (event.type) {
    case "session.created":
    case "session.updated":
      return event.session.id
    case "message.updated":
      return event.message.sessionID
    case "part.updated":
      return event.part.sessionID
    case "turn.finished":
      return event.result.sessionID
    default:
      return event.sessionID
  }
}
