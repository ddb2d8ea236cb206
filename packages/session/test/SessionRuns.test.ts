// SessionRuns: the lease, hold, heartbeat and abort of a running session, against the memory store
// (its time is the Clock: TestClock moves it where a lease has to lapse).
import { describe, expect, test } from "bun:test"
import { Cause, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { emptyUsage, type TurnResult } from "@reins/domain"
import { RunClaims, SessionStore, Storage, type ClaimRequest } from "@reins/storage"
import { eventually } from "@reins/testkit"
import { RunSettings, SessionRuns, type PromptError } from "../src/index.ts"
import { releasedByTurn } from "../src/Runs.ts"

const TIMING = { heartbeatMs: 10_000, ttlMs: 45_000 }

const run = <A, E>(body: Effect.Effect<A, E, SessionRuns | SessionStore | RunClaims>, storage: Layer.Layer<Storage.Services> = Storage.layerMemory) =>
  Effect.runPromise(
    Effect.gen(function* () {
      // the leases name stored sessions
      const store = yield* SessionStore
      for (const id of ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e"])
        yield* store.createSession({ id, title: id, directory: "/", time: { created: 0, updated: 0 } })
      return yield* body
    }).pipe(Effect.provide(SessionRuns.layer.pipe(Layer.provideMerge(storage), Layer.provide(Layer.succeed(RunSettings, TIMING)))), Effect.scoped)
  )

/** Another process's claim of the session (another holder, on another machine). */
const theirs = (sessionID: string, ttlMs = TIMING.ttlMs): ClaimRequest => ({
  sessionID,
  holder: "other-box/4242/test",
  host: "other-box",
  pid: 4242,
  takesMessages: true,
  ttlMs
})

const result = (sessionID: string): TurnResult => ({
  sessionID,
  steps: 1,
  text: "done",
  assistant: {
    id: "msg_1",
    sessionID,
    role: "assistant",
    parentID: "msg_0",
    model: { providerID: "p", modelID: "m" },
    time: { created: 0 },
    usage: emptyUsage,
    cost: 0
  }
})

describe("SessionRuns", () => {
  test("a hold stores the claim while its body runs and releases it after; the turn's result reaches its joiners", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const done = yield* Deferred.make<TurnResult, PromptError>()
        let during: unknown
        const held = yield* runs.hold("ses_a", done, (claim) =>
          Effect.gen(function* () {
            during = { stored: yield* claims.get("ses_a"), claim, here: runs.current("ses_a")?.run, elsewhere: yield* runs.elsewhere("ses_a") }
            return result("ses_a")
          })
        )
        return { held, during, after: yield* claims.get("ses_a"), here: runs.current("ses_a"), joined: yield* Deferred.await(done) }
      })
    )
    expect(out.held).toMatchObject({ _tag: "ran", value: { text: "done" } })
    const during = out.during as { stored: unknown; claim: { pid: number; queued: number }; here: unknown; elsewhere: unknown }
    expect(during.stored).toEqual(during.claim)
    expect(during.here).toEqual(during.claim)
    // this process's own lease is not "elsewhere"
    expect(during.elsewhere).toBeUndefined()
    // a turn's hold takes queued messages
    expect(during.claim).toMatchObject({ pid: process.pid, holder: expect.stringMatching(/\/[0-9a-f]{8}$/), epoch: 1, queued: 0, abort: false })
    expect(out.after).toBeUndefined()
    expect(out.here).toBeUndefined()
    expect(out.joined.text).toBe("done")
  })

  test("a second hold here gets the first's holder and waits on its release, not by polling; then it runs", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const gate = yield* Deferred.make<void>()
        const order: Array<string> = []
        const first = yield* Effect.forkChild(
          runs.hold("ses_b", undefined, () =>
            Effect.andThen(
              Deferred.await(gate),
              Effect.sync(() => order.push("first"))
            )
          )
        )
        yield* Effect.yieldNow
        const second = yield* runs.hold("ses_b", undefined, () => Effect.sync(() => order.push("never")))
        if (second._tag !== "here") return { second, order, third: undefined }
        // a compaction's hold refuses queued messages
        expect(second.holder.run?.queued).toBe(-1)
        const waiter = yield* Effect.forkChild(
          Effect.andThen(
            Deferred.await(second.holder.released),
            runs.hold("ses_b", undefined, () => Effect.sync(() => order.push("third")))
          )
        )
        yield* Effect.yieldNow
        order.push("opened")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(first)
        const third = yield* Fiber.join(waiter)
        return { second, order, third }
      })
    )
    expect(out.second._tag).toBe("here")
    expect(out.order).toEqual(["opened", "first", "third"])
    expect(out.third?._tag).toBe("ran")
  })

  test("another process's live lease: held, and the body never runs; it is the lease `elsewhere` gives", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        yield* claims.claim(theirs("ses_c"))
        let ran = false
        const held = yield* runs.hold("ses_c", undefined, () => Effect.sync(() => (ran = true)))
        return { held, ran, here: runs.current("ses_c"), elsewhere: yield* runs.elsewhere("ses_c") }
      })
    )
    expect(out.held).toMatchObject({ _tag: "held", held: { pid: 4242, host: "other-box" } })
    expect(out.elsewhere).toMatchObject({ pid: 4242, epoch: 1 })
    expect(out.ran).toBe(false)
    expect(out.here).toBeUndefined()
  })

  test("an interrupted body releases the claim and tells joiners", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const done = yield* Deferred.make<TurnResult, PromptError>()
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(runs.hold("ses_d", done, () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
        yield* Deferred.await(started)
        const during = yield* claims.get("ses_d")
        yield* Fiber.interrupt(fiber)
        const released = runs.current("ses_d")
        return { during, after: yield* claims.get("ses_d"), released, joined: yield* Effect.exit(Deferred.await(done)) }
      })
    )
    expect(out.during?.pid).toBe(process.pid)
    expect(out.after).toBeUndefined()
    expect(out.released).toBeUndefined()
    expect(Exit.isFailure(out.joined)).toBe(true)
  })

  test.each([
    ["still holds it", false],
    ["has let it go again before this one wakes", true]
  ])("the heartbeat ends the body with a taken-over error once another process took the lapsed lease over (and %s)", async (_name, letGo) => {
    // This process is frozen: its renewals wait until the test lets them through, as SIGSTOP would hold them.
    const thawed = Deferred.makeUnsafe<void>()
    const frozen = Layer.effect(
      RunClaims,
      Effect.map(RunClaims, (inner) => RunClaims.of({ ...inner, renew: (run, ttlMs) => Effect.andThen(Deferred.await(thawed), inner.renew(run, ttlMs)) }))
    ).pipe(Layer.provideMerge(Storage.layerMemory))
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          Effect.exit(runs.hold("ses_e", undefined, () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
        )
        yield* Deferred.await(started)
        const early = yield* claims.claim(theirs("ses_e"))
        // past the lease: another machine takes the session
        const taken = yield* eventually(
          Effect.andThen(
            TestClock.adjust("10 seconds"),
            Effect.map(claims.claim(theirs("ses_e")), (r) => r._tag === "claimed" && r.run)
          ),
          "the lease to lapse"
        )
        if (letGo && taken) yield* claims.release(taken, Number.MAX_SAFE_INTEGER)
        yield* Deferred.succeed(thawed, undefined)
        return { early, taken, exit: yield* Fiber.join(fiber) }
      }).pipe(Effect.provide(TestClock.layer())),
      frozen
    )
    expect(out.early._tag).toBe("held")
    expect(out.taken.epoch).toBe(2)
    expect(Exit.isFailure(out.exit)).toBe(true)
    expect(JSON.stringify(out.exit)).toContain("taken-over")
  })

  test("a body that released its lease itself (a turn's last step: it checks for queued messages) and goes on writing its end is not cut short by the next heartbeat", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const released = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          Effect.exit(
            runs.hold("ses_a", undefined, (claim) =>
              Effect.gen(function* () {
                releasedByTurn(claim, true)
                yield* claims.release(claim, Number.MAX_SAFE_INTEGER)
                yield* Deferred.succeed(released, undefined)
                // its end written after a heartbeat (under load, the finish takes its time)
                yield* Effect.sleep("25 seconds")
                return "ended"
              })
            )
          )
        )
        yield* Deferred.await(released)
        // past two heartbeats and the body's end
        yield* TestClock.adjust("30 seconds")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(out).toEqual(Exit.succeed({ _tag: "ran", value: "ended" }))
  })

  test("abort: a turn held here is interrupted at once; another process's is asked; none is idle", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const done = yield* Deferred.make<TurnResult, PromptError>()
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(Effect.exit(runs.hold("ses_a", done, () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never))))
        yield* Deferred.await(started)
        const here = yield* runs.abort("ses_a")
        const exit = yield* Fiber.join(fiber)
        yield* claims.claim(theirs("ses_b"))
        const elsewhere = yield* runs.abort("ses_b")
        return {
          here,
          exit,
          joined: yield* Effect.exit(Deferred.await(done)),
          released: yield* claims.get("ses_a"),
          elsewhere,
          asked: yield* claims.get("ses_b"),
          idle: yield* runs.abort("ses_c")
        }
      })
    )
    expect(out.here).toBe("here")
    // as Ctrl+C: the body was interrupted, and so is what joiners get
    expect(Exit.isFailure(out.exit) && Cause.hasInterruptsOnly(out.exit.cause)).toBe(true)
    expect(Exit.isFailure(out.joined) && Cause.hasInterruptsOnly(out.joined.cause)).toBe(true)
    expect(out.released).toBeUndefined()
    expect(out.elsewhere).toBe("elsewhere")
    expect(out.asked).toMatchObject({ pid: 4242, abort: true })
    expect(out.idle).toBe("idle")
  })

  test("an abort another process asks for through the store interrupts the body here within one check, long before a heartbeat", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          Effect.exit(runs.hold("ses_d", undefined, () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
        )
        yield* Deferred.await(started)
        const asked = yield* claims.requestAbort("ses_d")
        // virtual time: one abort check (≤ 1 s) is enough; the heartbeat is 10 s away
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.join(fiber)
        return { asked, exit, after: yield* claims.get("ses_d") }
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(out.asked?.abort).toBe(true)
    expect(Exit.isFailure(out.exit) && Cause.hasInterruptsOnly(out.exit.cause)).toBe(true)
    expect(out.after).toBeUndefined()
  })
})
