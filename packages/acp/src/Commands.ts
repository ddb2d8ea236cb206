import type { AvailableCommand } from "@agentclientprotocol/sdk"
import { Effect } from "effect"
import { Sessions, type Undone } from "@reins/session"

/** The commands an editor offers as `/name` in the prompt: undo and redo, where the protocol has no request for them. */
export const AVAILABLE_COMMANDS: ReadonlyArray<AvailableCommand> = [
  {
    name: "undo",
    description: "Undo the last turn: the files it changed (shell commands included) and the conversation the model sees",
    input: { hint: "--force to overwrite files changed since" }
  },
  { name: "redo", description: "Take back the last undo: the files and the conversation as the turn left them", input: { hint: "--force" } }
]

/** A prompt that is one of the commands (`/undo`, `/redo --force`); undefined for any other text. */
export const parseCommand = (text: string): { readonly name: "undo" | "redo"; readonly force: boolean } | undefined => {
  const match = /^\/(undo|redo)((?:\s+--force)?)\s*$/.exec(text.trim())
  return match === null ? undefined : { name: match[1] as "undo" | "redo", force: match[2] !== "" }
}

const said = (verb: string, done: Undone) => {
  const messages = `${done.messages.length} message${done.messages.length === 1 ? "" : "s"}`
  const files = done.files.length === 0 ? "no files" : `${done.files.length} file${done.files.length === 1 ? "" : "s"} (${done.files.join(", ")})`
  const skipped = done.skipped.map((s) => `\n- not restored: ${s.path} (${s.reason})`).join("")
  return `${verb} ${messages} and ${files}.${skipped}`
}

/**
 * Runs a command on the session; what it did, or why not, as the text of the answer. An undone turn stays in the
 * editor's thread (the protocol cannot take messages back), but the model no longer sees it.
 */
export const runCommand = (sessionID: string, command: { readonly name: "undo" | "redo"; readonly force: boolean }) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    if (command.name === "undo") {
      const done = yield* sessions.undo({ sessionID, files: true, conversation: true, force: command.force })
      return `${said("Undid", done)} The thread above still shows that turn; the agent no longer sees it. /redo brings it back.`
    }
    return said("Redid", yield* sessions.redo({ sessionID, force: command.force }))
  }).pipe(Effect.catch((error) => Effect.succeed(`Could not ${command.name}: ${error.message}`)))
