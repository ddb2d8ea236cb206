// Reading from a compaction boundary, finding summaries, and the run claim that lets another
// process queue a message for a running turn (T5) — the same behaviour from both stores.
import { describe, expect, test } from "bun:test"
import type { AssistantMessage, Message } from "@reins/domain"
import { Effect } from "effect"
import { SessionStore } from "../src/SessionStore.ts"
import { assistantMessage, claim, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

const summary = (id: string, sessionID: string, tailStart?: string): AssistantMessage => ({
  ...(assistantMessage(id, sessionID, "msg_001") as AssistantMessage),
  time: { created: 2_000, completed: 2_500 },
  summary: { ...(tailStart ? { tailStart } : {}), summarised: [], pinned: [], auto: true }
})

const alive = () => true
const dead = () => false

for (const [name, makeLayer] of implementations) {
  describe(`SessionStore windows and runs (${name})`, () => {
    test("messages from a boundary: later messages, listed earlier ones, their parts; other sessions untouched", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          const messages: Array<Message> = ["msg_001", "msg_002", "msg_003", "msg_004", "msg_005"].map((id) => userMessage(id, "ses_a"))
          for (const m of [...messages, userMessage("msg_0035", "ses_b")]) yield* store.putMessage(m)
          for (const [i, m] of messages.entries()) yield* store.putPart(textPart(`prt_00${i}`, m, `text ${i}`))
          return {
            window: yield* store.messages("ses_a", { from: "msg_003", include: ["msg_001"] }),
            fromOnly: yield* store.messages("ses_a", { from: "msg_004" }),
            beyond: yield* store.messages("ses_a", { from: "msg_999", include: ["msg_002", "msg_0035"] }),
            all: yield* store.messages("ses_a")
          }
        })
      )
      expect(shape(result.window)).toEqual([["msg_001", ["prt_000"]], ["msg_003", ["prt_002"]], ["msg_004", ["prt_003"]], ["msg_005", ["prt_004"]]])
      expect(shape(result.fromOnly).map(([id]) => id)).toEqual(["msg_004", "msg_005"])
      // an included id of another session is not read
      expect(shape(result.beyond)).toEqual([["msg_002", ["prt_001"]]])
      expect(result.all).toHaveLength(5)
    })

    test("latestSummary: the newest summary that finished without error", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          yield* store.putMessage(userMessage("msg_001", "ses_a"))
          yield* store.putMessage(summary("msg_002", "ses_a"))
          yield* store.putMessage(assistantMessage("msg_003", "ses_a", "msg_001"))
          yield* store.putMessage(summary("msg_004", "ses_a", "msg_003"))
          // newer, but failed or unfinished
          yield* store.putMessage({ ...summary("msg_005", "ses_a"), error: { reason: "x", message: "failed" } })
          const { completed: _c, ...unfinished } = summary("msg_006", "ses_a").time as { created: number; completed?: number }
          yield* store.putMessage({ ...summary("msg_006", "ses_a"), time: unfinished })
          yield* store.putMessage(summary("msg_007", "ses_b"))
          return { a: yield* store.latestSummary("ses_a"), none: yield* store.latestSummary("ses_zzz") }
        })
      )
      expect(result.a?.id).toBe("msg_004")
      expect(result.a?.summary?.tailStart).toBe("msg_003")
      expect(result.none).toBeUndefined()
    })

    test("a live claim holds the session; a dead one is taken over; the same claim again is a no-op", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          const first = yield* store.claimRun(claim("ses_a", 100), alive)
          const again = yield* store.claimRun(claim("ses_a", 100), alive)
          const blocked = yield* store.claimRun(claim("ses_a", 200), alive)
          const takenOver = yield* store.claimRun(claim("ses_a", 200), dead)
          yield* store.heartbeatRun(claim("ses_a", 200), 50)
          // a heartbeat of a claim that no longer holds the session changes nothing
          yield* store.heartbeatRun(claim("ses_a", 100), 99)
          return { first, again, blocked, takenOver, held: yield* store.getRun("ses_a") }
        })
      )
      expect(result.first).toBeUndefined()
      expect(result.again).toBeUndefined()
      expect(result.blocked?.pid).toBe(100)
      expect(result.takenOver).toBeUndefined()
      expect(result.held).toEqual({ ...claim("ses_a", 200), time: { started: 1, heartbeat: 50 } })
    })

    test("a message is queued only for a live run; release waits until the run has seen every queued message", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          const idle = userMessage("msg_001", "ses_a")
          const notQueued = yield* store.queueMessage(idle, [textPart("prt_001", idle, "hello")], alive)
          const storedWhileIdle = (yield* store.messages("ses_a")).length
          const runner = claim("ses_a", 100)
          yield* store.claimRun(runner, alive)
          const deadRunner = yield* store.queueMessage(idle, [textPart("prt_001", idle, "hello")], dead)
          const queued = yield* store.queueMessage(idle, [textPart("prt_001", idle, "hello")], alive)
          const early = yield* store.releaseRun(runner, 0)
          const stillHeld = yield* store.getRun("ses_a")
          const released = yield* store.releaseRun(runner, 1)
          const after = yield* store.getRun("ses_a")
          const twice = yield* store.releaseRun(runner, 1)
          return { notQueued, storedWhileIdle, deadRunner, queued, early, stillHeld, released, after, twice, messages: yield* store.messages("ses_a") }
        })
      )
      expect(result.notQueued).toBeUndefined()
      expect(result.storedWhileIdle).toBe(0)
      expect(result.deadRunner).toBeUndefined()
      expect(result.queued?.pid).toBe(100)
      expect(result.queued?.queued).toBe(1)
      expect(result.early).toBe(false)
      expect(result.stillHeld?.queued).toBe(1)
      expect(result.released).toBe(true)
      expect(result.after).toBeUndefined()
      expect(result.twice).toBe(true)
      expect(shape(result.messages)).toEqual([["msg_001", ["prt_001"]]])
    })

    test("a claim that takes no messages (queued -1, a compaction) refuses queued messages", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.claimRun({ ...claim("ses_a", 100), queued: -1 }, alive)
          const m = userMessage("msg_001", "ses_a")
          return { queued: yield* store.queueMessage(m, [textPart("prt_001", m, "hi")], alive), messages: yield* store.messages("ses_a") }
        })
      )
      expect(result.queued).toBeUndefined()
      expect(result.messages).toEqual([])
    })

    test("a release by a claim that was taken over leaves the new claim alone", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.claimRun(claim("ses_a", 100, 1), alive)
          yield* store.claimRun(claim("ses_a", 100, 2), dead)
          const old = yield* store.releaseRun(claim("ses_a", 100, 1), 0)
          return { old, held: yield* store.getRun("ses_a") }
        })
      )
      expect(result.old).toBe(true)
      expect(result.held?.time.started).toBe(2)
    })
  })
}
