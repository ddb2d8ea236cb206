import { Schema } from "effect"
import type { ConfigError } from "@reins/domain"
import type { PromptError } from "@reins/session"

/** A command that ends badly: one line for the user and the exit code (2 = usage or config). */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  code: Schema.Number
}) {}

export const usage = (message: string) => new CliError({ message, code: 2 })
export const failure = (message: string) => new CliError({ message, code: 1 })

/**
 * A runtime error as one line and an exit code: a bad summary template or a compaction reserve the
 * model cannot hold is a config error (2); provider, store, busy-session and other compaction errors
 * are failures (1).
 */
export const fromRuntimeError = (error: PromptError | CliError | ConfigError): CliError => {
  switch (error._tag) {
    case "CliError":
      return error
    case "ConfigError":
      return usage(error.message)
    case "ProviderError":
      return failure(`${error.reason === "overflow" ? "context overflow: " : ""}${error.message}`)
    case "CompactionError":
      return error.reason === "template" || error.reason === "config" ? usage(error.message) : failure(error.message)
    default:
      return failure(error.message)
  }
}
