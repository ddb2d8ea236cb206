import { describe, expect, test } from "bun:test"
import { prunedPlaceholder, toModelMessages } from "@reins/provider"
import type { MessageWithParts } from "@reins/storage"
import { fromBoundary, latestSummary, modelView, queuedNote } from "../src/index.ts"
import { history } from "./fixtures.ts"

const texts = (messages: ReadonlyArray<MessageWithParts>) =>
  messages.map((m) => `${m.info.role}: ${m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ")}`)

/** A session compacted once: turns 1–2 summarised (turn 1 pinned), turns 3–4 kept, turn 5 after the summary. */
const compacted = () => {
  const h = history()
  const first = h.user("ORIGINAL TASK")
  h.assistant({ tools: [{ tool: "bash", output: "PRUNED OUTPUT ONE", compacted: 9 }] })
  const middle = h.user("middle turn")
  h.assistant({
    text: "middle answer",
    tools: [{ tool: "bash", output: "PRUNED OUTPUT TWO", compacted: 9, pruned: "head\n[… 10 lines cleared to save context …]\ntail" }]
  })
  const tail = h.user("turn three")
  h.assistant({ text: "answer three" })
  h.user("turn four", { metadata: { pinned: true } })
  h.assistant({ text: "answer four" })
  const summary = h.assistant({ text: "THE SUMMARY", summary: { tailStart: tail, summarised: [middle], pinned: [first], auto: true } })
  h.user("Continue with the task", { metadata: { compaction_continue: true } })
  h.assistant({ text: "after summary" })
  return { messages: h.messages, first, tail, summary }
}

describe("modelView", () => {
  test("without a summary: every message", () => {
    const h = history()
    h.user("hi")
    h.assistant({ text: "hello" })
    expect(texts(modelView(h.messages))).toEqual(["user: hi", "assistant: hello"])
  })
  test("after a summary: pinned first message, the summary, the tail verbatim, then what followed", () => {
    const { messages } = compacted()
    const view = modelView(messages)
    const shown = texts(view)
    expect(shown[0]).toBe("user: ORIGINAL TASK")
    expect(shown[1]).toContain("<conversation-summary>\nTHE SUMMARY\n</conversation-summary>")
    expect(shown[1]).toMatch(/summarised/)
    expect(view[1]!.info.role).toBe("user")
    expect(shown.slice(2)).toEqual([
      "user: turn three",
      "assistant: answer three",
      "user: turn four",
      "assistant: answer four",
      "user: Continue with the task",
      "assistant: after summary"
    ])
    expect(shown.join("\n")).not.toContain("middle")
  })
  test("no pruned output text reaches the model", () => {
    const h = history()
    h.user("task")
    h.assistant({
      tools: [
        { tool: "bash", output: "PRUNED OUTPUT ONE", compacted: 9 },
        { tool: "grep", output: "PRUNED OUTPUT TWO", compacted: 9, pruned: "kept lines" }
      ]
    })
    const view = modelView(h.messages)
    const json = JSON.stringify(view)
    expect(json).not.toContain("PRUNED OUTPUT")
    expect(json).toContain("kept lines")
    const wire = JSON.stringify(toModelMessages(view, "openai-compatible"))
    expect(wire).not.toContain("PRUNED OUTPUT")
    expect(wire).toContain(prunedPlaceholder("bash"))
    // the stored messages keep the whole output
    expect(JSON.stringify(h.messages)).toContain("PRUNED OUTPUT ONE")
  })
  test("a pinned message inside the tail is not repeated before the summary", () => {
    const { messages } = compacted()
    expect(texts(modelView(messages)).filter((t) => t === "user: turn four")).toHaveLength(1)
  })
  test("a pinned message from the summarised head is shown verbatim", () => {
    const h = history()
    h.user("task")
    h.assistant({ text: "a" })
    h.user("KEEP THIS RULE", { metadata: { pinned: true } })
    h.assistant({ text: "b" })
    const tail = h.user("recent")
    h.assistant({ text: "summary", summary: { tailStart: tail, summarised: [], pinned: [], auto: true } })
    expect(texts(modelView(h.messages)).slice(0, 2)).toEqual(["user: task", "user: KEEP THIS RULE"])
  })
  test("a summary without a tail: pinned, summary, then what followed", () => {
    const h = history()
    h.user("task")
    h.assistant({ text: "old answer" })
    h.assistant({ text: "S", summary: { summarised: [], pinned: [], auto: false } })
    h.user("next")
    expect(texts(modelView(h.messages)).map((t) => t.slice(0, 12))).toEqual(["user: task", "user: The ea", "user: next"])
  })
  test("an unfinished or failed summary is ignored and hidden", () => {
    const h = history()
    h.user("task")
    h.assistant({ text: "answer" })
    h.assistant({ text: "HALF SUMMARY", completed: false, summary: { summarised: [], pinned: [], auto: true } })
    h.assistant({ text: "BAD SUMMARY", error: { reason: "invalid", message: "x" }, summary: { summarised: [], pinned: [], auto: true } })
    expect(latestSummary(h.messages)).toBeUndefined()
    expect(texts(modelView(h.messages))).toEqual(["user: task", "assistant: answer"])
  })
  test("an older summary inside the new tail is not shown as a message", () => {
    const h = history()
    h.user("task")
    const tail = h.user("recent")
    h.assistant({ text: "OLD SUMMARY", summary: { summarised: [], pinned: [], auto: true } })
    h.assistant({ text: "work" })
    h.assistant({ text: "NEW SUMMARY", summary: { tailStart: tail, summarised: [], pinned: [], auto: true } })
    const shown = texts(modelView(h.messages)).join("\n")
    expect(shown).not.toContain("OLD SUMMARY")
    expect(shown).toContain("NEW SUMMARY")
  })
  test("queued user messages are wrapped as a system reminder; the stored message is unchanged", () => {
    const h = history()
    h.user("task")
    h.assistant({ tools: [{ tool: "bash", output: "x" }] })
    h.user("also fix the typo", { metadata: { queued: true }, files: [{ mime: "image/png", filename: "t.png" }] })
    const view = modelView(h.messages)
    expect(texts(view)[2]).toBe(
      `user: <system-reminder>\nThe user sent the following message:\nalso fix the typo\n\nPlease address this message and continue with your tasks.\n</system-reminder>`
    )
    expect(view[2]!.parts.map((p) => p.type)).toEqual(["text", "file"])
    expect(queuedNote("x")).toContain("The user sent the following message:\nx\n")
    expect(texts(h.messages)[2]).toBe("user: also fix the typo")
  })
})

describe("fromBoundary", () => {
  test("keeps the pinned messages and everything from the tail on; the view is the same", () => {
    const { messages, first, tail } = compacted()
    const kept = fromBoundary(messages)
    expect(kept[0]!.info.id).toBe(first)
    expect(kept[1]!.info.id).toBe(tail)
    expect(kept.length).toBe(messages.length - 3)
    expect(modelView(kept)).toEqual(modelView(messages))
  })
  test("without a summary: all messages", () => {
    const h = history()
    h.user("a")
    expect(fromBoundary(h.messages)).toBe(h.messages)
  })
})
