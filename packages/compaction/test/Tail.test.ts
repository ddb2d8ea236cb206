import { describe, expect, test } from "bun:test"
import { pinnedIds, pinnedMessages, selectTail, tailBudget } from "../src/index.ts"
import { history } from "./fixtures.ts"

describe("tailBudget (T8)", () => {
  test("a quarter of the usable context, clamped to 2_000–8_000", () => {
    expect(tailBudget(4_000)).toBe(2_000)
    expect(tailBudget(20_000)).toBe(5_000)
    expect(tailBudget(20_003)).toBe(5_000)
    expect(tailBudget(168_000)).toBe(8_000)
    expect(tailBudget(-5)).toBe(2_000)
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
    h.user("two " + "x".repeat(40_000))
    h.assistant({ text: "y".repeat(40_000) })
    expect(selectTail(h.messages, { budget: 2_000 })).toBe(1)
    const one = history()
    one.user("x".repeat(40_000))
    expect(selectTail(one.messages, { budget: 2_000 })).toBe(0)
    expect(selectTail([], { budget: 2_000 })).toBe(0)
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
