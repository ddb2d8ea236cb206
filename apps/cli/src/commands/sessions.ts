import { Console, Effect, Layer } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { addUsage, Bus, emptyUsage, userFlag, type AssistantMessage, type Part, type Session } from "@reins/domain"
import { withoutRuntimeHints } from "@reins/provider"
import { EventAppender, RunSettings, SessionRuns, removeSession, runTimingFromEnv } from "@reins/session"
import { SessionStore, type MessageWithParts, type SessionTotals } from "@reins/storage"
import { failure } from "../CliError.ts"
import { plural } from "../Output.ts"
import { plain, styleFor, type Style } from "../present/Style.ts"
import { toolLine } from "../present/ToolSummary.ts"
import { cost as dollars, tokens } from "../present/Units.ts"
import { cacheLine, emptyTotals, usageLine, type UsageTotals } from "../present/Usage.ts"
import { time, withStore } from "../Store.ts"
import { fork } from "./fork.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
const id = Argument.String("id").pipe(Argument.withDescription("Session id (see reins sessions list)"))

const PRUNED_NOTE = "(pruned for the model)"

/** One part as text: a tool call is one line with its outcome (`✓ bash npm test · exit 0 · 1.2s`), never raw JSON. */
const renderPart = (part: Part, style: Style, cwd: string): string | undefined => {
  switch (part.type) {
    case "text":
      return part.text
    case "reasoning":
      return style.dim(`(thinking) ${part.text.split("\n")[0]}`)
    case "tool": {
      const s = part.state
      // the store keeps the whole output; the model only sees the pruned text since the compaction
      const pruned = s.status === "completed" && s.time.compacted !== undefined ? ` ${style.dim(PRUNED_NOTE)}` : ""
      return `${toolLine(part, style, { cwd })}${pruned}`
    }
    case "file":
      return style.dim(`[file] ${part.filename ?? "unnamed"} (${part.mime})`)
    case "patch":
      return part.files.length === 0 ? undefined : style.dim(`[changed] ${part.files.map((f) => f.path).join(", ")}`)
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
    .filter(
      (p) =>
        p.type === "tool" &&
        p.state.status === "completed" &&
        p.state.time.compacted !== undefined &&
        p.state.time.compacted >= start &&
        p.state.time.compacted <= end
    ).length
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
const renderMessages = (messages: ReadonlyArray<MessageWithParts>, style: Style = plain, cwd = "") => {
  // a summary lists the messages of the summary it updates too; count each once, where it was first summarised
  const seen = new Set<string>()
  return messages
    .flatMap(({ info, parts }) => {
      if (info.role === "user" && userFlag(info, "compaction_continue")) return []
      const body = parts.flatMap((p) => renderPart(p, style, cwd) ?? []).join("\n")
      if (info.role === "assistant" && info.summary) {
        const fresh = info.summary.summarised.filter((id) => !seen.has(id))
        for (const id of fresh) seen.add(id)
        const what = `${plural(fresh.length, "message", "messages")} summarised, ${plural(prunedBy(info, messages), "tool output", "tool outputs")} pruned`
        const error = info.error ? `\n  error (${info.error.reason}): ${withoutRuntimeHints(info.error.message)}` : ""
        return [`── compacted (${info.summary.auto ? "auto" : "manual"}): ${what} ──${error}\nsummary:\n${indent(body)}`]
      }
      const extra = info.role === "assistant" && info.error ? `\n  error (${info.error.reason}): ${withoutRuntimeHints(info.error.message)}` : ""
      const cache = info.role === "assistant" ? cacheLine(info.usage) : undefined
      const model =
        info.role === "assistant" ? ` ${style.dim(`· ${info.model.providerID}/${info.model.modelID}${cache === undefined ? "" : ` · ${cache}`}`)}` : ""
      return [`── ${info.role} ${time(info.time.created)}${model}${extra}\n${body}`]
    })
    .join("\n\n")
}

/** A session's totals in the shape of a turn's closing line: its own steps, its sub-agents' tokens and cost counted in. */
const asTotals = (t: SessionTotals | undefined): UsageTotals =>
  t === undefined ? emptyTotals : { ...addUsage(t.usage, t.subAgents?.usage ?? emptyUsage), steps: t.steps, cost: t.cost + (t.subAgents?.cost ?? 0) }

/**
 * `sessions list --format json`: each session with its model, message count, tokens and cost. Its
 * `tokens` and `cost` count in those of its sub-agents (T19), which `subAgents` gives apart (and
 * their sessions list on their own rows too).
 */
const listEntry = (session: Session, t: SessionTotals | undefined) => {
  const all = asTotals(t)
  return {
    ...session,
    // a sub-agent's session names the session whose `task` call started it; null for a top-level one
    parentID: session.parentID ?? null,
    model: t?.model === undefined ? null : `${t.model.providerID}/${t.model.modelID}`,
    messages: t?.messages ?? 0,
    tokens: { input: all.input, output: all.output, reasoning: all.reasoning, cacheRead: all.cacheRead, cacheWrite: all.cacheWrite },
    cost: all.cost,
    subAgents: t?.subAgents === undefined ? null : { sessions: t.subAgents.sessions, tokens: t.subAgents.usage, cost: t.subAgents.cost }
  }
}

/** `sub-agents: 3 sessions · 12k in / 800 out · $0.02`, when a session started any. */
const subAgentsLine = (t: SessionTotals | undefined, style: Style) =>
  t?.subAgents === undefined
    ? undefined
    : style.dim(
        `including sub-agents: ${plural(t.subAgents.sessions, "session", "sessions")} ${style.glyphs.dot} ${tokens(t.subAgents.usage.input + t.subAgents.usage.cacheRead + t.subAgents.usage.cacheWrite)} in / ${tokens(t.subAgents.usage.output)} out ${style.glyphs.dot} ${dollars(t.subAgents.cost)}`
      )

/** Sessions newest first, each sub-agent's session right under the session that started it (depth: how far down). */
const underParents = (sessions: ReadonlyArray<Session>) => {
  const ids = new Set(sessions.map((s) => s.id))
  const children = new Map<string, Array<Session>>()
  for (const s of sessions) if (s.parentID !== undefined && ids.has(s.parentID)) children.set(s.parentID, [...(children.get(s.parentID) ?? []), s])
  const out: Array<{ readonly session: Session; readonly depth: number }> = []
  const visit = (s: Session, depth: number) => {
    out.push({ session: s, depth })
    // in the order they were started
    for (const c of [...(children.get(s.id) ?? [])].reverse()) if (depth < 8) visit(c, depth + 1)
  }
  for (const s of sessions) if (s.parentID === undefined || !ids.has(s.parentID)) visit(s, 0)
  return out
}

const list = Command.make("list", { format }, ({ format }) =>
  withStore((setup) =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const sessions = yield* store.listSessions({ limit: 100 })
      const totals = yield* store.totals(sessions.map((s) => s.id))
      if (format === "json")
        return yield* Console.log(
          JSON.stringify(
            sessions.map((s) => listEntry(s, totals.get(s.id))),
            null,
            2
          )
        )
      if (sessions.length === 0) return yield* Console.log('No sessions yet. Start one with: reins run "…"')
      const style = styleFor(process.stdout, setup.env)
      const ordered = underParents(sessions)
      const rows = ordered.map(({ session: s }) => {
        const t = listEntry(s, totals.get(s.id))
        const prompt = t.tokens.input + t.tokens.cacheRead + t.tokens.cacheWrite
        return [
          s.id,
          time(s.time.updated),
          t.model ?? "-",
          plural(t.messages, "message", "messages"),
          `${tokens(prompt)} in / ${tokens(t.tokens.output)} out`,
          dollars(t.cost)
        ]
      })
      // columns padded to their widest cell; the title and directory last, free length
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
      for (const [i, { session: s, depth }] of ordered.entries()) {
        const cells = rows[i]!.map((cell, c) => (c === 0 ? cell.padEnd(widths[0]!) : c === 3 || c === 5 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        const lead = depth === 0 ? "" : `${"  ".repeat(depth - 1)}└ `
        yield* Console.log(
          `${lead}${style.bold(cells[0]!)}  ${style.dim(cells[1]!)}  ${cells.slice(2).join("  ")}  ${s.title}  ${style.dim(`(${s.directory})`)}`
        )
      }
    })
  )
).pipe(Command.withDescription("List sessions, newest first, with their model, messages, tokens and cost"))

const show = Command.make("show", { id, format }, ({ id, format }) =>
  withStore((setup) =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* store.getSession(id)
      const messages = yield* store.messages(id)
      // the sessions of the sub-agents its `task` calls started
      const children = (yield* store.listSessions({ directory: session.directory })).filter((s) => s.parentID === id).reverse()
      if (format === "json") return yield* Console.log(JSON.stringify({ session, children, messages }, null, 2))
      const style = styleFor(process.stdout, setup.env)
      const totals = (yield* store.totals([id])).get(id)
      const cache = cacheLine(asTotals(totals))
      const parent = session.parentID === undefined ? "" : `\n${style.dim(`sub-agent session of ${session.parentID}`)}`
      const subs = children.length === 0 ? "" : `\n${style.dim("sub-agents:")}\n${children.map((c) => `  └ ${c.id}  ${c.title}`).join("\n")}`
      const spent = subAgentsLine(totals, style)
      yield* Console.log(
        `${style.bold(session.title)}\n${session.id} · ${session.directory} · ${time(session.time.created)}${parent}\n${usageLine(asTotals(totals), style)}${spent === undefined ? "" : `\n${spent}`}${cache === undefined ? "" : `\n${style.dim(cache)}`}${subs}\n`
      )
      yield* Console.log(renderMessages(messages, style, session.directory))
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

/**
 * `sessions delete ID`: the session with its messages and parts, as every front end deletes it
 * (`removeSession`): a turn another reins process is running on it is stopped first, then the
 * session deleted once released; a claim left by a process that died is not in the way.
 */
const deleteCmd = Command.make("delete", { id }, ({ id }) =>
  withStore((setup) =>
    Effect.gen(function* () {
      const timing = runTimingFromEnv(setup.env) ?? (yield* RunSettings)
      // this process runs no turn: nothing is stopped here
      // the deletion is logged (session.deleted) for followers on any process, as the runtime's remove does
      const removed = yield* removeSession(() => Effect.void)(id).pipe(
        Effect.provide(Layer.merge(SessionRuns.layer, EventAppender.layer.pipe(Layer.provide(Bus.layer)))),
        Effect.provideService(RunSettings, timing),
        Effect.catchTag("SessionBusyError", (busy) => Effect.fail(failure(busy.message)))
      )
      const stopped = removed.stopped === "elsewhere" ? "; its running turn was stopped first" : ""
      const note = removed.commands === 0 ? "" : `; stopped ${plural(removed.commands, "command", "commands")} its last run left running`
      const subAgents = removed.subAgents === 0 ? "" : `, ${plural(removed.subAgents, "sub-agent session", "sub-agent sessions")}`
      yield* Console.log(`Deleted session ${id} (${removed.session.title}; ${plural(removed.messages, "message", "messages")}${subAgents}${stopped}${note}).`)
    })
  )
).pipe(Command.withDescription("Delete a session with its messages and its sub-agents' sessions (a turn running on it is stopped first)"))

/** `reins sessions list|show|export|fork|delete`. */
export const sessions = Command.make("sessions").pipe(
  Command.withDescription("List, show, export, fork and delete stored sessions"),
  Command.withSubcommands([list, show, exportCmd, fork, deleteCmd])
)
