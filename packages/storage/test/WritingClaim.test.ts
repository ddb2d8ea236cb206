// The fence: writes under a lease (a running turn's) check (holder, epoch) in the write's own
// transaction. Once another process has taken the session over, the old lease writes nothing,
// whichever write it is; other sessions and lease-less writes are untouched.
import { describe, expect, test } from "bun:test"
import type { Session } from "@reins/domain"
import { Effect } from "effect"
import { WritingClaim } from "../src/Claim.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { eventually } from "@reins/testkit"
import { TestClock } from "effect/testing"
import { assistantMessage, claim, claimed, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

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
          const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: 40 })), claimed)
          const user = userMessage("msg_001", "ses_a")
          const under = <A, E>(effect: Effect.Effect<A, E>) => Effect.provideService(effect, WritingClaim, mine)
          // while held: writes go through
          yield* under(store.putMessage(user))
          yield* under(store.putPart(textPart("prt_001", user, "before")))
          const beatWhileHeld = yield* claims.renew(mine, 40)
          // this process is frozen past its lease; another (another pid, another host) takes the session over
          yield* eventually(
            Effect.andThen(
              TestClock.adjust(40),
              Effect.map(claims.claim(claim("ses_a", 200, { host: "other-box" })), (r) => r._tag === "claimed")
            ),
            "the takeover"
          )
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
          const beatAfter = yield* claims.renew(mine, 600_000)
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
        }).pipe(Effect.provide(TestClock.layer()))
      )
      expect(result.beatWhileHeld?.epoch).toBe(1)
      expect(result.beatAfter).toBeUndefined()
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
      expect(result.holder).toMatchObject({ pid: 200, epoch: 2 })
    })

    test("a write after its own release passes (nobody claimed since); after a later claim, even by the same holder, it is refused", async () => {
      const [older, ids] = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100)), claimed)
          yield* claims.release(mine, 0)
          // events kept after a transient failure are written after the release, under the same epoch
          yield* store.putMessage(userMessage("msg_001", "ses_a")).pipe(Effect.provideService(WritingClaim, mine))
          // the same process claims again (a new turn): the old turn's epoch writes nothing
          const next = yield* Effect.flatMap(claims.claim(claim("ses_a", 100)), claimed)
          const stale = yield* Effect.flip(store.putMessage(userMessage("msg_002", "ses_a")).pipe(Effect.provideService(WritingClaim, mine)))
          yield* store.putMessage(userMessage("msg_003", "ses_a")).pipe(Effect.provideService(WritingClaim, next))
          // released again: the older epoch still writes nothing
          yield* claims.release(next, 0)
          const after = yield* Effect.flip(store.putMessage(userMessage("msg_004", "ses_a")).pipe(Effect.provideService(WritingClaim, mine)))
          expect(after.reason).toBe("taken-over")
          return [stale, (yield* store.messages("ses_a")).map((m) => m.info.id)] as const
        })
      )
      expect(older.reason).toBe("taken-over")
      expect(older.message).toContain("pid 100")
      expect(ids).toEqual(["msg_001", "msg_003"])
    })
  })
}
