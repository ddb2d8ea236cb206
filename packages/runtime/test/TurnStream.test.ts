// SessionService.stream: one turn consumed as a typed stream of its events, stopped by stopping the
// stream, with a bounded buffer between the turn and its consumer (issue 14, item 1).
import { describe, expect, test } from "bun:test"
import { Deferred, Effect, Layer, Stream } from "effect"
import { Bus, isOpenTool, type SessionEvent, type ToolPart } from "@reins/domain"
import { SessionService, TurnStreamSettings } from "@reins/session"
import { RunClaims, SessionStore } from "@reins/storage"
import { ProcessGroup } from "@reins/tool"
import { aliveIn, scriptedRuntimes } from "./support.ts"

const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }

const toolOf = (e: SessionEvent): ToolPart | undefined => (e.type === "part.updated" && e.part.type === "tool" ? e.part : undefined)

/** The session an event is about; a delta names only its part, announced before it: `partsOf` is that part's session. */
const sessionOf = (e: SessionEvent, partsOf: string): string => {
  switch (e.type) {
    case "message.updated":
      return e.message.sessionID
    case "part.updated":
      return e.part.sessionID
    case "part.delta":
      return partsOf
    case "session.created":
    case "session.updated":
      return e.session.id
    case "turn.finished":
      return e.result.sessionID
    default:
      return e.sessionID
  }
}

/** `sleep <n>` processes still running (a zombie shows as [sleep] and is not counted). */
const sleeping = (n: string) =>
  Bun.spawnSync(["ps", "-eo", "args"])
    .stdout.toString()
    .split("\n")
    .filter((l) => l.trim() === `sleep ${n}`).length

describe("SessionService.stream", () => {
  test("a 3-step turn with two concurrent tools: its events in order, ending with turn.finished", async () => {
    // Each command waits for the other's file: they finish only if they run at the same time. (The
    // 3,000 looks, 30 s at least however loaded the machine, are a hang guard, not a time allowed.)
    const wait = (mine: string, other: string) =>
      `touch ${mine}; for i in $(seq 1 3000); do [ -f ${other} ] && break; sleep 0.01; done; [ -f ${other} ] && echo ${mine}-saw-${other}`
    const { cwd, layer } = await runtime([
      {
        toolCalls: [
          { name: "bash", arguments: { command: wait("a", "b") } },
          { name: "bash", arguments: { command: wait("b", "a") } }
        ]
      },
      { toolCalls: [{ name: "read", arguments: { filePath: "a" } }] },
      { text: "both ran together", textChunks: 5 }
    ])
    const { events, sessionID } = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        const events = yield* Stream.runCollect(sessions.stream({ sessionID: session.id, text: "go", model }))
        return { events, sessionID: session.id }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    // every event is this session's
    const announced = new Set<string>()
    for (const e of events) {
      if (e.type === "part.updated") announced.add(e.part.id)
      // a delta follows its part's first update
      expect(sessionOf(e, e.type === "part.delta" && announced.has(e.partID) ? sessionID : "another")).toBe(sessionID)
    }
    // the turn's opening, then three steps, then idle and the result
    expect(events.slice(0, 4).map((e) => e.type)).toEqual(["message.updated", "part.updated", "session.updated", "session.status"])
    expect(events.at(-2)).toMatchObject({ type: "session.status", status: "idle" })
    const last = events.at(-1)!
    expect(last.type === "turn.finished" && last.result).toMatchObject({ sessionID, steps: 3, text: "both ran together" })
    // A step: its assistant message, step-start, …, step-finish (with usage and cost), the message finished.
    const steps = events.flatMap((e, i) => (e.type === "part.updated" && e.part.type === "step-start" ? [i] : []))
    expect(steps).toHaveLength(3)
    for (const start of steps) {
      const created = events[start - 1]!
      expect(created.type === "message.updated" && created.message.role === "assistant" && created.message.time.completed).toBe(undefined)
      const finish = events.findIndex((e, i) => i > start && e.type === "part.updated" && e.part.type === "step-finish")
      const finished = events[finish]!
      expect(finished.type === "part.updated" && finished.part.type === "step-finish" && typeof finished.part.cost).toBe("number")
      const closed = events[finish + 1]!
      expect(closed.type === "message.updated" && closed.message.role === "assistant" && closed.message.finish).toBeTruthy()
    }
    // step 1: both calls pending, then both running before either completed
    const first = events.slice(steps[0]!, steps[1]!)
    const calls = [...new Set(first.flatMap((e) => (toolOf(e) ? [toolOf(e)!.callID] : [])))]
    expect(calls).toHaveLength(2)
    const at = (callID: string, status: string) => first.findIndex((e) => toolOf(e)?.callID === callID && toolOf(e)!.state.status === status)
    for (const c of calls) expect(at(c, "pending")).toBeLessThan(at(c, "running"))
    expect(Math.max(...calls.map((c) => at(c, "running")))).toBeLessThan(Math.min(...calls.map((c) => at(c, "completed"))))
    const outputs = calls.map((c) => first.findLast((e) => toolOf(e)?.callID === c)!).map((e) => toolOf(e)!.state)
    expect(outputs.map((s) => s.status === "completed" && s.output.split("\n")[0]).sort()).toEqual(["a-saw-b", "b-saw-a"])
    // step 3: the text part, its deltas, then the whole part
    const third = events.slice(steps[2]!)
    const textStart = third.findIndex((e) => e.type === "part.updated" && e.part.type === "text")
    const textEnd = third.findLastIndex((e) => e.type === "part.updated" && e.part.type === "text")
    const deltas = third.filter((e) => e.type === "part.delta")
    expect(deltas.map((e) => e.type === "part.delta" && e.delta).join("")).toBe("both ran together")
    expect(third.findIndex((e) => e.type === "part.delta")).toBeGreaterThan(textStart)
    expect(third.findLastIndex((e) => e.type === "part.delta")).toBeLessThan(textEnd)
  })

  test("a consumer that stops at the first running command interrupts the turn: the command is killed, nothing is left open, the session goes on", async () => {
    const n = `3${Math.floor(Math.random() * 90000) + 10000}.5`
    const { cwd, layer } = await runtime([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] }, { text: "picked up again" }])
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        // the first tool event that shows the command running (its process group recorded)
        const taken = yield* sessions.stream({ sessionID: session.id, text: "sleep", model }).pipe(
          Stream.filter(
            (e) => toolOf(e)?.state.status === "running" && ProcessGroup.recordOf((toolOf(e)!.state as { metadata?: unknown }).metadata) !== undefined
          ),
          Stream.take(1),
          Stream.runCollect
        )
        const group = ProcessGroup.recordOf((toolOf(taken[0]!)!.state as { metadata?: unknown }).metadata)!
        const afterStop = yield* store.messages(session.id)
        const run = yield* (yield* RunClaims).get(session.id)
        const next = yield* sessions.prompt({ sessionID: session.id, text: "again", model })
        return { group, afterStop, run, next }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    // the stream ended only once the turn's cleanup was done: the command's group is gone
    expect(sleeping(n)).toBe(0)
    expect(aliveIn(out.group.pgid)).toEqual([])
    const parts = out.afterStop.flatMap((m) => m.parts)
    expect(parts.filter(isOpenTool)).toEqual([])
    expect(parts.find((p) => p.type === "tool")).toMatchObject({ state: { status: "error", interrupted: true } })
    const assistant = out.afterStop.find((m) => m.info.role === "assistant")!.info
    expect(assistant.role === "assistant" && assistant.error?.reason).toBe("interrupted")
    expect(out.run).toBeUndefined()
    expect(out.next.text).toBe("picked up again")
  })

  test("a consumer that does not read: the turn completes and at most the buffer's size of events waits", async () => {
    const capacity = 32
    const long = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(" ")
    const made = await runtime([
      {
        text: long,
        textChunks: 3000,
        toolCalls: [
          { name: "bash", arguments: { command: "for i in $(seq 1 20); do echo line $i; done" } },
          { name: "bash", arguments: { command: "echo two" } }
        ]
      },
      { text: long, textChunks: 3000 }
    ])
    const layer = made.layer.pipe(Layer.provide(Layer.succeed(TurnStreamSettings, { buffer: capacity })))
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const bus = yield* Bus
        const session = yield* sessions.create({ directory: made.cwd })
        // an observer on the bus sees every event as it happens
        let published = 0
        const idle = yield* Deferred.make<void>()
        yield* bus.listen((e) =>
          Effect.suspend(() => {
            published++
            return e.type === "session.status" && e.status === "idle" ? Deferred.succeed(idle, undefined) : Effect.void
          })
        )
        // A stream starts its turn at the first pull: one read, then none until the turn is over.
        const pull = yield* Stream.toPull(sessions.stream({ sessionID: session.id, text: "talk", model }))
        const first = yield* pull
        yield* Deferred.await(idle)
        const waiting = yield* Stream.runCollect(Stream.fromPull(Effect.succeed(pull)))
        return { events: [...first, ...waiting], waiting: waiting.length, published }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.published).toBeGreaterThan(6000)
    expect(out.waiting).toBeLessThanOrEqual(capacity)
    const last = out.events.at(-1)!
    expect(last.type === "turn.finished" && last.result.steps).toBe(2)
    // the deltas were joined, not lost: each text part's deltas are its whole text
    const answers = new Set(out.events.flatMap((e) => (e.type === "message.updated" && e.message.role === "assistant" ? [e.message.id] : [])))
    const texts = new Set(out.events.flatMap((e) => (e.type === "part.updated" && e.part.type === "text" && answers.has(e.part.messageID) ? [e.part.id] : [])))
    expect(texts.size).toBe(2)
    for (const id of texts) {
      expect(out.events.flatMap((e) => (e.type === "part.delta" && e.partID === id ? [e.delta] : [])).join("")).toBe(long)
    }
    // the tools' newest states are there
    const tools = out.events.flatMap((e) => (toolOf(e) ? [toolOf(e)!] : []))
    expect(tools.filter((t) => t.state.status === "completed").map((t) => t.callID).length).toBeGreaterThanOrEqual(2)
  })

  test("docs/architecture.md's example: the first failed tool call ends the stream and the turn; the session goes on", async () => {
    // The stopped turn may have sent its next request already: the answer to "go on" does not depend on it.
    const { cwd, layer } = await runtime([{ text: "let me try", toolCalls: [{ name: "no_such_tool", arguments: {} }] }, { text: "not read" }], {
      server: { respond: (body) => (JSON.stringify(body.messages).includes("go on") ? { text: "after the stop" } : undefined) }
    })
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        let printed = ""
        const seen: Array<SessionEvent> = []
        yield* sessions.stream({ sessionID: session.id, text: "run the tests", model }).pipe(
          Stream.takeUntil((event) => event.type === "part.updated" && event.part.type === "tool" && event.part.state.status === "error"),
          Stream.runForEach((event) =>
            Effect.sync(() => {
              seen.push(event)
              if (event.type === "part.delta" && event.partType === "text") printed += event.delta
            })
          )
        )
        const parts = (yield* store.messages(session.id)).flatMap((m) => m.parts)
        const next = yield* sessions.prompt({ sessionID: session.id, text: "go on", model })
        return { printed, seen, parts, next }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.printed).toBe("let me try")
    expect(toolOf(out.seen.at(-1)!)?.state.status).toBe("error")
    expect(out.seen.some((e) => e.type === "turn.finished")).toBe(false)
    expect(out.parts.filter(isOpenTool)).toEqual([])
    expect(out.next.text).toBe("after the stop")
  })
})
