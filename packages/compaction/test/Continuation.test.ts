import { describe, expect, test } from "bun:test"
import { CONTINUE_PROMPT, continuation } from "../src/index.ts"
import { history } from "./fixtures.ts"

describe("continuation (T11)", () => {
  test("(a) a request with attachments the model has not worked on yet: its text plus a note per file", () => {
    const h = history()
    h.user("earlier")
    h.assistant({ text: "ok" })
    const id = h.user("What is wrong in these?", {
      files: [{ mime: "image/png", filename: "a.png" }, { mime: "application/pdf", url: "file:///tmp/spec.pdf" }, { mime: "image/jpeg" }]
    })
    h.user("Continue", { metadata: { compaction_continue: true } })
    expect(continuation(h.messages)).toEqual({
      kind: "media",
      text: "What is wrong in these?\n[Attached image/png: a.png]\n[Attached application/pdf: spec.pdf]\n[Attached image/jpeg: unnamed]",
      source: id
    })
  })
  test("(b) a request the model has not worked on yet: replay it", () => {
    const h = history()
    h.user("first task")
    h.assistant({ text: "done" })
    const id = h.user("now refactor the parser")
    expect(continuation(h.messages)).toEqual({ kind: "replay", text: "now refactor the parser", source: id })
  })
  test("(b) with no assistant message at all, or only one that failed or is a summary", () => {
    const none = history()
    none.user("hello")
    expect(continuation(none.messages).kind).toBe("replay")
    const failed = history()
    failed.user("hello")
    failed.assistant({ text: "partial", finish: "stop", error: { reason: "overflow", message: "too long" } })
    expect(continuation(failed.messages).kind).toBe("replay")
    const summary = history()
    summary.user("build it")
    summary.assistant({ text: "the summary", finish: "stop", summary: { summarised: [], pinned: [], auto: true } })
    expect(continuation(summary.messages).kind).toBe("replay")
  })
  test("(c) once the turn made steps, the synthetic continue prompt, never the request again (a model would start over)", () => {
    const tools = history()
    tools.user("first task")
    tools.assistant({ text: "done" })
    tools.user("now refactor the parser")
    tools.assistant({ tools: [{ tool: "bash", output: "x" }] })
    tools.assistant({ tools: [{ tool: "edit", output: "y" }] })
    expect(continuation(tools.messages)).toEqual({ kind: "continue", text: CONTINUE_PROMPT })
    const stopWithTools = history()
    stopWithTools.user("hello")
    stopWithTools.assistant({ text: "calling", finish: "stop", tools: [{ tool: "bash", output: "x" }] })
    expect(continuation(stopWithTools.messages).kind).toBe("continue")
    const media = history()
    media.user("What is wrong in this?", { files: [{ mime: "image/png", filename: "a.png" }] })
    media.assistant({ tools: [{ tool: "read", output: "x" }] })
    expect(continuation(media.messages).kind).toBe("continue")
  })
  test("the loop's word wins: progressed (steps summarised away) or not", () => {
    const h = history()
    h.user("the real request")
    h.assistant({ text: "the summary", finish: "stop", summary: { summarised: [], pinned: [], auto: true } })
    h.user("Continue with the task", { metadata: { compaction_continue: true } })
    expect(continuation(h.messages).kind).toBe("replay")
    expect(continuation(h.messages, { progressed: true }).kind).toBe("continue")
    const worked = history()
    worked.user("the real request")
    worked.assistant({ tools: [{ tool: "bash", output: "x" }] })
    expect(continuation(worked.messages, { progressed: false }).kind).toBe("replay")
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
    h.user("Continue with the task", { metadata: { compaction_continue: true } })
    expect(continuation(h.messages)).toEqual({ kind: "replay", text: "the real request", source: id })
  })
})
