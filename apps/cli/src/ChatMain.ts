// bin.ts's fast path for an interactive launch (`reins`, `reins chat`, `reins -c`, `reins --session ID` on a
// terminal, see Interactive.ts): the session opens without loading the command line (effect/cli, every command).
import { Effect, Logger } from "effect"
import type { ChatInput } from "./Interactive.ts"
import { openChat } from "./OpenChat.ts"
import { runCli } from "./RunCli.ts"

export const startChat = (input: ChatInput) => runCli(openChat(input))

/**
 * The session for `reins chat` as main parsed it (ChatHandoff.ts): resolves when it ends, with a CliError's message
 * and exit code if it ended on one; `signal` stops it (its cleanup done before it resolves).
 */
export const runChat = (input: ChatInput, signal: AbortSignal): Promise<{ readonly message: string; readonly code: number } | undefined> =>
  Effect.runPromise(
    openChat(input).pipe(
      Effect.as(undefined),
      Effect.catchTag("CliError", (e) => Effect.succeed({ message: e.message, code: e.code })),
      Effect.scoped,
      Effect.provideService(Logger.LogToStderr, true)
    ),
    { signal }
  )
