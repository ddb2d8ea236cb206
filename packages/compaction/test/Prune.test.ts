import { describe, expect, test } from "bun:test"
import { prunedPlaceholder } from "@reins/provider"
import { applyParts, dropOldestOutputs, planPrune, prunedText, visibleOutputs } from "../src/index.ts"
import { history, lines, toolParts } from "./fixtures.ts"

/** Four user turns, each with one bash call; turn 1 also loads a skill. */
const fourTurns = () => {
  const h = history()
  h.user("task")
  h.assistant({
    tools: [
      { tool: "skill", output: "SKILL BODY" },
      { tool: "bash", output: "out-1" }
    ]
  })
  h.assistant({ text: "done 1" })
  h.user("turn 2")
  h.assistant({
    tools: [
      { tool: "bash", output: "out-2" },
      { tool: "read", output: "boom", status: "error" }
    ]
  })
  h.user("turn 3")
  h.assistant({ tools: [{ tool: "bash", output: "out-3" }] })
  h.user("turn 4")
  h.assistant({ tools: [{ tool: "bash", output: "out-4" }] })
  return h.messages
}

const outputsOf = (parts: ReturnType<typeof planPrune>) => parts.map((p) => (p.state.status === "completed" ? p.state.output : ""))

describe("planPrune (T9)", () => {
  test("prunes completed outputs older than the last 2 user turns, never skill, keeping output", () => {
    const plan = planPrune(fourTurns(), { now: 99 })
    expect(outputsOf(plan)).toEqual(["out-1", "out-2"])
    for (const p of plan) {
      if (p.state.status !== "completed") throw new Error("not completed")
      expect(p.state.time.compacted).toBe(99)
      expect(p.state.pruned).toBe(prunedPlaceholder("bash"))
    }
  })
  test("protected tools are configurable", () => {
    expect(outputsOf(planPrune(fourTurns(), { now: 1, protectedTools: ["bash"] }))).toEqual(["SKILL BODY"])
  })
  test("already pruned parts are not planned again", () => {
    const messages = fourTurns()
    const once = applyParts(messages, planPrune(messages, { now: 1 }))
    expect(planPrune(once, { now: 2 })).toEqual([])
  })
  test("a compaction continuation does not start a turn, so it does not shorten the protected window", () => {
    const h = history()
    h.user("first")
    h.assistant({ tools: [{ tool: "bash", output: "old" }] })
    h.user("second")
    h.assistant({ tools: [{ tool: "bash", output: "mid" }] })
    h.user("Continue…", { metadata: { compaction_continue: true } })
    h.assistant({ tools: [{ tool: "bash", output: "new" }] })
    expect(outputsOf(planPrune(h.messages, { now: 1 }))).toEqual([])
    h.user("third")
    expect(outputsOf(planPrune(h.messages, { now: 1 }))).toEqual(["old"])
  })
  test("fewer turns than protected: nothing pruned; protectTurns 0: everything", () => {
    const h = history()
    h.user("only")
    h.assistant({ tools: [{ tool: "bash", output: "a" }] })
    expect(planPrune(h.messages, { now: 1 })).toEqual([])
    expect(outputsOf(planPrune(h.messages, { now: 1, protectTurns: 0 }))).toEqual(["a"])
  })
  test("partial prune keeps the first and last lines of a long output", () => {
    const h = history()
    h.user("a")
    h.assistant({
      tools: [
        { tool: "bash", output: lines(100) },
        { tool: "bash", output: lines(6) }
      ]
    })
    h.user("b")
    h.user("c")
    const plan = planPrune(h.messages, { now: 1, keepLines: 3 })
    const [long, short] = plan.map((p) => (p.state.status === "completed" ? p.state : undefined))
    expect(long?.pruned).toBe(["line 1", "line 2", "line 3", "[… 94 lines cleared to save context …]", "line 98", "line 99", "line 100"].join("\n"))
    expect(long?.output).toBe(lines(100))
    // not longer than 2 × keepLines: the placeholder
    expect(short?.pruned).toBe(prunedPlaceholder("bash"))
    expect(prunedText("bash", `${lines(7)}\n`, 3)).toContain("[… 1 lines cleared")
  })
})

describe("dropOldestOutputs", () => {
  test("keeps only the newest outputs visible, in a copy", () => {
    const messages = fourTurns()
    expect(visibleOutputs(messages)).toBe(5)
    const dropped = dropOldestOutputs(messages, 2, 7)
    expect(visibleOutputs(dropped)).toBe(2)
    const shown = toolParts(dropped).flatMap((p) => (p.state.status === "completed" && p.state.time.compacted === undefined ? [p.state.output] : []))
    expect(shown).toEqual(["out-3", "out-4"])
    expect(visibleOutputs(messages)).toBe(5)
  })
  test("an output pruned to its first and last lines still counts as visible; a placeholder does not", () => {
    const h = history()
    h.assistant({
      tools: [
        { tool: "bash", output: "x", compacted: 1, pruned: "first\n[…]\nlast" },
        { tool: "bash", output: "y", compacted: 1 }
      ]
    })
    expect(visibleOutputs(h.messages)).toBe(1)
    expect(visibleOutputs(dropOldestOutputs(h.messages, 0, 2))).toBe(0)
  })
})
