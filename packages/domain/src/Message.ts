import { Schema } from "effect"

/** Token usage of one step or a whole message; cache reads and writes are kept apart. */
export const Usage = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  reasoning: Schema.Number,
  cacheRead: Schema.Number,
  cacheWrite: Schema.Number,
  total: Schema.optional(Schema.Number)
})
export type Usage = typeof Usage.Type

export const emptyUsage: Usage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

/**
 * The share of prompt tokens read from the provider's cache (T10): cache read ÷ all prompt tokens
 * (`input` excludes cached ones, so that is input + cache read + cache write); undefined when the
 * provider reported no cache tokens at all (it does not cache, or says nothing about it).
 */
export const cacheHitRate = (u: Pick<Usage, "input" | "cacheRead" | "cacheWrite">): number | undefined => {
  if (u.cacheRead === 0 && u.cacheWrite === 0) return undefined
  const prompt = u.input + u.cacheRead + u.cacheWrite
  return prompt === 0 ? undefined : u.cacheRead / prompt
}

/** Adds usages field by field (`total` is left out: it is the provider's own figure of one step). */
export const addUsage = (a: Usage, b: Usage): Usage => ({
  input: a.input + b.input,
  output: a.output + b.output,
  reasoning: a.reasoning + b.reasoning,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheWrite: a.cacheWrite + b.cacheWrite
})

/** What a tool spent on models of its own: the tokens and cost of the sub-agent a `task` call ran. */
export interface Spending {
  readonly usage: Usage
  readonly cost: number
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0

/**
 * A tool's spending as its result's metadata reports it (`usage` with the five token counts, and
 * `cost`), else undefined. A turn and its session count it beside their own steps' (T19).
 */
export const spendingOf = (metadata: unknown): Spending | undefined => {
  if (typeof metadata !== "object" || metadata === null) return undefined
  const { usage, cost } = metadata as { usage?: Record<string, unknown>; cost?: unknown }
  if (typeof usage !== "object" || usage === null || !isCount(cost)) return undefined
  const { input, output, reasoning, cacheRead, cacheWrite } = usage
  if (!isCount(input) || !isCount(output) || !isCount(reasoning) || !isCount(cacheRead) || !isCount(cacheWrite)) return undefined
  return { usage: { input, output, reasoning, cacheRead, cacheWrite }, cost }
}

export const ModelRef = Schema.Struct({
  providerID: Schema.String,
  modelID: Schema.String,
  /** The named variant of the model's options the call used (`high`, …; T22). */
  variant: Schema.optional(Schema.String)
})
export type ModelRef = typeof ModelRef.Type

/** Why an assistant message ended badly, stored with it so a resumed session can show it. */
export const MessageError = Schema.Struct({ reason: Schema.String, message: Schema.String })
export type MessageError = typeof MessageError.Type

export const UserMessage = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  role: Schema.Literal("user"),
  time: Schema.Struct({ created: Schema.Number }),
  /**
   * Flags views and the loop read: `compaction_continue` (a message the loop wrote after
   * compaction, hidden from the text view), `pinned` (never summarised away), `queued` (sent while
   * the session was running: shown to the model as a system reminder).
   */
  metadata: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
export type UserMessage = typeof UserMessage.Type

/** A user message's flag from `metadata`. */
export const userFlag = (message: UserMessage, flag: "compaction_continue" | "pinned" | "queued") => message.metadata?.[flag] === true

export const AssistantMessage = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  role: Schema.Literal("assistant"),
  parentID: Schema.String,
  model: ModelRef,
  time: Schema.Struct({ created: Schema.Number, completed: Schema.optional(Schema.Number) }),
  finish: Schema.optional(Schema.String),
  error: Schema.optional(MessageError),
  usage: Usage,
  cost: Schema.Number,
  /** Set on a compaction's summary message: the head it replaces for the model (T8). */
  summary: Schema.optional(
    Schema.Struct({
      /** The first message kept verbatim after the summary; absent when nothing is kept. */
      tailStart: Schema.optional(Schema.String),
      /** Messages the summary stands for (pinned ones are carried verbatim instead). */
      summarised: Schema.Array(Schema.String),
      pinned: Schema.Array(Schema.String),
      /** Compaction started by overflow (true) or asked for (`reins compact`). */
      auto: Schema.Boolean
    })
  ),
  /**
   * A summary made in a turn that was undone (`reins undo`): true while a redo can bring it back, "final" after. The
   * model's view then starts from the summary before it, never from this one.
   */
  reverted: Schema.optional(Schema.Union([Schema.Literal(true), Schema.Literal("final")]))
})
export type AssistantMessage = typeof AssistantMessage.Type

/** A user or assistant message; its content lives in parts. */
export const Message = Schema.Union([UserMessage, AssistantMessage])
export type Message = typeof Message.Type
