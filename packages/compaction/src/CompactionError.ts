import { Schema } from "effect"

/**
 * Why a compaction could not be done: `template` and `config` are configuration errors; `no-progress`
 * ends a turn whose context stays full however often it is compacted.
 */
export const CompactionErrorReason = Schema.Literals(["too-large", "nothing-to-summarise", "empty-summary", "template", "config", "no-progress"])
export type CompactionErrorReason = typeof CompactionErrorReason.Type

/** One error for compaction failures, with a message a person or a model can act on. */
export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  reason: CompactionErrorReason,
  message: Schema.String
}) {}
