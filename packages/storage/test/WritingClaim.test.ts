// Writes under a claim (a running turn's): once another process has taken the session over, the
// old claim writes nothing, whichever write it is; other sessions and claim-less writes are untouched.
import { describe, expect, test } from "bun:test"
import type { Session } from "@reins/domain"
import { Effect } from "effect"
import { WritingClaim } from "../src/Claim.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { assistantMessage, claim, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

const dead = () => false

for (const [name, makeLayer] of implementations) {
  describe(`writes under a claim (${name})`, () => {
    test("the holder writes; after a takeover every kind of write fails with taken-over and changes nothing", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          const mine = claim("ses_a", 100)
          yield* claims.claim(mine, dead)
          const user = userMessage("msg_001", "ses_a")
          const under = <A, E>(effect: Effect.Effect<A, E>) => Effect.provideService(effect, WritingClaim, mine)
          // while held: writes go through
          yield* under(store.putMessage(user))
          yield* under(store.putPart(textPart("prt_001", user, "before")))
          const beatWhileHeld = yield* claims.heartbeat(mine, 10)
          // another process (another pid, another host) takes the stale claim over
          const theirs = claim("ses_a", 200, 5, "other-box")
          yield* claims.claim(theirs, dead)
          const before = yield* store.messages("ses_a")
          const assistant = assistantMessage("msg_002", "ses_a", "msg_001")
          const renamed: Session = { ...session("ses_a"), title: "renamed by the old claim" }
          const writes = [
            store.putMessage(assistant),
            store.putMessage({ ...user, metadata: { changed: true } }),
            store.putPart(textPart("prt_001", user, "overwritten")),
            store.putPart(textPart("prt_002", user, "new")),
            store.putParts([textPart("prt_003", user, "batch"), textPart("prt_004", user, "batch")]),
            store.updateSession(renamed)
          ]
          const failures = []
          for (const write of writes) failures.push(yield* Effect.flip(under(write)))
          const beatAfter = yield* claims.heartbeat(mine, 20)
          // a write to another session, and the same write without the claim, are not guarded
          const other = userMessage("msg_101", "ses_b")
          yield* under(store.putMessage(other))
          yield* store.putPart(textPart("prt_005", user, "claim-less"))
          return {
            beatWhileHeld,
            beatAfter,
            failures,
            before: shape(before),
            after: yield* store.messages("ses_a"),
            title: (yield* store.getSession("ses_a")).title,
            other: (yield* store.messages("ses_b")).length,
            holder: yield* claims.get("ses_a")
          }
        })
      )
      expect(result.beatWhileHeld).toBe(true)
      expect(result.beatAfter).toBe(false)
      expect(result.failures.map((e) => e.reason)).toEqual(Array(6).fill("taken-over"))
      for (const e of result.failures) {
        expect(e.message).toBe(
          "Session ses_a was taken over by another reins process (pid 200 on other-box) while this one (pid 100) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ses_a."
        )
      }
      // nothing the old claim tried reached the store; the claim-less write did
      expect(result.before).toEqual([["msg_001", ["prt_001"]]])
      expect(result.after).toEqual([
        {
          info: userMessage("msg_001", "ses_a"),
          parts: [textPart("prt_001", userMessage("msg_001", "ses_a"), "before"), textPart("prt_005", userMessage("msg_001", "ses_a"), "claim-less")]
        }
      ])
      expect(result.title).toBe("title of ses_a")
      expect(result.other).toBe(1)
      expect(result.holder?.pid).toBe(200)
    })

    test("a claim released by another process (no holder) is lost too", async () => {
      const failure = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const mine = claim("ses_a", 100)
          yield* claims.claim(mine, dead)
          const theirs = claim("ses_a", 200)
          yield* claims.claim(theirs, dead)
          yield* claims.release(theirs, 0)
          return yield* Effect.flip(store.putMessage(userMessage("msg_001", "ses_a")).pipe(Effect.provideService(WritingClaim, mine)))
        })
      )
      expect(failure.reason).toBe("taken-over")
      expect(failure.message).toBe(
        "Session ses_a was taken over by another reins process while this one (pid 100) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ses_a."
      )
    })
  })
}
