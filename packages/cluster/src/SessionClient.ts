import { Data, Effect } from "effect"
import { type ModelPayload, type PromptPayload, SessionEntity } from "./SessionEntity.ts"

/** A message the cluster could not deliver to the session's owner (its storage, or the runners' sockets), said as one line. */
export class Unreachable extends Data.TaggedError("Unreachable")<{ readonly message: string }> {}

/** A message that is not persisted and finds no owner within this long fails: its owner is gone, and the shards not yet moved. */
const VOLATILE_TIMEOUT = "30 seconds"

const unreachable = (what: string) => (error: unknown) =>
  new Unreachable({
    message: `The cluster could not deliver ${what} to the session's runner (${error instanceof Error ? error.message : typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)}); try again.`
  })

/**
 * The `Session` entity's messages from this member of the cluster to the runner that owns each session tree: the
 * entity is the tree's top-level session (`entityID`; a sub-agent's session runs on its parent's runner), the payload
 * names the session itself. A prompt is persisted: stored before it is sent, so it survives this member and the
 * owner; an abort is volatile, and fails after 30 s without an owner.
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
    prompt: (entityID: string, payload: PromptPayload) => Effect.mapError(client(entityID).Prompt(payload), unreachable("the prompt")),
    /** Done once the prompt is stored for delivery. */
    post: (entityID: string, payload: PromptPayload) => Effect.mapError(client(entityID).Prompt(payload, { discard: true }), unreachable("the prompt")),
    abort: (entityID: string, sessionID: string) => volatile("the abort", client(entityID).Abort({ sessionID })),
    // a compaction asks the model for a summary: as long as that takes (an interrupt would stop it on the owner)
    summarize: (entityID: string, sessionID: string, model: ModelPayload) =>
      Effect.mapError(client(entityID).Summarize({ sessionID, model }), unreachable("the compaction"))
  }
})
