import { Compaction } from "@reins/compaction"
import { describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { Bus, emptyUsage, type Event, type Part } from "@reins/domain"
import type { Prompter } from "@reins/permission"
import type { ModelEvent } from "@reins/provider"
import { SessionStore, type MessageWithParts } from "@reins/storage"
import { canonical, detect, makeDoomLoopGuard, turnCalls, type ToolCall } from "../src/DoomLoop.ts"
import { SessionService } from "../src/SessionService.ts"
import { scripted, toolsLayer } from "./support.ts"

const call = (tool: string, input: Record<string, unknown>, result?: string): ToolCall => ({
  tool,
  input: canonical(input),
  ...(result !== undefined ? { result } : {})
})

/** Feeds calls one at a time, as the loop does after each step; returns the first loop and when. */
const firstLoop = (calls: ReadonlyArray<ToolCall>, limits = { identical: 3, cycles: 3, pairs: 2 }) => {
  for (let n = 1; n <= calls.length; n++) {
    const found = detect(calls.slice(0, n), limits, 0, n - 1)
    if (found) return { at: n, ...found }
  }
  return undefined
}

let seq = 0
const id = (prefix: string) => `${prefix}_${String(++seq).padStart(4, "0")}`

const user = (metadata?: Record<string, unknown>): MessageWithParts => ({
  info: { id: id("msg"), sessionID: "ses", role: "user", time: { created: 0 }, ...(metadata ? { metadata } : {}) },
  parts: []
})

const assistant = (...parts: ReadonlyArray<{ tool: string; input: Record<string, unknown>; output: string } | { reasoning: string }>): MessageWithParts => {
  const messageID = id("msg")
  const base = { sessionID: "ses", messageID }
  return {
    info: {
      id: messageID,
      sessionID: "ses",
      role: "assistant",
      parentID: "p",
      model: { providerID: "p", modelID: "m" },
      time: { created: 0 },
      usage: emptyUsage,
      cost: 0
    },
    parts: parts.map(
      (p): Part =>
        "reasoning" in p
          ? { id: id("prt"), ...base, type: "reasoning", text: p.reasoning }
          : {
              id: id("prt"),
              ...base,
              type: "tool",
              callID: id("call"),
              tool: p.tool,
              state: { status: "completed", input: p.input, output: p.output, title: "", metadata: {}, time: { start: 0, end: 0 } }
            }
    )
  }
}

describe("canonical", () => {
  test("sorts keys at every level, so equal inputs written differently compare equal", () => {
    expect(canonical({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}')
    expect(canonical({ filePath: "a", limit: 5 })).toBe(canonical({ limit: 5, filePath: "a" }))
  })
})

describe("doom loop detection (T6)", () => {
  test("3 identical calls across two assistant messages with a reasoning part between", () => {
    const messages = [
      user(),
      assistant(
        { tool: "read", input: { filePath: "a.ts" }, output: "v1" },
        { reasoning: "let me look again" },
        { tool: "read", input: { filePath: "a.ts" }, output: "v2" }
      ),
      assistant({ reasoning: "once more" }, { tool: "read", input: { filePath: "a.ts" }, output: "v3" })
    ]
    const { calls } = turnCalls(messages)
    expect(calls.map((c) => c.tool)).toEqual(["read", "read", "read"])
    expect(detect(calls)).toEqual({
      kind: "identical",
      tools: ["read"],
      count: 3,
      message: "The model called read with the same arguments 3 times in this turn"
    })
  })

  test("identical calls need not be consecutive", () => {
    const found = firstLoop([
      call("read", { filePath: "a" }, "1"),
      call("grep", { pattern: "x" }, "g1"),
      call("read", { filePath: "a" }, "2"),
      call("list", { path: "." }, "l"),
      call("read", { filePath: "a" }, "3")
    ])
    expect(found).toMatchObject({ at: 5, kind: "identical", tools: ["read"], count: 3 })
  })

  test("A,B,A,B,A,B is a cycle of period 2 repeated 3 times", () => {
    const calls = [0, 1, 2].flatMap((i) => [call("read", { filePath: "a" }, `a${i}`), call("bash", { command: "make" }, `b${i}`)])
    // with identical and pairs out of the way, the cycle rule alone finds it on the sixth call
    expect(firstLoop(calls, { identical: 10, cycles: 3, pairs: 10 })).toEqual({
      at: 6,
      kind: "cycle",
      tools: ["read", "bash"],
      count: 3,
      message: "The model repeated the same cycle of 2 calls (read → bash) 3 times in this turn"
    })
    // with the defaults it is caught too (A has been called 3 times by the fifth call)
    expect(firstLoop(calls)).toMatchObject({ at: 5, kind: "identical", tools: ["read"] })
  })

  test("a cycle of period 3 (A,B,C ×3) and of period 4", () => {
    const abc = [0, 1, 2].flatMap((i) => [
      call("read", { filePath: "a" }, `${i}`),
      call("grep", { pattern: "b" }, `${i}`),
      call("bash", { command: "c" }, `${i}`)
    ])
    expect(firstLoop(abc, { identical: 10, cycles: 3, pairs: 10 })).toMatchObject({ at: 9, kind: "cycle", tools: ["read", "grep", "bash"], count: 3 })
    const aabb = [0, 1, 2].flatMap((i) => [
      call("read", { filePath: "a" }, `${i}`),
      call("read", { filePath: "a" }, `${i}x`),
      call("bash", { command: "b" }, `${i}`),
      call("bash", { command: "b" }, `${i}y`)
    ])
    expect(firstLoop(aabb, { identical: 20, cycles: 3, pairs: 20 })).toMatchObject({ at: 12, kind: "cycle", tools: ["read", "bash"], count: 3 })
  })

  test("the same call getting the same result twice", () => {
    const found = firstLoop([call("bash", { command: "ls" }, "a\nb\n"), call("read", { filePath: "x" }, "x"), call("bash", { command: "ls" }, "a\nb\n")])
    expect(found).toEqual({
      at: 3,
      kind: "pairs",
      tools: ["bash"],
      count: 2,
      message: "The model called bash with the same arguments 2 times in this turn and got the same result each time"
    })
  })

  test("no loop: A,B,C,A,B,C,… with different arguments each time", () => {
    const calls = [0, 1, 2, 3].flatMap((i) => [
      call("read", { filePath: `a${i}.ts` }, `${i}`),
      call("grep", { pattern: `b${i}` }, `${i}`),
      call("bash", { command: `echo ${i}` }, `${i}`)
    ])
    expect(firstLoop(calls)).toBeUndefined()
  })

  test("no loop: 2 identical calls only (with different results)", () => {
    expect(firstLoop([call("read", { filePath: "a" }, "1"), call("read", { filePath: "a" }, "2")])).toBeUndefined()
  })

  test("no pair: the same call with a different result each time", () => {
    expect(firstLoop([call("bash", { command: "date" }, "1"), call("bash", { command: "date" }, "2")])).toBeUndefined()
    // the third one is still caught by the identical rule
    expect(firstLoop([call("bash", { command: "date" }, "1"), call("bash", { command: "date" }, "2"), call("bash", { command: "date" }, "3")])).toMatchObject({
      kind: "identical"
    })
  })

  test("only a newly added call reports a loop; after an allow, counting restarts", () => {
    const guard = makeDoomLoopGuard()
    const read = (output: string) => ({ tool: "read", input: { filePath: "a" }, output })
    const messages: Array<MessageWithParts> = [user(), assistant(read("1")), assistant(read("2"))]
    expect(guard.check(messages)).toBeUndefined()
    messages.push(assistant(read("3")))
    expect(guard.check(messages)).toMatchObject({ kind: "identical", count: 3 })
    // the same calls checked again report nothing new
    expect(guard.check(messages)).toBeUndefined()
    guard.allow()
    messages.push(assistant(read("4")))
    expect(guard.check(messages)).toBeUndefined()
    messages.push(assistant(read("5")))
    expect(guard.check(messages)).toBeUndefined()
    messages.push(assistant(read("6")))
    expect(guard.check(messages)).toMatchObject({ kind: "identical", count: 3 })
  })

  test("a guard reads each settled call once, however often the turn's messages are read again from storage", () => {
    // the loop reads the window from storage before every step: the same parts, as new objects each time
    let reads = 0
    const counted = (n: number) => ({
      get filePath() {
        reads++
        return `f${n}`
      }
    })
    const stored: Array<MessageWithParts> = [user()]
    const reread = () =>
      stored.map((m) => ({
        info: m.info,
        parts: m.parts.map((p) => (p.type === "tool" ? { ...p, state: { ...p.state, input: counted(Number(p.callID.slice(5))) } } : p))
      }))
    const guard = makeDoomLoopGuard()
    for (let step = 1; step <= 30; step++) {
      stored.push(assistant({ tool: "read", input: {}, output: `v${step}` }))
      expect(guard.check(reread())).toBeUndefined()
    }
    // one read per call (30), not one per call per step (465)
    expect(reads).toBe(30)
    // a call still running is read again until it has its outcome
    const running = assistant({ tool: "read", input: {}, output: "" })
    const part = running.parts[0]!
    if (part.type !== "tool") throw new Error("a tool part")
    stored.push({ ...running, parts: [{ ...part, state: { status: "running", input: {}, time: { start: 0 } } }] })
    guard.check(reread())
    guard.check(reread())
    expect(reads).toBe(32)
  })

  test("a new user message starts a new turn; a compaction's continue message does not", () => {
    const read = (output: string) => ({ tool: "read", input: { filePath: "a" }, output })
    const earlier = [user(), assistant(read("1")), assistant(read("2"))]
    expect(turnCalls([...earlier, user(), assistant(read("3"))]).calls).toHaveLength(1)
    expect(detect(turnCalls([...earlier, user({ compaction_continue: true }), assistant(read("3"))]).calls)).toMatchObject({ kind: "identical", count: 3 })
  })
})

// The loop: a scripted provider calling bash the same way on every step.
const finish = (reason: string): ModelEvent => ({ type: "finish-step", finishReason: reason, usage: emptyUsage, cost: 0 })

const bashStep = (n: number, command: string): ReadonlyArray<ModelEvent> => [
  { type: "tool-call", callID: `c${n}`, name: "bash", input: { command } },
  finish("tool-calls")
]
const textStep: ReadonlyArray<ModelEvent> = [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", text: "done" },
  { type: "text-end", id: "t" },
  finish("stop")
]

const runTurn = (steps: ReadonlyArray<ReadonlyArray<ModelEvent>>, settings: { nonInteractive: "allow" | "deny"; prompter?: Prompter }) => {
  const { cwd, layer: tools } = toolsLayer(scripted(steps), { permission: settings })
  const layer = SessionService.layer.pipe(Layer.provideMerge(Compaction.layer.pipe(Layer.provideMerge(tools))))
  return Effect.runPromise(
    Effect.gen(function* () {
      const bus = yield* Bus
      const seen: Array<Event> = []
      yield* bus.listen((e) => Effect.sync(() => void seen.push(e)))
      const sessions = yield* SessionService
      const session = yield* sessions.create({ directory: cwd })
      const turn = yield* sessions.prompt({ sessionID: session.id, text: "go", model: { providerID: "p", modelID: "m" } })
      const messages = yield* (yield* SessionStore).messages(session.id)
      return { turn, messages, seen }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

const toolCount = (messages: ReadonlyArray<MessageWithParts>) => messages.flatMap((m) => m.parts).filter((p) => p.type === "tool").length

describe("the loop's doom-loop guard", () => {
  test("rejected by the policy: the turn stops after the call that completed the loop, with the reason stored", async () => {
    const { turn, messages, seen } = await runTurn([1, 2, 3, 4].map((n) => bashStep(n, "echo $RANDOM$RANDOM")).concat([textStep]), { nonInteractive: "deny" })
    expect(toolCount(messages)).toBe(3)
    expect(turn.steps).toBe(3)
    const error = { reason: "doom_loop", message: "Stopped a doom loop: The model called bash with the same arguments 3 times in this turn." }
    expect(turn.assistant.error).toEqual(error)
    expect(messages.at(-1)!.info).toMatchObject({ role: "assistant", error })
    expect(seen.find((e) => e.type === "permission.asked")).toMatchObject({
      permission: "doom_loop",
      patterns: ["bash"],
      always: ["bash"],
      title: error.message.slice("Stopped a doom loop: ".length, -1)
    })
    expect(seen.find((e) => e.type === "session.error")).toEqual({ type: "session.error", sessionID: turn.sessionID, error })
  })

  test("allowed once: the turn goes on and the same loop is not asked about again until it repeats anew", async () => {
    const asked: Array<string> = []
    const prompter: Prompter = { ask: (request) => Effect.sync(() => void asked.push(request.title ?? "")).pipe(Effect.as({ reply: "once" as const })) }
    const { turn, messages } = await runTurn([1, 2, 3, 4, 5].map((n) => bashStep(n, "echo $RANDOM$RANDOM")).concat([textStep]), {
      nonInteractive: "deny",
      prompter
    })
    expect(turn.assistant.error).toBeUndefined()
    expect(turn.text).toBe("done")
    expect(toolCount(messages)).toBe(5)
    // asked after the third call; the fourth and fifth alone are only 2 since the allow
    expect(asked).toEqual(["The model called bash with the same arguments 3 times in this turn"])
  })
})
