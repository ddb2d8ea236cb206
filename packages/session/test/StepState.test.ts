// The step's state folded from what happens, as a pure function.
import { describe, expect, test } from "bun:test"
import type { ReasoningPart, TextPart, ToolPart } from "@reins/domain"
import { TEXT_STORE_MIN_GROWTH, cutOff, emptyStep, foldStep, textDue, type StepEvent } from "../src/StepState.ts"

const base = { sessionID: "ses_1", messageID: "msg_1" }
const text: TextPart = { id: "prt_t", ...base, type: "text", text: "", time: { start: 1 } }
const pending = (callID: string): ToolPart => ({
  id: `prt_${callID}`,
  ...base,
  type: "tool",
  callID,
  tool: "bash",
  state: { status: "pending", input: {}, raw: "" }
})

const fold = (events: ReadonlyArray<StepEvent>) => events.reduce(foldStep, emptyStep)

describe("foldStep", () => {
  test("text grows by its deltas and ends with its time; the input is not changed", () => {
    const started = fold([{ type: "text-start", key: "t:1", part: text }])
    const after = fold([
      { type: "text-start", key: "t:1", part: text },
      { type: "text-delta", key: "t:1", text: "hel" },
      { type: "text-delta", key: "t:1", text: "lo" },
      { type: "text-end", key: "t:1", end: 9 }
    ])
    expect(after.texts.get("t:1")).toEqual({ ...text, text: "hello", time: { start: 1, end: 9 } })
    expect(started.texts.get("t:1")!.text).toBe("")
    expect(emptyStep.texts.size).toBe(0)
    // a delta for a text that never started changes nothing
    expect(foldStep(started, { type: "text-delta", key: "t:2", text: "x" })).toBe(started)
  })

  test("a reasoning part gathers the provider's metadata from its start, deltas and end, key by key; a text part keeps none", () => {
    const reasoning: ReasoningPart = {
      id: "prt_r",
      ...base,
      type: "reasoning",
      text: "",
      time: { start: 1 },
      providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: null } }
    }
    const after = fold([
      { type: "text-start", key: "r:1", part: reasoning },
      { type: "text-delta", key: "r:1", text: "plan", metadata: { openai: { itemId: "rs_1" } } },
      { type: "text-delta", key: "r:1", text: "", metadata: { anthropic: { signature: "sig" } } },
      { type: "text-end", key: "r:1", end: 5, metadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc" } } }
    ])
    expect(after.texts.get("r:1")).toEqual({
      ...reasoning,
      text: "plan",
      time: { start: 1, end: 5 },
      providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc" }, anthropic: { signature: "sig" } }
    })
    const plain = fold([
      { type: "text-start", key: "t:1", part: text },
      { type: "text-end", key: "t:1", end: 2, metadata: { openai: { itemId: "msg_1" } } }
    ])
    expect(plain.texts.get("t:1")).toEqual({ ...text, time: { start: 1, end: 2 } })
  })

  test("a text is due for storing once it grew by the minimum, then by a quarter of what is stored", () => {
    let state = fold([
      { type: "text-start", key: "t:1", part: text },
      { type: "text-delta", key: "t:1", text: "a".repeat(TEXT_STORE_MIN_GROWTH - 1) }
    ])
    expect(textDue(state, "t:1")).toBe(false)
    state = foldStep(state, { type: "text-delta", key: "t:1", text: "a" })
    expect(textDue(state, "t:1")).toBe(true)
    state = foldStep(state, { type: "text-stored", key: "t:1" })
    expect(textDue(state, "t:1")).toBe(false)
    state = foldStep(state, { type: "text-delta", key: "t:1", text: "a".repeat(TEXT_STORE_MIN_GROWTH) })
    expect(textDue(state, "t:1")).toBe(true)
  })

  test("tool input streams into a pending call only; the newest part of a call wins", () => {
    const call = pending("c1")
    const streamed = fold([
      { type: "tool", part: call },
      { type: "tool-input-delta", callID: "c1", delta: '{"command":' },
      { type: "tool-input-delta", callID: "c1", delta: '"ls"}' }
    ])
    expect(streamed.calls.get("c1")!.state).toMatchObject({ status: "pending", raw: '{"command":"ls"}' })
    const running: ToolPart = { ...call, state: { status: "running", input: { command: "ls" }, time: { start: 2 } } }
    const after = fold([
      { type: "tool", part: call },
      { type: "tool", part: running },
      { type: "tool-input-delta", callID: "c1", delta: "late" }
    ])
    expect(after.calls.get("c1")).toEqual(running)
  })

  test("cut off: open calls are interrupted (their last output kept), unfinished texts ended, finished ones left alone", () => {
    const running: ToolPart = {
      ...pending("c1"),
      state: { status: "running", input: { command: "sleep 9" }, metadata: { tail: "line 1" }, time: { start: 2 } }
    }
    const done: ToolPart = { ...pending("c2"), state: { status: "completed", input: {}, output: "ok", title: "t", metadata: {}, time: { start: 2, end: 3 } } }
    const state = fold([
      { type: "tool", part: running },
      { type: "tool", part: done },
      { type: "tool", part: pending("c3") },
      { type: "text-start", key: "t:1", part: text }
    ])
    const cut = cutOff(state, 10)
    expect(cut.changed.map((p) => p.id).sort()).toEqual(["prt_c1", "prt_c3", "prt_t"])
    expect(cut.state.calls.get("c1")!.state).toMatchObject({ status: "error", interrupted: true, time: { start: 2, end: 10 } })
    const interrupted = cut.state.calls.get("c1")!.state
    expect(interrupted.status === "error" ? interrupted.error : "").toContain("line 1")
    expect(cut.state.calls.get("c2")).toEqual(done)
    expect(state.calls.get("c1")).toEqual(running)
  })
})
