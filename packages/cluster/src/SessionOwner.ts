import { Context, type Effect } from "effect"
import type { ModelPayload, PromptPayload, PromptReply, SummarizeReply } from "./SessionEntity.ts"

/**
 * What the runner that owns a session does with the messages routed to it: the session's use cases run here, on
 * this runner's store and tools. The runtime provides it (over `Sessions`); the cluster only routes. Failures are
 * said in the replies, not raised: a prompt that failed was still handled, and is not delivered again.
 */
export class SessionOwner extends Context.Service<
  SessionOwner,
  {
    /** Starts a turn on the message, or queues it into the running one; a started turn is awaited. */
    prompt(payload: PromptPayload): Effect.Effect<Omit<PromptReply, "runner">>
    /** Stops the running turn here; false when none runs. */
    abort(sessionID: string): Effect.Effect<boolean>
    /** Answers a waiting permission question; false when it no longer waits. */
    reply(input: {
      readonly sessionID: string
      readonly questionID: string
      readonly reply: "once" | "always" | "reject"
      readonly message?: string
    }): Effect.Effect<boolean>
    /** Compacts the idle session; the error says why not. */
    summarize(sessionID: string, model: ModelPayload): Effect.Effect<Omit<SummarizeReply, "runner">>
  }
>()("reins/cluster/SessionOwner") {}
