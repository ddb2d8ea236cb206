// The appender: the bus's events stored in the event log in batches, in publish order, fenced by
// the publisher's claim. On virtual time: a batch waits for the clock only where the test moves it.
import { describe, expect } from "bun:test"
import { Bus, type Event } from "@reins/domain"
import { EventLog, RunClaims, SessionStore, Storage, WritingClaim, type SessionRun } from "@reins/storage"
import { eventually, it } from "@reins/testkit"
import { Clock, Deferred, Effect, Fiber, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import { EventAppender } from "../src/EventAppender.ts"

const layer = EventAppender.layer.pipe(Layer.provideMerge(Layer.mergeAll(Bus.layer, Storage.layerMemory)))

const status = (sessionID: string): Event => ({ type: "session.status", sessionID, status: "busy" })
const session = (id: string, parentID?: string): Event => ({
  type: "session.created",
  session: { id, title: "t", directory: "/", ...(parentID ? { parentID } : {}), time: { created: 1, updated: 1 } }
})
const stepEnd = (sessionID: string): Event => ({
  type: "message.updated",
  message: {
    id: "msg_2",
    sessionID,
    role: "assistant",
    parentID: "msg_1",
    model: { providerID: "test", modelID: "scripted" },
    time: { created: 2, completed: 3 },
    usage: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: 0
  }
})
/** A lease request of `pid` (ttl 0: it lapses at once, so another process can take the session over). */
const request = (sessionID: string, pid: number) => ({ sessionID, holder: `box/${pid}/test`, host: "box", pid, takesMessages: true, ttlMs: 0 })
const leased = (result: { readonly _tag: "claimed" | "held"; readonly run: SessionRun }) =>
  result._tag === "claimed" ? Effect.succeed(result.run) : Effect.die(new Error(`held by ${result.run.holder}`))

const logged = Effect.flatMap(EventLog, (log) => log.read({ after: 0 }))

describe("EventAppender", () => {
  it.layer(layer).effect("events wait up to maxDelayMs, then go in one batch, in publish order, with their root session", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.publish(status("ses_a"))
      yield* bus.publish({ type: "part.delta", sessionID: "ses_child", partID: "prt_1", partType: "text", delta: "hi" })
      yield* bus.publish(status("ses_a"))
      // the clock has not moved: nothing is written yet
      expect(yield* logged).toEqual([])
      yield* TestClock.adjust("10 millis")
      const events = yield* eventually(Effect.map(logged, (all) => all.length === 3 && all))
      expect(events.map((e) => [e.id, e.sessionID, e.seq, e.event.type])).toEqual([
        [1, "ses_a", 1, "session.status"],
        [2, "ses_child", 1, "part.delta"],
        [3, "ses_a", 2, "session.status"]
      ])
    })
  )

  it.layer(layer).effect("a step's end is stored with everything before it when publish returns; 64 waiting go at once", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const store = yield* SessionStore
      // a sub-agent's session: its events carry its root, found from the stored parent
      yield* store.createSession({ id: "ses_root", title: "t", directory: "/", time: { created: 1, updated: 1 } })
      yield* store.createSession({ id: "ses_sub", title: "t", directory: "/", parentID: "ses_root", time: { created: 1, updated: 1 } })
      yield* bus.publish(session("ses_leaf", "ses_sub"))
      yield* bus.publish(status("ses_leaf"))
      yield* bus.publish(stepEnd("ses_leaf"))
      expect((yield* logged).map((e) => [e.sessionID, e.rootSessionID, e.event.type])).toEqual([
        ["ses_leaf", "ses_root", "session.created"],
        ["ses_leaf", "ses_root", "session.status"],
        ["ses_leaf", "ses_root", "message.updated"]
      ])
      for (let i = 0; i < 64; i++) yield* bus.publish(status("ses_b"))
      yield* eventually(
        Effect.map(logged, (all) => all.length === 67),
        "the full batch to be written without the clock moving"
      )
    })
  )

  it.layer(layer).effect("a listener of the appends that throws: the batch is stored all the same, and the other listeners told", () =>
    Effect.gen(function* () {
      const appender = yield* EventAppender
      const seen: Array<number> = []
      const forget = [
        appender.onAppended(() => {
          throw new Error("a faulty listener")
        }),
        appender.onAppended((events) => void seen.push(...events.map((e) => e.id)))
      ]
      yield* Effect.gen(function* () {
        yield* appender.offer(status("ses_a"))
        yield* appender.offer(stepEnd("ses_a"))
        yield* appender.offer(stepEnd("ses_a"))
        expect((yield* logged).map((e) => e.id)).toEqual([1, 2, 3])
        expect(seen).toEqual([1, 2, 3])
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            for (const f of forget) f()
          })
        )
      )
    })
  )

  it.layer(layer).effect("a taken-over holder's events are not appended, and its publish goes on; others' are", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const store = yield* SessionStore
      const claims = yield* RunClaims
      const appender = yield* EventAppender
      yield* store.createSession({ id: "ses_a", title: "t", directory: "/", time: { created: 1, updated: 1 } })
      const mine = yield* Effect.flatMap(claims.claim(request("ses_a", 100)), leased)
      yield* bus.publish(status("ses_a")).pipe(Effect.provideService(WritingClaim, mine))
      yield* appender.flush
      yield* Effect.flatMap(claims.claim(request("ses_a", 200)), leased)
      // the step end flushes inline: the fence refuses it, the publisher is not failed
      yield* bus.publish(stepEnd("ses_a")).pipe(Effect.provideService(WritingClaim, mine))
      yield* bus.publish(status("ses_b"))
      yield* appender.flush
      expect((yield* logged).map((e) => [e.sessionID, e.event.type])).toEqual([
        ["ses_a", "session.status"],
        ["ses_b", "session.status"]
      ])
    })
  )

  it.effect("a flush with nothing waiting still waits for a batch another flush is storing (a hold releases its lease after it)", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      // the log's first append waits at the gate
      const gated = Layer.effect(
        EventLog,
        Effect.map(EventLog, (log) =>
          EventLog.of({
            ...log,
            append: (batch) => Effect.andThen(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(gate)), log.append(batch))
          })
        )
      )
      const appenderLayer = EventAppender.layer.pipe(Layer.provideMerge(gated), Layer.provideMerge(Layer.mergeAll(Bus.layer, Storage.layerMemory)))
      yield* Effect.gen(function* () {
        const bus = yield* Bus
        const appender = yield* EventAppender
        yield* bus.publish(status("ses_a"))
        // the batcher takes the event and is held storing it
        yield* TestClock.adjust("10 millis")
        yield* Deferred.await(started)
        const done = yield* Ref.make(false)
        const flushing = yield* Effect.forkChild(Effect.andThen(appender.flush, Ref.set(done, true)))
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
        expect(yield* Ref.get(done)).toBe(false)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(flushing)
        expect((yield* logged).map((e) => e.event.type)).toEqual(["session.status"])
      }).pipe(Effect.provide(appenderLayer))
    })
  )

  it.layer(layer).effect("a batch waits at most maxDelayMs, even for an event stamped ahead of the batcher's clock (a clock stepped back)", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const clock = yield* Clock.Clock
      // the publisher's clock an hour ahead of the batcher's: the same as the machine's clock stepped back an hour after it
      const ahead: Clock.Clock = {
        ...clock,
        currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe() + 3_600_000,
        currentTimeMillis: Effect.sync(() => clock.currentTimeMillisUnsafe() + 3_600_000)
      }
      yield* bus.publish(status("ses_a")).pipe(Effect.provideService(Clock.Clock, ahead))
      yield* TestClock.adjust("10 millis")
      yield* eventually(Effect.map(logged, (all) => all.length === 1))
    })
  )

  it.layer(layer).effect("offer queues an event not on the bus (a turn's end) in order with the bus's", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const appender = yield* EventAppender
      yield* bus.publish(status("ses_a"))
      yield* appender.offer({ type: "turn.failed", sessionID: "ses_a", error: { tag: "ProviderError", message: "down" } })
      expect((yield* logged).map((e) => e.event.type)).toEqual(["session.status", "turn.failed"])
    })
  )
})

describe("EventAppender: retention", () => {
  it.layer(layer).effect("events older than the retention are pruned a minute after start, then hourly", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const appender = yield* EventAppender
      yield* bus.publish(status("ses_a"))
      yield* appender.flush
      yield* TestClock.adjust("1 minute")
      // younger than seven days: kept
      expect((yield* logged).length).toBe(1)
      yield* TestClock.adjust("8 days")
      yield* eventually(
        Effect.map(logged, (all) => all.length === 0),
        "the old event to be pruned"
      )
      expect(yield* Effect.flatMap(EventLog, (log) => log.first())).toBe(0)
    })
  )
})
