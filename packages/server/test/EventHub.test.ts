import { describe, expect, test } from "bun:test"
import { eventSessionID } from "@reins/domain"
import type { LoggedEvent } from "@reins/storage"
import { Effect, Exit, Fiber } from "effect"
import { BATCH_CHARS, makeEventHub as makeHub, type HubLimits, type ServerEvent, type Subscriber } from "../src/EventHub.ts"

/** The event log as the hub sees it: every event the next id, its session its own root unless a root is given. */
const logged = (event: ServerEvent, id: number, rootSessionID = eventSessionID(event)): LoggedEvent => ({
  id,
  sessionID: eventSessionID(event),
  rootSessionID,
  seq: id,
  time: 0,
  event
})

/** A hub fed like the process's log reader feeds it, keeping what was published as the log keeps it. */
const makeEventHub = (limits: HubLimits) => {
  const hub = makeHub(limits)
  const log: Array<LoggedEvent> = []
  return {
    ...hub,
    log,
    publish: (event: ServerEvent, root?: string) => {
      const entry = logged(event, log.length + 1, root)
      log.push(entry)
      hub.publish(entry)
    },
    /** A client whose replay from the log (what the ring no longer has) is read at once. */
    subscribe: (options: Parameters<typeof hub.subscribe>[0]) => {
      const client = hub.subscribe(options)
      if (client.missing !== undefined) client.fill(log)
      return client
    }
  }
}

const status = (sessionID: string): ServerEvent => ({ type: "session.status", sessionID, status: "busy" })

/** The frames as `{id?, event, data}`. */
const parse = (frames: ReadonlyArray<string>) =>
  frames.map((f) => {
    const lines = f.trimEnd().split("\n")
    const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2)
    const id = field("id")
    return { ...(id !== undefined ? { id: Number(id) } : {}), event: field("event")!, data: JSON.parse(field("data")!) }
  })

const takeAll = (client: Subscriber) => Effect.runPromise(client.take).then(parse)

const ended = async (client: Subscriber) => Exit.isFailure(await Effect.runPromiseExit(client.take))

describe("EventHub: the replay buffer", () => {
  test("a client that gives the last id it saw gets exactly the events after it, in order", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 100 })
    for (let i = 0; i < 10; i++) hub.publish(status("ses_a"))
    const client = hub.subscribe({ lastEventId: 6 })
    const frames = await takeAll(client)
    expect(frames[0]).toEqual({ event: "server.connected", data: { type: "server.connected", lastEventId: 10 } })
    expect(frames.slice(1).map((f) => f.id)).toEqual([7, 8, 9, 10])
    // then live ones, continuing the ids
    hub.publish(status("ses_a"))
    expect((await takeAll(client)).map((f) => f.id)).toEqual([11])
  })

  test("the ring keeps the last `replay` events: an older id is replayed from the log first; server.gap only past the log's retention", async () => {
    const hub = makeEventHub({ replay: 5, clientQueue: 100 })
    for (let i = 0; i < 12; i++) hub.publish(status("ses_a"))
    expect(hub.oldest()).toBe(8)
    const raw = makeHub({ replay: 5, clientQueue: 100 })
    for (const entry of hub.log) raw.publish(entry)
    const waiting = raw.subscribe({ lastEventId: 2 })
    expect(waiting.missing).toEqual({ after: 2, through: 7 })
    // nothing is handed over before the log's part arrives
    const first = Effect.runFork(waiting.take)
    raw.publish(logged(status("ses_a"), 13))
    waiting.fill(hub.log)
    const frames = parse(await Effect.runPromise(Fiber.join(first)))
    expect(frames.map((f) => f.event)).not.toContain("server.gap")
    expect(frames.slice(1).map((f) => f.id)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    // the log pruned up to 4: a gap, then all it still has
    const pruned = raw.subscribe({ lastEventId: 2, bounds: { first: 5, last: 13 } })
    expect(pruned.missing).toEqual({ after: 4, through: 8 })
    pruned.fill(hub.log)
    const after = parse(await Effect.runPromise(pruned.take))
    expect(after[1]).toEqual({ event: "server.gap", data: { type: "server.gap", from: 2, oldest: 5 } })
    expect(after.slice(2).map((f) => f.id)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13])
    // an id just before the oldest kept loses nothing: no gap
    const exact = await takeAll(hub.subscribe({ lastEventId: 7 }))
    expect(exact.map((f) => f.event)).not.toContain("server.gap")
    expect(exact.slice(1).map((f) => f.id)).toEqual([8, 9, 10, 11, 12])
  })

  test("the buffer also holds at most `replayBytes` of frames: the oldest go first", async () => {
    const probe = makeEventHub({ replay: 100, clientQueue: 100 })
    probe.publish(status("ses_a"))
    const frameLength = (await Effect.runPromise(probe.subscribe({ lastEventId: 0 }).take))[1]!.length
    const small = makeEventHub({ replay: 100, replayBytes: frameLength * 3, clientQueue: 100 })
    for (let i = 0; i < 9; i++) small.publish(status("ses_a"))
    expect(small.oldest()).toBe(7)
    const frames = await takeAll(small.subscribe({ lastEventId: 2 }))
    expect(frames.slice(1).map((f) => f.id)).toEqual([3, 4, 5, 6, 7, 8, 9])
    // the newest event is always kept, however large
    const tiny = makeEventHub({ replay: 100, replayBytes: 1, clientQueue: 100 })
    tiny.publish(status("ses_a"))
    tiny.publish(status("ses_a"))
    expect(tiny.oldest()).toBe(2)
    expect((await takeAll(tiny.subscribe({ lastEventId: 1 }))).slice(1).map((f) => f.id)).toEqual([2])
  })

  test("an id the log never gave gets server.gap and live events from now; one the log has but this process has not read yet skips those; none at all gets no replay", async () => {
    const hub = makeEventHub({ replay: 5, clientQueue: 100 })
    hub.publish(status("ses_a"))
    const stranger = hub.subscribe({ lastEventId: 40, bounds: { first: 1, last: 1 } })
    expect((await takeAll(stranger)).map((f) => f.event)).toEqual(["server.connected", "server.gap"])
    const ahead = hub.subscribe({ lastEventId: 3, bounds: { first: 1, last: 3 } })
    expect((await takeAll(ahead)).map((f) => f.event)).toEqual(["server.connected"])
    for (let i = 0; i < 3; i++) hub.publish(status("ses_a"))
    expect((await takeAll(stranger)).map((f) => f.id)).toEqual([2, 3, 4])
    expect((await takeAll(ahead)).map((f) => f.id)).toEqual([4])
    const fresh = await takeAll(hub.subscribe({}))
    expect(fresh.map((f) => f.event)).toEqual(["server.connected"])
  })

  test("a session's stream has its own events, its sub-agents' sessions' and its parts' deltas, and no other session's", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 100 })
    const client = hub.subscribe({ sessionID: "ses_root" })
    await takeAll(client)
    const session = (id: string, parentID?: string): ServerEvent => ({
      type: "session.created",
      session: { id, title: "t", directory: "/", ...(parentID ? { parentID } : {}), time: { created: 1, updated: 1 } }
    })
    hub.publish(session("ses_child", "ses_root"), "ses_root")
    hub.publish(status("ses_other"))
    hub.publish({ type: "part.updated", part: { id: "prt_1", sessionID: "ses_child", messageID: "msg_1", type: "text", text: "" } }, "ses_root")
    hub.publish({ type: "part.delta", sessionID: "ses_child", partID: "prt_1", partType: "text", delta: "hi" }, "ses_root")
    hub.publish({ type: "part.delta", sessionID: "ses_other", partID: "prt_2", partType: "text", delta: "no" })
    hub.publish(status("ses_root"))
    // a sub-agent's session (whose root this process knows from its creation) follows its parent
    hub.publish(session("ses_grandchild", "ses_child"), "ses_root")
    const frames = await takeAll(client)
    expect(frames.map((f) => [f.id, f.event])).toEqual([
      [1, "session.created"],
      [3, "part.updated"],
      [4, "part.delta"],
      [6, "session.status"],
      [7, "session.created"]
    ])
    const child = hub.subscribe({ sessionID: "ses_child", lastEventId: 0 })
    expect((await takeAll(child)).slice(1).map((f) => f.id)).toEqual([1, 3, 4, 7])
  })
})

describe("EventHub: slow clients", () => {
  test("a client whose queue is full is sent server.disconnected with the id to resume from, and its stream ends; the others get everything", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 3 })
    const slow = hub.subscribe({})
    const fast = hub.subscribe({})
    await takeAll(slow)
    hub.publish(status("ses_a"))
    expect((await takeAll(slow)).map((f) => f.id)).toEqual([1])
    const seen: Array<number> = []
    for (let i = 0; i < 10; i++) {
      // publishing never waits, whoever is behind
      hub.publish(status("ses_a"))
      seen.push(...(await takeAll(fast)).flatMap((f) => (f.id === undefined ? [] : [f.id])))
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    const last = await takeAll(slow)
    expect(last).toEqual([
      { event: "server.disconnected", data: { type: "server.disconnected", reason: expect.stringContaining("Last-Event-ID: 1"), lastEventId: 1 } }
    ])
    expect(await ended(slow)).toBe(true)
    expect(hub.clients()).toBe(1)
    // it resumes from the buffer with what it missed
    const back = await takeAll(hub.subscribe({ lastEventId: 1 }))
    expect(back.slice(1).map((f) => f.id)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
  })

  test("the replay a client asks for does not count against its queue; a waiting take wakes on the next event", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 2 })
    for (let i = 0; i < 50; i++) hub.publish(status("ses_a"))
    const client = hub.subscribe({ lastEventId: 0 })
    expect((await takeAll(client)).length).toBe(51)
    const waiting = Effect.runFork(client.take)
    hub.publish(status("ses_a"))
    const frames = parse(await Effect.runPromise(Fiber.join(waiting)))
    expect(frames.map((f) => f.id)).toEqual([51])
  })

  test("frames are handed over in batches of at most BATCH_CHARS (a larger frame alone): a reconnect does not take the whole buffer at once", async () => {
    const hub = makeEventHub({ replay: 1_000, clientQueue: 1_000 })
    const text = (n: number, size: number): ServerEvent => ({
      type: "part.updated",
      part: { id: `prt_${n}`, sessionID: "ses_a", messageID: "msg_a", type: "text", text: "x".repeat(size) }
    })
    // 40 frames of 50 KB in the buffer (2 MB), one of twice the batch, then a small one
    for (let i = 0; i < 40; i++) hub.publish(text(i, 50_000))
    hub.publish(text(40, BATCH_CHARS * 2))
    hub.publish(status("ses_a"))
    const client = hub.subscribe({ lastEventId: 0 })
    const batches: Array<ReadonlyArray<string>> = []
    for (let got = 0; got < 43; got += batches.at(-1)!.length) batches.push(await Effect.runPromise(client.take))
    for (const batch of batches) {
      const size = batch.reduce((sum, frame) => sum + frame.length, 0)
      expect(batch.length === 1 || size <= BATCH_CHARS).toBe(true)
    }
    expect(batches.length).toBeGreaterThan(8)
    // all of them, once, in order; then live ones
    const ids = batches.flatMap((b) => parse(b)).flatMap((f) => (f.id === undefined ? [] : [f.id]))
    expect(ids).toEqual(Array.from({ length: 42 }, (_, i) => i + 1))
    hub.publish(status("ses_a"))
    expect((await takeAll(client)).map((f) => f.id)).toEqual([43])
  })

  test("a closed client is forgotten and its stream ends; closeAll ends every stream with the reason", async () => {
    const hub = makeEventHub({ replay: 10, clientQueue: 10 })
    const a = hub.subscribe({})
    const b = hub.subscribe({})
    a.close()
    expect(hub.clients()).toBe(1)
    expect(await ended(a)).toBe(true)
    await takeAll(b)
    hub.closeAll("the server is shutting down")
    expect((await takeAll(b)).map((f) => f.data.reason)).toEqual(["the server is shutting down"])
    expect(await ended(b)).toBe(true)
  })
})

describe("EventHub: a client's reads", () => {
  test("a take interrupted while it waits takes nothing: the next take gets every event after it", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 100 })
    const client = hub.subscribe({})
    expect((await takeAll(client)).map((f) => f.event)).toEqual(["server.connected"])
    const waiting = Effect.runFork(client.take)
    await Effect.runPromise(Fiber.interrupt(waiting))
    hub.publish(status("ses_a"))
    hub.publish(status("ses_a"))
    const next = await Effect.runPromise(Effect.timeoutOption(client.take, "10 seconds"))
    expect(next._tag === "Some" ? parse(next.value).map((f) => f.id) : "nothing").toEqual([1, 2])
  })

  test("next: the batches as promises, then undefined once the client is closed and drained", async () => {
    const hub = makeEventHub({ replay: 100, clientQueue: 100 })
    const client = hub.subscribe({})
    expect(parse((await client.next())!).map((f) => f.event)).toEqual(["server.connected"])
    const pending = client.next()
    hub.publish(status("ses_a"))
    expect(parse((await pending)!).map((f) => f.id)).toEqual([1])
    client.close()
    expect(await client.next()).toBeUndefined()
  })
})
