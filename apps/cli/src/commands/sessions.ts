import { Console, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { userFlag, type AssistantMessage, type Part } from "@reins/domain"
import { withoutRuntimeHints } from "@reins/provider"
import { SessionStore, type MessageWithParts } from "@reins/storage"
import { plural } from "../Output.ts"
import { time, withStore } from "../Store.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
const id = Argument.String("id").pipe(Argument.withDescription("Session id (see reins sessions list)"))

const PRUNED_NOTE = "(pruned for the model)"

const renderPart = (part: Part): string | undefined => {
  switch (part.type) {
    case "text":
      return part.text
    case "reasoning":
      return `(thinking) ${part.text.split("\n")[0]}`
    case "tool": {
      const s = part.state
      const head = `[${part.tool}] ${JSON.stringify(s.input)}`
      if (s.status === "completed") {
        // the store keeps the whole output; the model only sees the pruned text since the compaction
        const pruned = s.time.compacted !== undefined ? ` ${PRUNED_NOTE}` : ""
        return `${head} → ${s.output.split("\n").slice(0, 3).join(" ⏎ ").slice(0, 200)}${pruned}`
      }
      if (s.status === "error") return `${head} ✗ ${s.interrupted ? "interrupted" : s.error.split("\n")[0]}`
      return `${head} (${s.status})`
    }
    default:
      return undefined
  }
}

/** Tool parts a compaction pruned: stamped `time.compacted` while it ran. */
const prunedBy = (summary: AssistantMessage, messages: ReadonlyArray<MessageWithParts>) => {
  const start = summary.time.created
  const end = summary.time.completed ?? start
  return messages
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p.state.status === "completed" && p.state.time.compacted !== undefined && p.state.time.compacted >= start && p.state.time.compacted <= end)
    .length
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((line) => (line === "" ? "" : `  ${line}`))
    .join("\n")

/**
 * The text view: a compaction's summary is a marker line and the summary, indented; the loop's
 * continuation after a compaction (`compaction_continue`) is hidden. `--format json` shows everything.
 */
const renderMessages = (messages: ReadonlyArray<MessageWithParts>) => {
  // a summary lists the messages of the summary it updates too; count each once, where it was first summarised
  const seen = new Set<string>()
  return messages
    .flatMap(({ info, parts }) => {
      if (info.role === "user" && userFlag(info, "compaction_continue")) return []
      const body = parts.flatMap((p) => renderPart(p) ?? []).join("\n")
      if (info.role === "assistant" && info.summary) {
        const fresh = info.summary.summarised.filter((id) => !seen.has(id))
        for (const id of fresh) seen.add(id)
        const what = `${plural(fresh.length, "message", "messages")} summarised, ${plural(prunedBy(info, messages), "tool output", "tool outputs")} pruned`
        const error = info.error ? `\n  error (${info.error.reason}): ${withoutRuntimeHints(info.error.message)}` : ""
        return [`── compacted (${info.summary.auto ? "auto" : "manual"}): ${what} ──${error}\nsummary:\n${indent(body)}`]
      }
      const extra = info.role === "assistant" && info.error ? `\n  error (${info.error.reason}): ${withoutRuntimeHints(info.error.message)}` : ""
      return [`── ${info.role} ${time(info.time.created)}${extra}\n${body}`]
    })
    .join("\n\n")
}

const list = Command.make("list", { format }, ({ format }) =>
  withStore(() =>
    Effect.gen(function* () {
      const sessions = yield* (yield* SessionStore).listSessions({ limit: 100 })
      if (format === "json") return yield* Console.log(JSON.stringify(sessions, null, 2))
      if (sessions.length === 0) return yield* Console.log('No sessions yet. Start one with: reins run "…"')
      for (const s of sessions) yield* Console.log(`${s.id}  ${time(s.time.updated)}  ${s.title}  (${s.directory})`)
    })
  )
).pipe(Command.withDescription("List sessions, newest first"))

const show = Command.make("show", { id, format }, ({ id, format }) =>
  withStore(() =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* store.getSession(id)
      const messages = yield* store.messages(id)
      if (format === "json") return yield* Console.log(JSON.stringify({ session, messages }, null, 2))
      yield* Console.log(`${session.title}\n${session.id} · ${session.directory} · ${time(session.time.created)}\n`)
      yield* Console.log(renderMessages(messages))
    })
  )
).pipe(Command.withDescription("Show a session's messages"))

const exportCmd = Command.make("export", { id }, ({ id }) =>
  withStore(() =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* store.getSession(id)
      const messages = yield* store.messages(id)
      yield* Console.log(JSON.stringify({ version: 1, session, messages }, null, 2))
    })
  )
).pipe(Command.withDescription("Export a session as JSON"))

/** `reins sessions list|show|export`. */
export const sessions = Command.make("sessions").pipe(
  Command.withDescription("List, show and export stored sessions"),
  Command.withSubcommands([list, show, exportCmd])
)
