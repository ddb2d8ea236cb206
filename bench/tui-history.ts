// For bench/tui.ts: sessions with a long history to open in the interactive UI. One real turn is recorded by
// `reins run` against the scripted server (a bash call, a write, an edit, a markdown answer: 5 messages), then copied
// through the storage API under fresh ascending ids until the session holds the wanted number of messages.
import { makeAscending, type Prefix } from "@reins/domain"
import { SessionStore, Storage, type MessageWithParts } from "@reins/storage"
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import { Effect } from "effect"
import * as path from "node:path"
import { measure } from "./support.ts"

/** The marker in the answer of copy `turn` (4 digits), so the last message of a session can be recognised on screen. */
export const turnMarker = (turn: number) => `TURN-${String(turn).padStart(4, "0")}`

const answer = [
  "Done. The note is in `notes.md`:",
  "",
  "- **bash** printed the date",
  "- **write** created the file, **edit** fixed its title",
  "",
  "```ts",
  "export const note = (title: string) => `# ${title}`",
  "```",
  "",
  turnMarker(0)
].join("\n")

const turnSteps: Array<ScriptedStep> = [
  { toolCalls: [{ name: "bash", arguments: { command: "echo checked the date" } }] },
  { toolCalls: [{ name: "write", arguments: { filePath: "notes.md", content: "# Notse\n\nFirst line.\nSecond line.\n" } }] },
  { toolCalls: [{ name: "edit", arguments: { filePath: "notes.md", oldString: "# Notse", newString: "# Notes" } }] },
  { text: answer }
]

/** Records one turn with `reins run` (`bin`) in the project (`pointAt` sets its model's server); returns its session id. */
export const recordTurn = async (bin: string, cwd: string, env: Record<string, string>, pointAt: (url: string) => void) => {
  const server = await startScriptedServer(turnSteps)
  pointAt(server.url)
  const sample = await measure([bin, "run", "--yolo", "--format", "json", "write a note"], cwd, env, '"type"')
  await server.stop()
  const ended = sample.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { sessionID?: string })
  const id = ended.find((e) => e.sessionID !== undefined)?.sessionID
  if (!id) throw new Error(`reins run gave no session id:\n${sample.stdout.slice(0, 2000)}`)
  return id
}

/** Ids in a stored message: its own, its session's, its parts' and their tool calls'. */
const idsOf = (m: MessageWithParts): Array<string> => [
  m.info.id,
  ...m.parts.flatMap((p) => [p.id, ...("callID" in p && typeof p.callID === "string" ? [p.callID] : [])])
]

/**
 * Stores a new session with `count` messages: copies of the template session's messages, turn after turn, each copy
 * under new ids and with its answer's marker numbered. Returns the new session's id and the marker of its last turn.
 */
export const buildHistory = (dataDir: string, templateID: string, count: number) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const template = yield* store.getSession(templateID)
    const messages = yield* store.messages(templateID)
    const ascending = makeAscending()
    let clock = template.time.created - 86_400_000
    const next = (prefix: Prefix) => ascending(prefix, clock++, Math.random)
    const sessionID = next("ses")
    yield* store.createSession({ ...template, id: sessionID, title: `bench history ${count}`, time: { created: clock, updated: clock } })
    let stored = 0
    let turn = 0
    while (stored < count) {
      turn++
      const ids = new Map<string, string>([[templateID, sessionID]])
      for (const m of messages) for (const id of idsOf(m)) ids.set(id, next(id.startsWith("msg_") ? "msg" : "prt"))
      for (const m of messages.slice(0, count - stored)) {
        let json = JSON.stringify(m)
        for (const [from, to] of ids) json = json.replaceAll(from, to)
        const copy = JSON.parse(json.replaceAll(turnMarker(0), turnMarker(turn))) as MessageWithParts
        yield* store.putMessage(copy.info)
        yield* store.putParts(copy.parts)
        stored++
      }
    }
    return { sessionID, lastMarker: turnMarker(turn), messagesPerTurn: messages.length }
  }).pipe(Effect.provide(Storage.layerSqlite(path.join(dataDir, "reins.db"))))
