// The run claim that lets another process queue a message for a running turn (T5) — the same
// behaviour from both databases; a queued message is read back through SessionStore.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { claim, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

const alive = () => true
const dead = () => false

for (const [name, makeLayer] of implementations) {
  describe(`RunClaims (${name})`, () => {
    test("a live claim holds the session; a dead one is taken over; the same claim again is a no-op", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const first = yield* claims.claim(claim("ses_a", 100), alive)
          const again = yield* claims.claim(claim("ses_a", 100), alive)
          const blocked = yield* claims.claim(claim("ses_a", 200), alive)
          const takenOver = yield* claims.claim(claim("ses_a", 200), dead)
          yield* claims.heartbeat(claim("ses_a", 200), 50)
          // a heartbeat of a claim that no longer holds the session changes nothing
          yield* claims.heartbeat(claim("ses_a", 100), 99)
          return { first, again, blocked, takenOver, held: yield* claims.get("ses_a") }
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
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const idle = userMessage("msg_001", "ses_a")
          const notQueued = yield* claims.queue(idle, [textPart("prt_001", idle, "hello")], alive)
          const storedWhileIdle = (yield* store.messages("ses_a")).length
          const runner = claim("ses_a", 100)
          yield* claims.claim(runner, alive)
          const deadRunner = yield* claims.queue(idle, [textPart("prt_001", idle, "hello")], dead)
          const queued = yield* claims.queue(idle, [textPart("prt_001", idle, "hello")], alive)
          const early = yield* claims.release(runner, 0)
          const stillHeld = yield* claims.get("ses_a")
          const released = yield* claims.release(runner, 1)
          const after = yield* claims.get("ses_a")
          const twice = yield* claims.release(runner, 1)
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
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          yield* claims.claim({ ...claim("ses_a", 100), queued: -1 }, alive)
          const m = userMessage("msg_001", "ses_a")
          return { queued: yield* claims.queue(m, [textPart("prt_001", m, "hi")], alive), messages: yield* store.messages("ses_a") }
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
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          yield* claims.claim(claim("ses_a", 100, 1), alive)
          yield* claims.claim(claim("ses_a", 100, 2), dead)
          const old = yield* claims.release(claim("ses_a", 100, 1), 0)
          return { old, held: yield* claims.get("ses_a") }
        })
      )
      expect(result.old).toBe(true)
      expect(result.held?.time.started).toBe(2)
    })
  })
}
