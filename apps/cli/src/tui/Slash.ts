// The slash commands of the interactive session and their completion (pure).

export interface SlashCommand {
  readonly name: string
  readonly args?: string
  readonly summary: string
}

export const SLASH_COMMANDS: ReadonlyArray<SlashCommand> = [
  { name: "new", summary: "start a new session in this project" },
  { name: "sessions", summary: "pick a session of this project to resume (newest first)" },
  { name: "model", args: "[provider/model [variant]]", summary: "pick the model (and its variant) for the next turns" },
  { name: "compact", summary: "summarise the session's older turns now, to free context" },
  { name: "undo", args: "[--force]", summary: "undo the last turn: the files it changed (shell included) and the conversation" },
  { name: "redo", args: "[--force]", summary: "take back the last /undo" },
  { name: "export", args: "[md|json] [file]", summary: "write the session to a file (default reins-<session>.md here)" },
  { name: "copy", summary: "copy the last answer to the clipboard (OSC 52)" },
  { name: "jobs", args: "[kill ID]", summary: "list the agent's background jobs, or stop one" },
  { name: "help", summary: "keys and commands" },
  { name: "exit", summary: "leave (Ctrl+D does too)" }
]

/**
 * The commands whose name starts with what follows the `/` typed so far (only while the first word is typed): the
 * built-in ones, then `custom` (the project's and the user's commands).
 */
export const matches = (text: string, custom: ReadonlyArray<SlashCommand> = []): ReadonlyArray<SlashCommand> => {
  if (!text.startsWith("/") || /\s/.test(text)) return []
  const typed = text.slice(1).toLowerCase()
  return [...SLASH_COMMANDS, ...custom].filter((c) => c.name.toLowerCase().startsWith(typed))
}

/** Tab: the text completed to the single match, or to the matches' longest common prefix. */
export const complete = (text: string, custom: ReadonlyArray<SlashCommand> = []): string | undefined => {
  const found = matches(text, custom)
  if (found.length === 0) return undefined
  if (found.length === 1) return `/${found[0]!.name} `
  const names = found.map((c) => c.name)
  let prefix = names[0]!
  for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix.length + 1 > text.length ? `/${prefix}` : undefined
}

/** A slash command line split into its command and argument words; undefined if it is not one. */
export const parseSlash = (text: string): { readonly name: string; readonly args: ReadonlyArray<string> } | undefined => {
  const line = text.trim()
  if (!line.startsWith("/") || line.startsWith("//")) return undefined
  const [head, ...args] = line.slice(1).split(/\s+/)
  return head ? { name: head.toLowerCase(), args } : undefined
}

/** The help text `/help` prints. */
export const HELP = [
  "Keys:",
  "  Enter            send (while a turn runs: queue the message into that turn)",
  "  Alt+Enter, \\ then Enter, Shift+Enter (terminals with the kitty keyboard protocol)   new line",
  "  Up / Down        previous / next prompt of this project",
  "  Tab              complete a /command, or an @path (a file you mention is attached)",
  "  !command         run a command of yours in the project: its output goes to the model with your next message",
  "  Esc, Ctrl+C      interrupt the running turn",
  "  Esc Esc          rewind: pick a message you sent, undo back to before it (files and conversation)",
  "  Ctrl+C twice on an empty prompt, Ctrl+D   exit",
  "  Ctrl+O           expand / collapse tool results",
  "Commands:",
  ...SLASH_COMMANDS.map((c) => `  /${`${c.name}${c.args ? ` ${c.args}` : ""}`.padEnd(26)}${c.summary}`)
].join("\n")
