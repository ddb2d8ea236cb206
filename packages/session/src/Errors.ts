import { Schema } from "effect"
import type { CompactionError } from "@reins/compaction"
import type { ProviderError } from "@reins/provider"
import type { StoreError } from "@reins/storage"

export class SessionBusyError extends Schema.TaggedError<SessionBusyError>()("SessionBusyError", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** What a turn can fail with. */
export type PromptError = ProviderError | StoreError | SessionBusyError | CompactionError

/** The event a turn's failure is told by: its reason (a provider error's own, else the error's tag) and message. */
export const sessionError = (sessionID: string, error: PromptError) =>
  ({
    type: "session.error",
    sessionID,
    error: { reason: error._tag === "ProviderError" ? error.reason : error._tag, message: error.message }
  }) as const
