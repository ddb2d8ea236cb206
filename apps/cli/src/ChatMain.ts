// bin.ts's fast path for an interactive launch (`reins`, `reins chat`, `reins -c`, `reins --session ID` on a
// terminal, see Interactive.ts): the session opens without loading the command line (effect/cli, every command).
import type { ChatInput } from "./Interactive.ts"
import { openChat } from "./OpenChat.ts"
import { runCli } from "./RunCli.ts"

export const startChat = (input: ChatInput) => runCli(openChat(input))
