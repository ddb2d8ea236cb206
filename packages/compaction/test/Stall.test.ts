import { describe, expect, test } from "bun:test"
import {
  MAX_FUTILE_COMPACTIONS,
  compacted,
  isStalled,
  lengthRule,
  noStall,
  nothingCompacted,
  stallError,
  stepFitted,
  stepOverflowed,
  summaryRequest,
  type Stall
} from "../src/index.ts"
import { history } from "./fixtures.ts"

const fold = (events: ReadonlyArray<"fit" | "over" | "compacted" | "nothing">): Stall =>
  events.reduce((s, e) => (e === "fit" ? stepFitted(s) : e === "over" ? stepOverflowed(s) : e === "compacted" ? compacted(s) : nothingCompacted(s)), noStall)

describe("compactions without progress", () => {
  test("a compaction after which the next request still overflows is futile; 3 in a row stall", () => {
    expect(MAX_FUTILE_COMPACTIONS).toBe(3)
    expect(isStalled(fold(["over", "compacted", "over", "compacted", "over", "compacted", "over"]))).toBe(true)
    expect(fold(["over", "compacted", "over", "compacted", "over"]).futile).toBe(2)
  })
  test("a step that fits starts the count again: a long turn compacting every few steps never stalls", () => {
    const events: Array<"fit" | "over" | "compacted"> = []
    for (let i = 0; i < 50; i++) events.push("fit", "fit", "over", "compacted")
    expect(fold(events).futile).toBe(0)
    expect(isStalled(fold(["over", "compacted", "over", "compacted", "fit", "over", "compacted", "over"]))).toBe(false)
  })
  test("an overflow that is not right after a compaction is not futile; nothing to summarise is", () => {
    expect(fold(["over", "over", "over"]).futile).toBe(0)
    expect(isStalled(fold(["over", "nothing", "over", "nothing", "over", "nothing"]))).toBe(true)
  })
  test("the error says what does not fit and what to do", () => {
    const e = stallError({ sessionID: "ses_1", model: "local/small", limit: 4_096, usable: 2_731, tokens: 3_100, fixed: 2_400 })
    expect(e.reason).toBe("no-progress")
    expect(e.message).toContain("local/small")
    expect(e.message).toContain("4,096 tokens, 2,731 of them for the conversation")
    expect(e.message).toContain("~3,100")
    expect(e.message).toContain("the system prompt and tool definitions alone ~2,400")
    expect(e.message).toContain("larger context")
    expect(e.message).toContain('"tool_output"')
    expect(e.message).toContain("reins sessions show ses_1")
  })
})

describe("summary length on a small window", () => {
  test("asked below 4,000 tokens, in words; never on a large window", () => {
    expect(lengthRule(546)).toContain("under about 409 words")
    expect(lengthRule(40)).toContain("under about 50 words")
    expect(lengthRule(4_000)).toBeUndefined()
    expect(lengthRule(undefined)).toBeUndefined()
    const h = history()
    h.user("task")
    const text = (maxTokens?: number) => JSON.stringify(summaryRequest({ head: h.messages, maxTokens }).messages)
    expect(text(546)).toContain("under about 409 words")
    expect(text(30_000)).not.toContain("words")
    expect(JSON.stringify(summaryRequest({ head: h.messages, previous: "old", maxTokens: 546 }).messages)).toContain("under about 409 words")
  })
})
