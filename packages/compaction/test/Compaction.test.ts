import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { Bus, Ids, emptyUsage, type Event } from "@reins/domain"
import { Provider, ProviderSettings, RetryPolicy, prunedPlaceholder } from "@reins/provider"
import { SessionStore, Storage, type MessageWithParts } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import {
  Compaction,
  CompactionSettings,
  SUMMARY_TEMPLATE,
  defaultSettings,
  estimateMessages,
  modelView,
  type CompactInput,
  type CompactionSettings as Settings
} from "../src/index.ts"
import { SESSION, history, lines, toolParts } from "./fixtures.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

// Ids after every fixture id ("msg_0001" < "msg_z0001"), as a real store's clock would give.
const idsLayer = Layer.sync(Ids, () => {
  let k = 0
  return Ids.of({ next: (prefix) => Effect.sync(() => `${prefix}_z${String(++k).padStart(4, "0")}`) })
})

const MODEL = { providerID: "local", modelID: "m" }
const OVERFLOW: ScriptedStep = {
  error: {
    status: 400,
    message: "This model's maximum context length is 16000 tokens. However, your messages resulted in 30000 tokens.",
    type: "invalid_request_error",
    code: "context_length_exceeded"
  }
}

const run = async (
  steps: ReadonlyArray<ScriptedStep>,
  messages: ReadonlyArray<MessageWithParts>,
  options: { settings?: Settings; input?: Partial<CompactInput>; repeatLast?: boolean; limits?: { context: number; output: number } } = {}
) => {
  server = await startScriptedServer(steps, { repeatLast: options.repeatLast ?? false })
  const providers = { local: { type: "openai-compatible" as const, baseURL: server.url, models: { m: options.limits ?? { context: 16_000, output: 2_000 } } } }
  const layer = Compaction.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Bus.layer, idsLayer, Storage.layerMemory, Provider.layer)),
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(ProviderSettings, { providers, env: {} }),
        Layer.succeed(RetryPolicy, { attempts: 2, initialDelayMs: 1, maxDelayMs: 2 }),
        Layer.succeed(CompactionSettings, options.settings ?? defaultSettings)
      )
    )
  )
  return Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const events: Array<Event> = []
      yield* bus.listen((e) => Effect.sync(() => void events.push(e)))
      yield* store.createSession({ id: SESSION, title: "t", directory: "/", time: { created: 0, updated: 0 } })
      for (const m of messages) {
        yield* store.putMessage(m.info)
        yield* store.putParts(m.parts)
      }
      const compaction = yield* Compaction
      const result = yield* Effect.result(compaction.compact({ sessionID: SESSION, model: MODEL, reason: "overflow", tokens: 12_345, ...options.input }))
      const overflows = compaction.overflows({ ...emptyUsage, input: 14_000 }, MODEL)
      return { result, after: yield* store.messages(SESSION), events, overflows, requests: server!.requests.map((r) => JSON.stringify(r.body)) }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

const texts = (messages: ReadonlyArray<MessageWithParts>) => messages.map((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" "))

/** Four turns: skill and bash in turn 1, bash in turn 2, small turns 3 and 4. */
const fourTurns = () => {
  const h = history()
  const first = h.user("ORIGINAL TASK: fix the parser")
  h.assistant({
    tools: [
      { tool: "skill", output: "SKILL BODY" },
      { tool: "bash", output: "OLD BASH OUTPUT one" }
    ]
  })
  h.assistant({ text: "turn one answer" })
  h.user("second request")
  h.assistant({ tools: [{ tool: "bash", output: "OLD BASH OUTPUT two" }] })
  h.assistant({ text: "second done" })
  const third = h.user("third request")
  h.assistant({ tools: [{ tool: "bash", output: "recent output three" }] })
  h.assistant({ text: "third done" })
  h.user("fourth request")
  h.assistant({ text: "fourth done" })
  return { messages: h.messages, first, third }
}

const SUMMARY = "## Objective\nFix the parser\n## Next Move\nRun the tests"

describe("Compaction.compact", () => {
  test("prunes old outputs, summarises the head and keeps the pinned task and the tail", async () => {
    const { messages, first, third } = fourTurns()
    const r = await run([{ text: SUMMARY }], messages)
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const result = r.result.success

    // pruning: old bash outputs only, whole output kept in storage
    const stored = toolParts(r.after)
    const prunedParts = stored.filter((p) => p.state.status === "completed" && p.state.time.compacted !== undefined)
    expect(prunedParts.map((p) => (p.state.status === "completed" ? p.state.output : ""))).toEqual(["OLD BASH OUTPUT one", "OLD BASH OUTPUT two"])
    expect(result.pruned).toEqual(prunedParts.map((p) => p.id))

    // the summary message
    const summary = r.after.find((m) => m.info.id === result.summaryMessageID)!
    expect(summary.info.role === "assistant" && summary.info.summary).toEqual({
      tailStart: third,
      summarised: messages.slice(1, 6).map((m) => m.info.id),
      pinned: [first],
      auto: true
    })
    expect(texts([summary])).toEqual([SUMMARY])
    expect(result.summarised).toEqual(messages.slice(1, 6).map((m) => m.info.id))

    // the request: template, transcript without tools, pruned outputs as placeholders, no tail
    expect(r.requests).toHaveLength(1)
    const body = JSON.parse(r.requests[0]!)
    expect(body.messages[0]).toEqual({ role: "system", content: SUMMARY_TEMPLATE })
    expect(body.tools ?? []).toEqual([])
    expect(r.requests[0]).toContain("SKILL BODY")
    expect(r.requests[0]).toContain(JSON.stringify(prunedPlaceholder("bash")).slice(1, -1))
    expect(r.requests[0]).not.toContain("OLD BASH OUTPUT")
    expect(r.requests[0]).not.toContain("third request")
    expect(r.requests[0]).not.toContain("previous-summary")

    // the view the model gets next
    const view = texts(modelView(r.after))
    expect(view[0]).toBe("ORIGINAL TASK: fix the parser")
    expect(view[1]).toContain(`<conversation-summary>\n${SUMMARY}\n</conversation-summary>`)
    expect(view.slice(2)).toEqual(["third request", "", "third done", "fourth request", "fourth done"])
    expect(JSON.stringify(modelView(r.after))).not.toContain("OLD BASH OUTPUT")

    // events
    const started = r.events.find((e) => e.type === "compaction.started")
    expect(started).toEqual({ type: "compaction.started", sessionID: SESSION, reason: "overflow", tokens: 12_345 })
    const completed = r.events.find((e) => e.type === "compaction.completed")
    expect(completed).toMatchObject({
      messageID: result.summaryMessageID,
      tokensBefore: 12_345,
      tokensAfter: result.tokensAfter,
      pruned: result.pruned,
      summarised: result.summarised,
      summary: SUMMARY
    })
    expect(result.tokensAfter).toBeGreaterThan(0)
    expect(r.overflows).toBe(true)
  })

  test("the summariser's own overflow is retried with the oldest outputs dropped; the second request is smaller", async () => {
    const h = history()
    h.user("task")
    h.assistant({ tools: [{ tool: "bash", output: "old" }] })
    h.user("second")
    h.assistant({
      tools: [
        { tool: "bash", output: `BIG-A ${"a".repeat(8_000)}` },
        { tool: "bash", output: `BIG-B ${"b".repeat(8_000)}` }
      ]
    })
    h.assistant({ text: "second done" })
    h.user("third")
    h.assistant({ text: "third done" })
    const r = await run([OVERFLOW, { text: SUMMARY }], h.messages)
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    expect(r.requests).toHaveLength(2)
    const [firstRequest, secondRequest] = r.requests as [string, string]
    expect(firstRequest).toContain("BIG-A")
    expect(firstRequest).toContain("BIG-B")
    expect(secondRequest).not.toContain("BIG-A")
    expect(secondRequest).toContain("BIG-B")
    expect(secondRequest.length).toBeLessThan(firstRequest.length - 7_000)
    // only the request shrank: the stored outputs of the last 2 turns are not pruned
    const big = toolParts(r.after).filter((p) => p.state.status === "completed" && p.state.output.startsWith("BIG"))
    expect(big.every((p) => p.state.status === "completed" && p.state.time.compacted === undefined)).toBe(true)
  })

  test("when nothing fits, not even one message alone, it fails with a clear error and stores no summary", async () => {
    const h = history()
    h.user("task")
    h.user("second")
    h.assistant({
      tools: [
        { tool: "bash", output: `BIG-A ${"a".repeat(8_000)}` },
        { tool: "bash", output: `BIG-B ${"b".repeat(8_000)}` }
      ]
    })
    h.user("third")
    h.assistant({ text: "third done" })
    const r = await run([OVERFLOW], h.messages, { repeatLast: true })
    if (r.result._tag !== "Failure") throw new Error("expected a failure")
    expect(r.result.failure._tag).toBe("CompactionError")
    expect(r.result.failure.message).toContain(
      "too large to summarise even after dropping old tool outputs and in parts (one message alone is too large for this model); start a new session with `reins run`"
    )
    // all outputs, then one, then none; then in parts, halved down to one message
    expect(r.requests.length).toBeGreaterThan(3)
    expect(r.requests[2]).not.toContain("BIG-")
    expect(r.after.some((m) => m.info.role === "assistant" && m.info.summary)).toBe(false)
    expect(r.events.some((e) => e.type === "compaction.completed")).toBe(false)
  })

  test("a head too large for the model even without outputs is summarised in parts, each part's summary updating the one before", async () => {
    const h = history()
    h.user("task")
    for (let i = 0; i < 24; i++) {
      h.user(`question ${i} ${"q".repeat(1_500)}`)
      h.assistant({ text: `ANSWER-${i} ${"a".repeat(1_500)}` })
    }
    h.user("last turn")
    h.assistant({ text: "last answer" })
    // the whole head overflows (three tries: all outputs, fewer, none), then every part fits
    const part = (i: number): ScriptedStep => ({ text: `PART-SUMMARY-${i}` })
    const r = await run([OVERFLOW, OVERFLOW, OVERFLOW, part(1), part(2), part(3), part(4), part(5), part(6), part(7), part(8)], h.messages, {
      repeatLast: true
    })
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const parts = r.requests.slice(3)
    expect(parts.length).toBeGreaterThan(1)
    // each part goes after the summary of the ones before it, oldest first; every answer is in one part
    for (const [i, request] of parts.entries()) {
      if (i > 0) expect(request).toContain(`PART-SUMMARY-${i}`)
      expect(request.length).toBeLessThan(r.requests[0]!.length)
    }
    // the head's answers (the tail's are kept verbatim): each in a part
    const head = Array.from({ length: 24 }, (_, i) => `ANSWER-${i} `).filter((a) => r.requests[0]!.includes(a))
    expect(head.length).toBeGreaterThan(10)
    for (const answer of head) expect(parts.some((request) => request.includes(answer))).toBe(true)
    expect(r.result.success.summary).toBe(`PART-SUMMARY-${parts.length}`)
  })

  test("a previous summary is updated, not summarised again", async () => {
    const h = history()
    const first = h.user("ORIGINAL TASK")
    const a1 = h.assistant({ text: "ANCIENT DETAIL answer" })
    const u2 = h.user("old second")
    const a2 = h.assistant({ text: "old answer" })
    const u3 = h.user("turn three")
    const a3 = h.assistant({ text: "answer three" })
    h.assistant({ text: "PREVIOUS SUMMARY TEXT", summary: { tailStart: u3, summarised: [a1, u2, a2], pinned: [first], auto: true } })
    const cont = h.user("Continue with the task", { metadata: { compaction_continue: true } })
    const after = h.assistant({ text: "after the summary" })
    const u4 = h.user("turn four")
    h.assistant({ text: "answer four" })
    h.user("turn five")
    h.assistant({ text: "answer five" })
    const r = await run([{ text: "UPDATED SUMMARY" }], h.messages, { input: { reason: "manual" } })
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const result = r.result.success
    const request = r.requests[0]!
    expect(request).toContain("<previous-summary>\\nPREVIOUS SUMMARY TEXT\\n</previous-summary>")
    expect(request).toContain("turn three")
    expect(request).toContain("after the summary")
    expect(request).not.toContain("ANCIENT DETAIL")
    expect(request).not.toContain("old second")
    expect(request).not.toContain("turn four")
    expect(result.summarised).toEqual([u3, a3, cont, after])
    const summary = r.after.find((m) => m.info.id === result.summaryMessageID)!
    expect(summary.info.role === "assistant" && summary.info.summary).toEqual({
      tailStart: u4,
      summarised: [a1, u2, a2, u3, a3, cont, after],
      pinned: [first],
      auto: false
    })
    const view = texts(modelView(r.after))
    expect(view[0]).toBe("ORIGINAL TASK")
    expect(view[1]).toContain("UPDATED SUMMARY")
    expect(view.slice(2)).toEqual(["turn four", "answer four", "turn five", "answer five"])
    expect(view.join("\n")).not.toContain("PREVIOUS SUMMARY TEXT")
  })

  test("settings: partial prune keeps first and last lines; a configured template is the system prompt", async () => {
    const h = history()
    h.user("task")
    h.assistant({ tools: [{ tool: "bash", output: lines(50) }] })
    h.user("two")
    h.assistant({ text: "two done" })
    h.user("three")
    h.assistant({ text: "three done" })
    const r = await run([{ text: SUMMARY }], h.messages, { settings: { ...defaultSettings, pruneKeepLines: 2, template: "CUSTOM TEMPLATE" } })
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const part = toolParts(r.after)[0]!
    expect(part.state.status === "completed" && part.state.pruned).toBe("line 1\nline 2\n[… 46 lines cleared to save context …]\nline 49\nline 50")
    expect(JSON.parse(r.requests[0]!).messages[0]).toEqual({ role: "system", content: "CUSTOM TEMPLATE" })
    expect(r.requests[0]).toContain("line 50")
    expect(r.requests[0]).not.toContain("line 25")
  })

  test("nothing to summarise: a clear error and no model call", async () => {
    const h = history()
    h.user("task")
    h.assistant({ text: "done" })
    const r = await run([{ text: SUMMARY }], h.messages, { input: { reason: "manual" } })
    if (r.result._tag !== "Failure") throw new Error("expected a failure")
    expect(r.result.failure).toMatchObject({ _tag: "CompactionError", reason: "nothing-to-summarise" })
    expect(r.requests).toHaveLength(0)
  })

  test("one long turn on a 4k window: its older steps are summarised, its request stays pinned, its newest step verbatim", async () => {
    const h = history()
    const task = h.user("ORIGINAL TASK: run 12 steps")
    const steps = Array.from({ length: 12 }, (_, i) =>
      h.assistant({ tools: [{ tool: "step", input: { n: i + 1 }, output: `STEP-DONE-${i + 1} ${"log ".repeat(150)}` }] })
    )
    const r = await run([{ text: SUMMARY }], h.messages, { limits: { context: 4_096, output: 8_192 }, input: { turn: task } })
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const result = r.result.success
    const summary = r.after.find((m) => m.info.id === result.summaryMessageID)!
    const info = summary.info.role === "assistant" ? summary.info.summary! : undefined
    // The tail is what fits a quarter of the 2,731 usable tokens: the newest steps, not the 2,000-token floor.
    const tailIndex = steps.indexOf(info!.tailStart!)
    const tail = r.after.filter((m) => steps.slice(tailIndex).includes(m.info.id))
    expect(estimateMessages(tail)).toBeLessThanOrEqual(682)
    expect(estimateMessages(r.after.filter((m) => steps.slice(tailIndex - 1).includes(m.info.id)))).toBeGreaterThan(682)
    expect(tailIndex).toBeGreaterThan(6)
    expect(info!.summarised).toEqual(steps.slice(0, tailIndex))
    expect(info!.pinned).toEqual([task])
    // The summariser is asked to stay short (a fifth of the usable context), and sees the head only.
    expect(r.requests[0]).toContain("keep the whole summary under about 409 words")
    expect(r.requests[0]).toContain("STEP-DONE-1 ")
    expect(r.requests[0]).not.toContain("STEP-DONE-12")
    // The model's view: the request, the summary, then whole steps (each call with its result).
    const view = modelView(r.after)
    expect(texts(view)[0]).toBe("ORIGINAL TASK: run 12 steps")
    expect(texts(view)[1]).toContain(SUMMARY)
    const kept = view
      .slice(2)
      .flatMap((m) => m.parts)
      .flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p.state.output.split(" ")[0]] : []))
    expect(kept.at(-1)).toBe("STEP-DONE-12")
    expect(kept).toHaveLength(12 - tailIndex)
  })

  test("a later turn's request is pinned while it runs, then summarised once that turn is over", async () => {
    const h = history()
    const first = h.user("FIRST TASK")
    const a1 = h.assistant({ text: "first done" })
    const second = h.user("SECOND REQUEST: long work")
    const s1 = h.assistant({ tools: [{ tool: "bash", output: "work 1" }] })
    const s2 = h.assistant({ tools: [{ tool: "bash", output: "work 2" }] })
    h.assistant({ text: "PREVIOUS SUMMARY", summary: { tailStart: s2, summarised: [a1, s1], pinned: [first, second], auto: true } })
    const answer = h.assistant({ text: "second done" })
    const third = h.user("third request")
    h.assistant({ text: "third done" })
    h.user("fourth request")
    h.assistant({ text: "fourth done" })
    // Before: the second request shows verbatim beside the summary.
    expect(texts(modelView(h.messages)).slice(0, 2)).toEqual(["FIRST TASK", "SECOND REQUEST: long work"])
    const r = await run([{ text: "UPDATED SUMMARY" }], h.messages, { input: { reason: "manual" } })
    if (r.result._tag !== "Success") throw new Error(String(r.result.failure))
    const result = r.result.success
    expect(result.summarised).toEqual([second, s2, answer])
    expect(r.requests[0]).toContain("SECOND REQUEST: long work")
    const summary = r.after.find((m) => m.info.id === result.summaryMessageID)!
    expect(summary.info.role === "assistant" && summary.info.summary).toMatchObject({ tailStart: third, pinned: [first] })
    const view = texts(modelView(r.after))
    expect(view[0]).toBe("FIRST TASK")
    expect(view[1]).toContain("UPDATED SUMMARY")
    expect(view.join("\n")).not.toContain("SECOND REQUEST")
  })
})
