import { describe, expect, test } from "bun:test"
import { pinnedIds, pinnedMessages, selectTail, tailBudget } from "../src/index.ts"
import { history } from "./fixtures.ts"

describe("tailBudget (T8)", () => {
  test("a quarter of the usable context, at most 8_000; on a small window the 2_000 floor gives way", () => {
    expect(tailBudget(20_000)).toBe(5_000)
    expect(tailBudget(20_003)).toBe(5_000)
    expect(tailBudget(168_000)).toBe(8_000)
    expect(tailBudget(8_000)).toBe(2_000)
    expect(tailBudget(4_000)).toBe(1_000)
    expect(tailBudget(2_731)).toBe(682)
    expect(tailBudget(-5)).toBe(0)
  })
})

describe("selectTail (T8)", () => {
  const small = () => {
    const h = history()
    h.user("one")
    h.assistant({ text: "a1" })
    h.user("two")
    h.assistant({ tools: [{ tool: "bash", output: "x" }] })
    h.assistant({ text: "a2" })
    h.user("three")
    h.assistant({ text: "a3" })
    return h.messages
  }
  test("keeps the last 2 user turns when they fit", () => {
    expect(selectTail(small(), { budget: 8_000 })).toBe(2)
    expect(selectTail(small(), { budget: 8_000, tailTurns: 1 })).toBe(5)
    expect(selectTail(small(), { budget: 8_000, tailTurns: 5 })).toBe(0)
  })
  test("tailTurns 0 keeps no tail", () => {
    expect(selectTail(small(), { budget: 8_000, tailTurns: 0 })).toBe(7)
  })
  test("shrinks from the front while over budget, keeping what fits", () => {
    const h = history()
    h.user("one")
    h.user("two")
    h.assistant({ tools: [{ tool: "bash", output: "x".repeat(12_000) }] })
    h.assistant({ text: "y".repeat(2_000) })
    h.user("three")
    h.assistant({ text: "z".repeat(2_000) })
    // the bash result alone (3_000 tokens) is over budget: the tail starts after it
    expect(selectTail(h.messages, { budget: 2_000 })).toBe(3)
    expect(selectTail(h.messages, { budget: 900 })).toBe(4)
  })
  test("never fewer than the last 2 messages, however large", () => {
    const h = history()
    h.user("one")
    h.user(`two ${"x".repeat(40_000)}`)
    h.assistant({ text: "y".repeat(40_000) })
    expect(selectTail(h.messages, { budget: 2_000 })).toBe(1)
    const one = history()
    one.user("x".repeat(40_000))
    expect(selectTail(one.messages, { budget: 2_000 })).toBe(0)
    expect(selectTail([], { budget: 2_000 })).toBe(0)
  })
  test("the last 2 messages give way when they exceed the limit: a small window summarises its newest step too", () => {
    const h = history()
    h.user("the task")
    h.assistant({ tools: [{ tool: "bash", output: "x".repeat(2_000) }] }) // 500 tokens
    h.assistant({ tools: [{ tool: "bash", output: "y".repeat(2_000) }] }) // 500
    h.assistant({ tools: [{ tool: "bash", output: "z".repeat(400) }] }) // 100
    // no limit: the last 2 stay however large
    expect(selectTail(h.messages, { budget: 300 })).toBe(2)
    // within the limit: still the last 2
    expect(selectTail(h.messages, { budget: 300, limit: 700 })).toBe(2)
    // over it: only what fits the budget
    expect(selectTail(h.messages, { budget: 300, limit: 400 })).toBe(3)
    expect(selectTail(h.messages, { budget: 50, limit: 50 })).toBe(4)
  })
  test("one long turn: its own older steps leave the tail, its newest stay", () => {
    const h = history()
    h.user("the task")
    for (let i = 0; i < 30; i++) h.assistant({ tools: [{ tool: "step", output: `STEP-DONE-${i + 1} ${"x".repeat(200)}` }] })
    const start = selectTail(h.messages, { budget: 300, limit: 700 })
    expect(start).toBeGreaterThan(20)
    expect(start).toBeLessThan(h.messages.length)
    expect(selectTail(h.messages, { budget: 300, tailTurns: 0 })).toBe(h.messages.length)
  })
  test("a compaction continuation does not start a turn", () => {
    const h = history()
    h.user("one")
    h.assistant({ text: "a1" })
    h.user("two")
    h.assistant({ text: "a2" })
    h.user("Continue", { metadata: { compaction_continue: true } })
    h.assistant({ text: "a3" })
    expect(selectTail(h.messages, { budget: 8_000 })).toBe(0)
    expect(selectTail(h.messages, { budget: 8_000, tailTurns: 1 })).toBe(2)
  })
})

describe("pinned messages", () => {
  test("the first real user message and those marked pinned", () => {
    const h = history()
    h.user("Continue", { metadata: { compaction_continue: true } })
    const first = h.user("the task")
    h.assistant({ text: "ok" })
    h.user("later")
    const marked = h.user("remember: never push", { metadata: { pinned: true } })
    h.user("not pinned", { metadata: { pinned: false } })
    expect(pinnedMessages(h.messages).map((m) => m.info.id)).toEqual([first, marked])
    expect([...pinnedIds(h.messages)]).toEqual([first, marked])
    expect(pinnedMessages([])).toEqual([])
  })
})
