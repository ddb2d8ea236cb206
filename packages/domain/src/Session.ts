import { Schema } from "effect"

/** A stored conversation. */
export const Session = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  directory: Schema.String,
  parentID: Schema.optional(Schema.String),
  time: Schema.Struct({ created: Schema.Number, updated: Schema.Number })
})
export type Session = typeof Session.Type
