import { Schema } from "effect"

/**
 * Why a compaction could not be done: `template` and `config` are configuration errors; `no-progress`
 * ends a turn whose context stays full however often it is compacted; `undo-pending` refuses a compaction asked for while
 * an undo can still be redone (the summary would leave out what the redo brings back).
 */
export const CompactionErrorReason = Schema.Literals([
  "too-large",
  "nothing-to-summarise",
  "empty-summary",
  "template",
  "config",
  "no-progress",
  "undo-pending"
])
export type CompactionErrorReason = typeof CompactionErrorReason.Type

/** One error for compaction failures, with a message a person or a model can act on. */
export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  reason: CompactionErrorReason,
  message: Schema.String
}) {}
