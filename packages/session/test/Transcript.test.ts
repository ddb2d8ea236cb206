// Transcript: a turn's window kept in memory across steps — only what changed is read, a message
// queued behind the step's id is still seen, and a reset reads everything again. Memory and SQLite.
import { describe, expect, test } from "bun:test"
import { Effect, type Layer } from "effect"
import type { AssistantMessage, Message, MessageWithParts, Part, UserMessage } from "@reins/domain"
import { RunClaims, SessionStore, Storage } from "@reins/storage"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeTranscript } from "../src/Transcript.ts"

const SESSION = "ses_transcript"
const user = (id: string, queued = false): UserMessage => ({
  id,
  sessionID: SESSION,
  role: "user",
  time: { created: 1 },
  ...(queued ? { metadata: { queued: true } } : {})
})
const assistant = (id: string): AssistantMessage => ({
  id,
  sessionID: SESSION,
  role: "assistant",
  parentID: "msg_01",
  model: { providerID: "p", modelID: "m" },
  time: { created: 1 },
  usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: 0
})
const text = (id: string, messageID: string, value: string): Part => ({ id, sessionID: SESSION, messageID, type: "text", text: value })

const layers: ReadonlyArray<readonly [string, () => Layer.Layer<Storage.Services, unknown>]> = [
  ["memory", () => Storage.layerMemory],
  ["sqlite", () => Storage.layerSqlite(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-transcript-")), "reins.db"))]
]

const ids = (messages: ReadonlyArray<MessageWithParts>) => messages.map((m) => m.info.id)

describe.each(layers)("Transcript (%s)", (_name, layer) => {
  const run = <A>(
    body: (put: (message: Message, ...parts: Array<Part>) => Effect.Effect<void, unknown>) => Effect.Effect<A, unknown, SessionStore | RunClaims>
  ) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.createSession({ id: SESSION, title: "t", directory: "/tmp", time: { created: 0, updated: 0 } })
        const put = (message: Message, ...parts: Array<Part>) =>
          Effect.andThen(
            store.putMessage(message),
            Effect.forEach(parts, (p) => store.putPart(p), { discard: true })
          )
        return yield* body(put)
      }).pipe(Effect.provide(layer()))
    )

  test("a step reads only what changed: its own message as it ended, older messages kept as the same objects", async () => {
    await run((put) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const transcript = makeTranscript(store, yield* RunClaims, SESSION)
        yield* put(user("msg_01"), text("prt_01", "msg_01", "go"))
        const first = yield* transcript.read(() => 0)
        expect(ids(first)).toEqual(["msg_01"])
        yield* put(assistant("msg_02"))
        transcript.from("msg_02")
        yield* put(assistant("msg_02"), text("prt_02", "msg_02", "half"))
        yield* store.putPart(text("prt_02", "msg_02", "whole"))
        const second = yield* transcript.read(() => 0)
        expect(ids(second)).toEqual(["msg_01", "msg_02"])
        expect(second[0]).toBe(first[0]!)
        expect(second[1]!.parts).toEqual([text("prt_02", "msg_02", "whole")])
      })
    )
  })

  test("a message queued with an older id than the step's, stored after the last read, is read at the next step", async () => {
    await run((put) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const claims = yield* RunClaims
        const held = yield* claims.claim({ sessionID: SESSION, holder: "h/1/test", host: "h", pid: 1, takesMessages: true, ttlMs: 600_000 })
        expect(held._tag).toBe("claimed")
        const transcript = makeTranscript(store, claims, SESSION)
        yield* put(user("msg_01"), text("prt_01", "msg_01", "go"))
        // what the turn counts as seen: queued user messages it has read
        let seen = 0
        const known = new Set<string>(["msg_01"])
        const count = (messages: ReadonlyArray<MessageWithParts>) => {
          for (const m of messages) {
            if (m.info.role !== "user" || known.has(m.info.id)) continue
            known.add(m.info.id)
            seen++
          }
          return seen
        }
        yield* transcript.read(count)
        yield* put(assistant("msg_03"))
        transcript.from("msg_03")
        // another process made its message (msg_02) before the step's, and stores it only now
        expect(yield* claims.queue(user("msg_02", true), [text("prt_q", "msg_02", "also this")])).toBeDefined()
        const next = yield* transcript.read(count)
        expect(ids(next)).toEqual(["msg_01", "msg_02", "msg_03"])
        expect(seen).toBe(1)
        // nothing more queued: the next read is again only from the step on
        yield* put(assistant("msg_04"))
        transcript.from("msg_04")
        expect(ids(yield* transcript.read(count))).toEqual(["msg_01", "msg_02", "msg_03", "msg_04"])
      })
    )
  })

  test("after a reset (a compaction changed old messages) everything is read again", async () => {
    await run((put) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const transcript = makeTranscript(store, yield* RunClaims, SESSION)
        yield* put(user("msg_01"), text("prt_01", "msg_01", "go"))
        yield* put(assistant("msg_02"), text("prt_02", "msg_02", "old"))
        yield* transcript.read(() => 0)
        transcript.from("msg_03")
        // an old part changes (as pruning does): a read from the step on does not see it…
        yield* store.putPart(text("prt_02", "msg_02", "pruned"))
        const partial = yield* transcript.read(() => 0)
        expect(partial[1]!.parts[0]).toMatchObject({ text: "old" })
        // …a read after a reset does
        transcript.reset()
        const whole = yield* transcript.read(() => 0)
        expect(whole[1]!.parts[0]).toMatchObject({ text: "pruned" })
      })
    )
  })
})
