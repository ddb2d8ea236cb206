import { Data, Effect } from "effect"
import { type PromptPayload, type Reply, SessionEntity, type ModelPayload } from "./SessionEntity.ts"

/** A message the cluster could not deliver to the session's owner (its storage, or the runners' sockets), said as one line. */
export class Unreachable extends Data.TaggedError("Unreachable")<{ readonly message: string }> {}

/** A message that is not persisted and finds no owner within this long fails: its owner is gone, and the shards not yet moved. */
const VOLATILE_TIMEOUT = "30 seconds"

const unreachable = (what: string) => (error: unknown) =>
  new Unreachable({
    message: `The cluster could not deliver ${what} to the session's runner (${error instanceof Error ? error.message : typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)}); try again.`
  })

/**
 * The `Session` entity's messages from this member of the cluster to the runner that owns each session (found by
 * the session id's shard). A prompt is persisted: stored before it is sent, so it survives this member and the
 * owner; the others are volatile, and fail after 30 s without an owner.
 */
export const sessionClient = Effect.gen(function* () {
  const client = yield* SessionEntity.client
  const volatile = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
    effect.pipe(
      Effect.timeoutOrElse({
        duration: VOLATILE_TIMEOUT,
        orElse: () =>
          Effect.fail(
            new Unreachable({
              message: `No runner answered ${what} within 30 s (the session's runner stopped, and its sessions have not moved yet); try again.`
            })
          )
      }),
      Effect.mapError((error) => (error instanceof Unreachable ? error : unreachable(what)(error)))
    )
  return {
    /** Waits for the owner's reply: the turn's end, or "queued". */
    prompt: (payload: PromptPayload) => Effect.mapError(client(payload.sessionID).Prompt(payload), unreachable("the prompt")),
    /** Done once the prompt is stored for delivery. */
    post: (payload: PromptPayload) => Effect.mapError(client(payload.sessionID).Prompt(payload, { discard: true }), unreachable("the prompt")),
    abort: (sessionID: string) => volatile("the abort", client(sessionID).Abort({ sessionID })),
    reply: (payload: typeof Reply.payloadSchema.Type) => volatile("the permission reply", client(payload.sessionID).Reply(payload)),
    summarize: (sessionID: string, model: ModelPayload) => volatile("the compaction", client(sessionID).Summarize({ sessionID, model }))
  }
})
