import { Schema } from "effect"
import type { Message } from "./Message.ts"
import type { Part } from "./Part.ts"

/** A stored conversation. */
export const Session = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  directory: Schema.String,
  parentID: Schema.optional(Schema.String),
  /** The agent its last turn ran (`reins run --agent`): the next turn runs it again unless another is chosen. */
  agent: Schema.optional(Schema.String),
  /**
   * Undone (`reins undo`) from this user message on: `files`, the project's files restored to before it; `conversation`
   * (absent: true), its messages kept but marked undone (`metadata.reverted`), not sent to the model. `reins redo`
   * takes it back; a new prompt drops the redo.
   */
  revert: Schema.optional(Schema.Struct({ messageID: Schema.String, files: Schema.Boolean, conversation: Schema.optional(Schema.Boolean) })),
  time: Schema.Struct({ created: Schema.Number, updated: Schema.Number })
})
export type Session = typeof Session.Type

/** A message with its parts, as a session's store reads them back (parts ordered by id). */
export interface MessageWithParts {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}
