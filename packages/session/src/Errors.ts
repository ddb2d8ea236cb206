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
