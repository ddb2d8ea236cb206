// SessionRuns: the claim, hold and heartbeat of a running session, against the memory store.
import { afterEach, describe, expect, test } from "bun:test"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { emptyUsage, type TurnResult } from "@reins/domain"
import { RunClaims, SessionStore, Storage } from "@reins/storage"
import { eventually } from "@reins/testkit"
import * as os from "node:os"
import { RunSettings, SessionRuns, newRun, type PromptError } from "../src/index.ts"

const children: Array<{ kill(): void }> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

const run = <A, E>(body: Effect.Effect<A, E, SessionRuns | SessionStore | RunClaims>, timing = { heartbeatMs: 10_000, staleMs: 45_000 }) =>
  Effect.runPromise(
    Effect.gen(function* () {
      // the claims name stored sessions
      const store = yield* SessionStore
      for (const id of ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e"])
        yield* store.createSession({ id, title: id, directory: "/", time: { created: 0, updated: 0 } })
      return yield* body
    }).pipe(Effect.provide(SessionRuns.layer.pipe(Layer.provideMerge(Storage.layerMemory), Layer.provide(Layer.succeed(RunSettings, timing)))), Effect.scoped)
  )

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
            during = { stored: yield* claims.get("ses_a"), claim, here: runs.current("ses_a")?.run, live: (yield* runs.isLive)(claim) }
            return result("ses_a")
          })
        )
        return { held, during, after: yield* claims.get("ses_a"), here: runs.current("ses_a"), joined: yield* Deferred.await(done) }
      })
    )
    expect(out.held).toMatchObject({ _tag: "ran", value: { text: "done" } })
    const during = out.during as { stored: unknown; claim: { pid: number; queued: number }; here: unknown; live: boolean }
    expect(during.stored).toEqual(during.claim)
    expect(during.here).toEqual(during.claim)
    expect(during.live).toBe(true)
    // a turn's hold takes queued messages
    expect(during.claim).toMatchObject({ pid: process.pid, queued: 0 })
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

  test("another live process's claim: held, and the body never runs", async () => {
    const other = Bun.spawn(["sleep", "3600"])
    children.push(other)
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        yield* claims.claim(newRun("ses_c", { pid: other.pid, host: os.hostname() }, Date.now()), () => true)
        let ran = false
        const held = yield* runs.hold("ses_c", undefined, () => Effect.sync(() => (ran = true)))
        return { held, ran, here: runs.current("ses_c") }
      })
    )
    expect(out.held).toMatchObject({ _tag: "held", held: { pid: other.pid } })
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

  test("the heartbeat ends the body with a taken-over error once another process holds the session", async () => {
    const out = await run(
      Effect.gen(function* () {
        const runs = yield* SessionRuns
        const claims = yield* RunClaims
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          Effect.exit(runs.hold("ses_e", undefined, () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
        )
        yield* Deferred.await(started)
        // another machine judges this claim stale and takes the session
        yield* claims.claim({ ...newRun("ses_e", { pid: 4242, host: "other-box" }, Date.now()) }, () => false)
        // virtual time: each move of the clock is a heartbeat; the first after the takeover ends the body
        yield* eventually(
          Effect.andThen(
            TestClock.adjust("10 seconds"),
            Effect.sync(() => fiber.pollUnsafe() !== undefined)
          ),
          "the body to end"
        )
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(Exit.isFailure(out)).toBe(true)
    expect(JSON.stringify(out)).toContain("taken-over")
  })
})
