import { TurnResult } from "@reins/domain"
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

// The wire format between runners, and of prompts persisted in `cluster_messages`: a runner of the next release
// reads what this one stored, so these schemas only ever gain optional fields (never rename, retype or remove one).

/** The model a prompt runs on, as stored in messages (`ModelRef`). */
export const ModelPayload = Schema.Struct({
  providerID: Schema.String,
  modelID: Schema.String,
  variant: Schema.optionalKey(Schema.String)
})

/** Why the owner could not do what it was asked: the error's tag and reason as the owner's use case failed (a front end maps them as it maps its own). */
export const Failure = Schema.Struct({ tag: Schema.String, reason: Schema.optionalKey(Schema.String), message: Schema.String })

/** What a compaction did, as `Sessions.compact` says it. */
export const Compacted = Schema.Struct({
  summaryMessageID: Schema.String,
  tokensBefore: Schema.Number,
  tokensAfter: Schema.Number,
  pruned: Schema.Array(Schema.String),
  summarised: Schema.Array(Schema.String),
  summary: Schema.String,
  // added later: a runner of the release before sends none (these schemas only gain optional fields)
  cost: Schema.optionalKey(Schema.Number)
})

/**
 * A user's message for a session: starts a turn on the owner, or goes into the turn running there (T5). Persisted:
 * stored before it is sent, redelivered to the next owner if the owner dies before it replied, and said once per
 * `promptID` (the primary key: a retried send of the same prompt is the same prompt, and gets its reply). A prompt
 * can also be delivered again when its session moves (a runner joins or leaves: the running turn is stopped after
 * the entity termination timeout and the prompt redelivered to the new owner), so the owner's handling must be
 * idempotent per `promptID`: a prompt already stored is not stored again, a turn already answered not run again.
 */
export const Prompt = Rpc.make("Prompt", {
  payload: {
    sessionID: Schema.String,
    /** Chosen by the node that took the request (unique, e.g. from `Ids`): the prompt's identity, kept on the stored user message. */
    promptID: Schema.String,
    text: Schema.String,
    model: ModelPayload,
    agent: Schema.optionalKey(Schema.String)
  },
  success: Schema.Struct({
    /** "finished": the turn it started ended (see `error`); "queued": it went into the turn already running. */
    outcome: Schema.Literals(["finished", "queued"]),
    /** The runner that took it, HOST:PORT. */
    runner: Schema.String,
    /** The turn's failure, as the owner said it (a finished turn without one succeeded). */
    error: Schema.optionalKey(Schema.String),
    /** The id of the stored message, for a queued one. */
    messageID: Schema.optionalKey(Schema.String),
    /** The finished turn's result (its last assistant message); none for a failed or queued one. */
    result: Schema.optionalKey(TurnResult),
    /** The failure's tag and reason, beside `error`. */
    failure: Schema.optionalKey(Failure)
  }),
  primaryKey: (payload) => payload.promptID
})
  .annotate(ClusterSchema.Persisted, true)
  // A caller that goes away (a dropped HTTP connection) does not interrupt the turn: its interrupt would be stored as
  // the prompt's reply, and the same message sent again would get that reply instead of the turn. Abort stops a turn.
  .annotate(ClusterSchema.Uninterruptible, "client")

/** Stops the session's running turn on its owner; not persisted (an owner that died has no turn left to stop). */
export const Abort = Rpc.make("Abort", {
  payload: { sessionID: Schema.String },
  success: Schema.Struct({ aborted: Schema.Boolean, runner: Schema.String })
})

/** Answers a permission question of the session's running turn on its owner (where the question waits). */
export const Reply = Rpc.make("Reply", {
  payload: {
    sessionID: Schema.String,
    questionID: Schema.String,
    reply: Schema.Literals(["once", "always", "reject"]),
    message: Schema.optionalKey(Schema.String)
  },
  success: Schema.Struct({ answered: Schema.Boolean, runner: Schema.String })
})

/** Compacts an idle session on its owner (so no turn of another runner races it). */
export const Summarize = Rpc.make("Summarize", {
  payload: { sessionID: Schema.String, model: ModelPayload },
  success: Schema.Struct({
    summarized: Schema.Boolean,
    runner: Schema.String,
    error: Schema.optionalKey(Schema.String),
    result: Schema.optionalKey(Compacted),
    failure: Schema.optionalKey(Failure)
  })
})

/** A session as a cluster entity: its id is the session's id; one runner owns it at a time. */
export const SessionEntity = Entity.make("Session", [Prompt, Abort, Reply, Summarize])

export type PromptPayload = typeof Prompt.payloadSchema.Type
export type PromptReply = typeof Prompt.successSchema.Type
export type ModelPayload = typeof ModelPayload.Type
export type Failure = typeof Failure.Type
export type SummarizeReply = typeof Summarize.successSchema.Type
