import { Schema } from "effect"

/** A language server that could not start, stopped, or did not answer; the message names the server. */
export class LspError extends Schema.TaggedError<LspError>()("LspError", {
  server: Schema.String,
  reason: Schema.Literals(["start", "exited", "timeout", "protocol"]),
  message: Schema.String
}) {}
