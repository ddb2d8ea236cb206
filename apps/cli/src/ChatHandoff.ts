// `reins chat` as main parses it (a launch bin.ts's fast path leaves to effect/cli: `--max-cost 5e0`, say) opens the
// interactive session through ChatMain's own entry. In the bundle main is CommonJS (build.ts: its bytecode) and Ink
// and React are ES modules, ChatMain.js beside it: the session runs there, with that bundle's own Effect, so only
// plain data crosses — the flags in, and a CliError back as its message and exit code.
import { Effect } from "effect"
import { CliError } from "./CliError.ts"
import type { ChatInput } from "./Interactive.ts"

export const handOffChat = (input: ChatInput) =>
  Effect.gen(function* () {
    const { runChat } = yield* Effect.promise(() => import("./ChatMain.ts"))
    // interrupted (Ctrl+C, SIGTERM, SIGHUP reach main's runMain), the session is stopped and its cleanup awaited
    const failed = yield* Effect.callback<{ readonly message: string; readonly code: number } | undefined>((resume) => {
      const controller = new AbortController()
      const done = runChat(input, controller.signal)
      done.then(
        (result) => resume(Effect.succeed(result)),
        (error) => resume(Effect.die(error))
      )
      return Effect.promise(() => {
        controller.abort()
        return done.catch(() => undefined)
      })
    })
    if (failed !== undefined) return yield* new CliError(failed)
  })
