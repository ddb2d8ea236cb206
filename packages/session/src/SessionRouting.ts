import { Context, type Effect, Schema } from "effect"
import type { CompactResult } from "@reins/compaction"
import type { ModelRef, TurnResult } from "@reins/domain"

/** A use case the owner of the session could not do, as its error said there: the tag, the reason and the message. */
export interface RoutedFailure {
  readonly tag: string
  readonly reason?: string
  readonly message: string
}

/** The session's owner could not be reached (the cluster's storage or its runners): try again. */
export class RouteError extends Schema.TaggedError<RouteError>()("RouteError", { sessionID: Schema.String, message: Schema.String }) {}

/** A prompt handed to its session's owner. */
export interface RoutedPromptInput {
  readonly sessionID: string
  /** The prompt's identity, chosen once by the node that took the request: the owner stores it once and answers it once. */
  readonly requestID: string
  readonly text: string
  readonly model: ModelRef
  readonly agent?: string
}

/**
 * Where a session's use cases run when sessions are spread over the runners of a cluster (`reins serve --runner`):
 * any node takes any request, and this hands it to the runner that owns the session. Absent outside a cluster,
 * where `Sessions` runs them here. Each reply names the runner that answered (HOST:PORT). A session tree (a session and
 * its sub-agents' sessions) is one entity, owned by one runner: its top-level session's. (A permission question is
 * answered through the question store, wherever it was asked.)
 */
export class SessionRouting extends Context.Service<
  SessionRouting,
  {
    /** This runner's address. */
    readonly self: string
    /**
     * The prompt to its owner, stored before it is sent (delivered again to the next owner if the owner dies), and
     * its turn awaited there: "queued" when it went into a turn running; else the turn's result or its failure.
     */
    prompt(input: RoutedPromptInput): Effect.Effect<
      {
        readonly outcome: "finished" | "queued"
        readonly runner: string
        /** The stored message's id, when it was queued. */
        readonly messageID?: string
        readonly result?: TurnResult
        readonly failure?: RoutedFailure
      },
      RouteError
    >
    /** `prompt` without waiting for the owner: done once the prompt is stored for delivery. */
    post(input: RoutedPromptInput): Effect.Effect<void, RouteError>
    /** Stops the session's running turn on its owner: false when none ran there. */
    abort(sessionID: string): Effect.Effect<{ readonly aborted: boolean; readonly runner: string }, RouteError>
    /** Compacts the idle session on its owner. */
    compact(
      sessionID: string,
      model: ModelRef
    ): Effect.Effect<{ readonly runner: string; readonly result?: CompactResult; readonly failure?: RoutedFailure }, RouteError>
  }
>()("reins/session/SessionRouting") {}
