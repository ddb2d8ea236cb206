// Leases (T5, issue 27): claim, renew, release, queue and requestAbort by (holder, epoch) with an
// expiry in the database's time — the same behaviour from every database. Expiry is waited for, not
// slept for: memory's time is the Clock (moved here by TestClock), SQLite's its own `julianday('now')`,
// so each look at the condition moves the test clock and lets the wall clock run a little.
import { describe, expect, test } from "bun:test"
import { eventually } from "@reins/testkit"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { WritingClaim } from "../src/Claim.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import type * as Storage from "../src/Storage.ts"
import { claim, claimed, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

/** A short lease, for the cases that wait for one to lapse. */
const SHORT = 40

/** `probe` until it gives a value, moving the test clock past a short lease between looks. */
const untilExpired = <A, E>(probe: Effect.Effect<A | undefined | false, E, Storage.Services>, what: string) =>
  eventually(Effect.andThen(TestClock.adjust(SHORT), probe), what)

const onClock = <A, E>(effect: Effect.Effect<A, E, Storage.Services>) => Effect.provide(effect, TestClock.layer())

for (const [name, makeLayer] of implementations) {
  describe(`RunClaims (${name})`, () => {
    test("a claim takes the lease under epoch 1; another holder finds it held; the same holder claiming again gets the next epoch", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const first = yield* claims.claim(claim("ses_a", 100))
          const blocked = yield* claims.claim(claim("ses_a", 200, { host: "other-box" }))
          const again = yield* claims.claim(claim("ses_a", 100))
          return { first, blocked, again, held: yield* claims.get("ses_a"), idle: yield* claims.get("ses_none") }
        })
      )
      expect(result.first).toMatchObject({
        _tag: "claimed",
        run: { sessionID: "ses_a", holder: "box/100/test", pid: 100, host: "box", epoch: 1, queued: 0, abort: false }
      })
      const first = result.first.run
      expect(first.time.expires - first.time.started).toBe(600_000)
      // what "held" returns is the lease in the way, for the busy message
      expect(result.blocked).toEqual({ _tag: "held", run: first })
      expect(result.again).toMatchObject({ _tag: "claimed", run: { holder: "box/100/test", epoch: 2 } })
      expect(result.held).toEqual(result.again.run)
      expect(result.idle).toBeUndefined()
    })

    test("an expired lease is not returned by get and is taken over under the next epoch; its renewal then fails", async () => {
      const result = await run(
        makeLayer(),
        onClock(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const claims = yield* RunClaims
            yield* store.createSession(session("ses_a"))
            const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: SHORT })), claimed)
            yield* untilExpired(
              Effect.map(claims.get("ses_a"), (run) => run === undefined),
              "the lease to expire"
            )
            // lapsed but not taken: its holder renews it and goes on (the fence checks holder and epoch, not time)
            const renewedLate = yield* claims.renew(mine, SHORT)
            const theirs = yield* untilExpired(
              Effect.map(claims.claim(claim("ses_a", 200, { host: "other-box" })), (r) => r._tag === "claimed" && r.run),
              "another holder to take the session over"
            )
            return { mine, renewedLate, theirs, lost: yield* claims.renew(mine, 600_000), held: yield* claims.get("ses_a") }
          })
        )
      )
      expect(result.renewedLate).toMatchObject({ holder: "box/100/test", epoch: 1 })
      expect(result.theirs).toMatchObject({ holder: "other-box/200/test", epoch: 2, queued: 0, abort: false })
      expect(result.lost).toBeUndefined()
      expect(result.held).toEqual(result.theirs)
    })

    test("a claim that takes over (a cluster runner that owns the session) takes it from another runner's live lease under the next epoch; the lease it passed can no longer renew, and its writes are fenced", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const old = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { host: "runner:10.0.0.1:34431/runner-a" })), claimed)
          const taken = yield* claims.claim({ ...claim("ses_a", 200, { host: "runner:10.0.0.2:34431/runner-b" }), takeOver: true })
          const stale = yield* Effect.flip(store.putMessage(userMessage("msg_late", "ses_a")).pipe(Effect.provideService(WritingClaim, old)))
          return { old, taken, renewed: yield* claims.renew(old, 600_000), held: yield* claims.get("ses_a"), stale }
        })
      )
      expect(result.taken).toMatchObject({
        _tag: "claimed",
        run: { holder: "runner:10.0.0.2:34431/runner-b/200/test", epoch: result.old.epoch + 1, queued: 0 }
      })
      expect(result.renewed).toBeUndefined()
      expect(result.held).toEqual(result.taken._tag === "claimed" ? result.taken.run : undefined)
      expect(result.stale.reason).toBe("taken-over")
    })

    test("a take-over frees the sub-agents' sessions (at every depth) the holder taken over still holds, under their next epoch; another holder's lease and other trees stay", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_root"))
          yield* store.createSession({ ...session("ses_child"), parentID: "ses_root" })
          yield* store.createSession({ ...session("ses_grandchild"), parentID: "ses_child" })
          yield* store.createSession({ ...session("ses_sibling"), parentID: "ses_root" })
          yield* store.createSession(session("ses_other"))
          const a = { host: "runner:10.0.0.1:34431/runner-a" }
          yield* Effect.flatMap(claims.claim(claim("ses_root", 100, a)), claimed)
          const child = yield* Effect.flatMap(claims.claim(claim("ses_child", 100, a)), claimed)
          yield* Effect.flatMap(claims.claim(claim("ses_grandchild", 100, a)), claimed)
          // the sibling runs under another holder (a reins run queued into it, say): not the lost runner's to free
          const sibling = yield* Effect.flatMap(claims.claim(claim("ses_sibling", 300, { host: "box" })), claimed)
          const other = yield* Effect.flatMap(claims.claim(claim("ses_other", 100, a)), claimed)
          yield* claims.claim({ ...claim("ses_root", 200, { host: "runner:10.0.0.2:34431/runner-b" }), takeOver: true })
          const stale = yield* Effect.flip(store.putMessage(userMessage("msg_late", "ses_child")).pipe(Effect.provideService(WritingClaim, child)))
          return {
            child: yield* claims.get("ses_child"),
            grandchild: yield* claims.get("ses_grandchild"),
            sibling: yield* claims.get("ses_sibling"),
            siblingHeld: sibling,
            other: yield* claims.get("ses_other"),
            otherHeld: other,
            stale,
            reclaimed: yield* Effect.flatMap(claims.claim(claim("ses_child", 200, { host: "runner:10.0.0.2:34431/runner-b" })), claimed)
          }
        })
      )
      expect(result.child).toBeUndefined()
      expect(result.grandchild).toBeUndefined()
      expect(result.sibling).toEqual(result.siblingHeld)
      expect(result.other).toEqual(result.otherHeld)
      expect(result.stale.reason).toBe("taken-over")
      // freed under the next epoch: the next claim is one more
      expect(result.reclaimed.epoch).toBe(3)
    })

    test.each([
      ["a reins process that is no runner", "box"],
      ["a holder that only looks like a runner", "runner-a"],
      ["a runner prefix without an address", "runner:"]
    ])("take-over leaves the live lease of %s: held", async (_name, host) => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const theirs = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { host })), claimed)
          return { theirs, again: yield* claims.claim({ ...claim("ses_a", 200, { host: "runner:10.0.0.2:34431/runner-b" }), takeOver: true }) }
        })
      )
      expect(result.again).toEqual({ _tag: "held", run: result.theirs })
    })

    test("renew extends the lease in database time and returns it as stored (queued, abort)", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: 1_000 })), claimed)
          const m = userMessage("msg_001", "ses_a")
          yield* claims.queue(m, [textPart("prt_001", m, "hi")])
          yield* claims.requestAbort("ses_a")
          return { mine, renewed: yield* claims.renew(mine, 600_000) }
        })
      )
      expect(result.renewed).toMatchObject({ holder: "box/100/test", epoch: 1, queued: 1, abort: true })
      expect(result.renewed!.time.expires).toBeGreaterThanOrEqual(result.mine.time.started + 600_000)
    })

    test("release keeps the row: the next claim, by anyone, gets a higher epoch; a release waits until every queued message was seen", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const idle = userMessage("msg_001", "ses_a")
          const notQueued = yield* claims.queue(idle, [textPart("prt_001", idle, "hello")])
          const storedWhileIdle = (yield* store.messages("ses_a")).length
          const first = yield* Effect.flatMap(claims.claim(claim("ses_a", 100)), claimed)
          const queued = yield* claims.queue(idle, [textPart("prt_001", idle, "hello")])
          const early = yield* claims.release(first, 0)
          const stillHeld = yield* claims.get("ses_a")
          const released = yield* claims.release(first, 1)
          const after = yield* claims.get("ses_a")
          const twice = yield* claims.release(first, 1)
          const second = yield* Effect.flatMap(claims.claim(claim("ses_a", 200)), claimed)
          yield* claims.release(second, 0)
          const third = yield* Effect.flatMap(claims.claim(claim("ses_a", 100)), claimed)
          return { notQueued, storedWhileIdle, queued, early, stillHeld, released, after, twice, second, third, messages: yield* store.messages("ses_a") }
        })
      )
      expect(result.notQueued).toBeUndefined()
      expect(result.storedWhileIdle).toBe(0)
      expect(result.queued).toMatchObject({ pid: 100, queued: 1 })
      expect(result.early).toBe(false)
      expect(result.stillHeld?.queued).toBe(1)
      expect(result.released).toBe(true)
      expect(result.after).toBeUndefined()
      expect(result.twice).toBe(true)
      expect([result.second.epoch, result.third.epoch]).toEqual([2, 3])
      expect(result.third.queued).toBe(0)
      expect(shape(result.messages)).toEqual([["msg_001", ["prt_001"]]])
    })

    test("a message is not queued into an expired lease, nor into one that takes no messages (a compaction)", async () => {
      const result = await run(
        makeLayer(),
        onClock(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const claims = yield* RunClaims
            yield* store.createSession(session("ses_a"))
            yield* store.createSession(session("ses_b"))
            yield* claims.claim(claim("ses_b", 100, { takesMessages: false }))
            const b = userMessage("msg_101", "ses_b")
            const intoCompaction = yield* claims.queue(b, [textPart("prt_101", b, "hi")])
            yield* claims.claim(claim("ses_a", 100, { ttlMs: SHORT }))
            yield* untilExpired(
              Effect.map(claims.get("ses_a"), (run) => run === undefined),
              "the lease to expire"
            )
            const a = userMessage("msg_001", "ses_a")
            const intoExpired = yield* claims.queue(a, [textPart("prt_001", a, "hi")])
            return { intoCompaction, intoExpired, a: yield* store.messages("ses_a"), b: yield* store.messages("ses_b") }
          })
        )
      )
      expect(result.intoCompaction).toBeUndefined()
      expect(result.intoExpired).toBeUndefined()
      expect(result.a).toEqual([])
      expect(result.b).toEqual([])
    })

    test("requestAbort marks the live lease only; a new claim starts without it", async () => {
      const result = await run(
        makeLayer(),
        onClock(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const claims = yield* RunClaims
            yield* store.createSession(session("ses_a"))
            const idle = yield* claims.requestAbort("ses_a")
            const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: SHORT })), claimed)
            const asked = yield* claims.requestAbort("ses_a")
            const seen = yield* claims.get("ses_a")
            yield* untilExpired(
              Effect.map(claims.get("ses_a"), (run) => run === undefined),
              "the lease to expire"
            )
            const expired = yield* claims.requestAbort("ses_a")
            const next = yield* Effect.flatMap(claims.claim(claim("ses_a", 200)), claimed)
            return { idle, mine, asked, seen, expired, next }
          })
        )
      )
      expect(result.idle).toBeUndefined()
      expect(result.asked).toEqual({ ...result.mine, abort: true })
      expect(result.seen?.abort).toBe(true)
      expect(result.expired).toBeUndefined()
      expect(result.next).toMatchObject({ epoch: 2, abort: false })
    })

    test("a release by a lease that was taken over leaves the new lease alone", async () => {
      const result = await run(
        makeLayer(),
        onClock(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const claims = yield* RunClaims
            yield* store.createSession(session("ses_a"))
            const old = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: SHORT })), claimed)
            yield* untilExpired(
              Effect.map(claims.claim(claim("ses_a", 200)), (r) => r._tag === "claimed"),
              "another holder to take the session over"
            )
            return { released: yield* claims.release(old, Number.MAX_SAFE_INTEGER), held: yield* claims.get("ses_a") }
          })
        )
      )
      expect(result.released).toBe(true)
      expect(result.held).toMatchObject({ holder: "box/200/test", epoch: 2 })
    })
  })
}
