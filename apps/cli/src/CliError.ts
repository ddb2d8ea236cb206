import { Schema } from "effect"

/** A command that ends badly: one line for the user and the exit code (2 = usage or config). */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  code: Schema.Number
}) {}

export const usage = (message: string) => new CliError({ message, code: 2 })
export const failure = (message: string) => new CliError({ message, code: 1 })
