import { describe, expect, test } from "bun:test"
import { CONTINUE_PROMPT, continuation } from "../src/index.ts"
import { history } from "./fixtures.ts"

describe("continuation (T11)", () => {
  test("(a) the last real user message had attachments: its text plus a note per file", () => {
    const h = history()
    h.user("earlier")
    h.assistant({ text: "ok" })
    const id = h.user("What is wrong in these?", { files: [{ mime: "image/png", filename: "a.png" }, { mime: "application/pdf", url: "file:///tmp/spec.pdf" }, { mime: "image/jpeg" }] })
    h.assistant({ tools: [{ tool: "read", output: "x" }] })
    h.user("Continue", { metadata: { compaction_continue: true } })
    expect(continuation(h.messages)).toEqual({
      kind: "media",
      text: "What is wrong in these?\n[Attached image/png: a.png]\n[Attached application/pdf: spec.pdf]\n[Attached image/jpeg: unnamed]",
      source: id
    })
  })
  test("(b) the last user message was never answered: replay it", () => {
    const h = history()
    h.user("first task")
    h.assistant({ text: "done" })
    const id = h.user("now refactor the parser")
    h.assistant({ tools: [{ tool: "bash", output: "x" }] })
    h.assistant({ tools: [{ tool: "edit", output: "y" }] })
    expect(continuation(h.messages)).toEqual({ kind: "replay", text: "now refactor the parser", source: id })
  })
  test("(b) with no assistant message at all, or one that failed, or a stop with tool calls", () => {
    const none = history()
    none.user("hello")
    expect(continuation(none.messages).kind).toBe("replay")
    const failed = history()
    failed.user("hello")
    failed.assistant({ text: "partial", finish: "stop", error: { reason: "overflow", message: "too long" } })
    expect(continuation(failed.messages).kind).toBe("replay")
    const pending = history()
    pending.user("hello")
    pending.assistant({ text: "calling", finish: "stop", tools: [{ tool: "bash", output: "x" }] })
    expect(continuation(pending.messages).kind).toBe("replay")
  })
  test("(b) a summary message is not an answer", () => {
    const h = history()
    h.user("build it")
    h.assistant({ text: "the summary", finish: "stop", summary: { summarised: [], pinned: [], auto: true } })
    expect(continuation(h.messages).kind).toBe("replay")
  })
  test("(c) an answered request: the synthetic continue prompt", () => {
    const h = history()
    h.user("explain this")
    h.assistant({ tools: [{ tool: "read", output: "x" }] })
    h.assistant({ text: "It does X." })
    expect(continuation(h.messages)).toEqual({ kind: "continue", text: CONTINUE_PROMPT })
    expect(CONTINUE_PROMPT.startsWith("Continue with the task where you left off")).toBe(true)
    expect(continuation([]).kind).toBe("continue")
  })
  test("earlier continuations are skipped when looking for the last request", () => {
    const h = history()
    const id = h.user("the real request")
    h.assistant({ tools: [{ tool: "bash", output: "x" }] })
    h.user("Continue with the task", { metadata: { compaction_continue: true } })
    h.assistant({ tools: [{ tool: "bash", output: "y" }] })
    expect(continuation(h.messages)).toEqual({ kind: "replay", text: "the real request", source: id })
  })
})
