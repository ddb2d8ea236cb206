// An automatic compaction seen from the CLI: `reins run` events and progress lines, and how
// `reins sessions show` presents the summary, the pruned outputs and the loop's continuation.
import { beforeAll, describe, expect, test } from "bun:test"
import type { ScriptedStep } from "@reins/testkit"
import { ensureBuilt, events, projects, reins, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

// The project's model has context 32,000 and output 4,000: usable 28,000 tokens, so a step
// reporting 29,000 prompt tokens overflows.
const overflowing = (finalText: string): ReadonlyArray<ScriptedStep> => [
  { toolCalls: [{ name: "bash", arguments: { command: "echo OLD-OUTPUT-MARKER" } }] }, // turn 1
  { text: "ok one" },
  { text: "ok two" }, // turn 2
  { toolCalls: [{ name: "bash", arguments: { command: "echo small" } }], usage: { prompt_tokens: 29_000, completion_tokens: 10 } }, // turn 3: overflow
  { text: "## Objective\nAUTO-SUMMARY-MARKER" }, // the summary call
  { text: finalText }
]

/** Runs turns 1 and 2; returns the session id. */
const twoTurns = async (p: Project) => {
  const first = await reins(["run", "--yolo", "--format", "json", "TASK-MARKER: build it"], p)
  expect(first.code).toBe(0)
  const sessionID = events(first.stdout)[0]!.session.id as string
  expect((await reins(["run", "--session", sessionID, "second"], p)).code).toBe(0)
  return sessionID
}

describe("automatic compaction in the CLI", () => {
  test("reins run --format json prints compaction.started and compaction.completed; the turn goes on by itself", async () => {
    const p = await setup(overflowing("FINAL-ANSWER"))
    const sessionID = await twoTurns(p)
    const r = await reins(["run", "--yolo", "--format", "json", "--session", sessionID, "third"], p)
    expect(r.code).toBe(0)
    const evs = events(r.stdout)
    const started = evs.find((e) => e.type === "compaction.started")
    const completed = evs.find((e) => e.type === "compaction.completed")
    expect(started).toEqual({ type: "compaction.started", sessionID, reason: "overflow", tokens: 29_010 })
    expect(completed).toMatchObject({ sessionID, tokensBefore: 29_010, summary: "## Objective\nAUTO-SUMMARY-MARKER" })
    expect(completed!.pruned).toHaveLength(1)
    expect(completed!.summarised).toHaveLength(2)
    expect(evs.indexOf(started!)).toBeLessThan(evs.indexOf(completed!))
    // the loop's continuation message is an ordinary event in JSON, flagged
    const continued = evs.find((e) => e.type === "message.updated" && e.message.metadata?.compaction_continue === true)
    // the overflowing step had run a tool: the loop continues the work, it does not replay "third"
    expect(continued?.message.metadata).toEqual({ compaction_continue: true, continuation: "continue" })
    const synthetic = evs.filter((e) => e.type === "part.updated" && e.part.type === "text" && e.part.synthetic === true).map((e) => e.part.text as string)
    expect(synthetic).toHaveLength(1)
    expect(synthetic[0]).toStartWith("Continue with the task where you left off")
    expect(p.server.requests).toHaveLength(6)
    expect(JSON.stringify(p.server.requests[5]!.body.messages)).toContain("AUTO-SUMMARY-MARKER")
  })

  test("text mode: two progress lines on stderr, only the answer on stdout", async () => {
    const p = await setup(overflowing("FINAL-ANSWER"))
    const sessionID = await twoTurns(p)
    const r = await reins(["run", "--yolo", "--session", sessionID, "third"], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("FINAL-ANSWER\n")
    const lines = r.stderr.split("\n")
    expect(lines).toContain("compacting context (overflow, ~29,010 tokens)…")
    const done = lines.find((l) => l.startsWith("compacted: "))
    expect(done).toMatch(/^compacted: 29,010 → [\d,]+ tokens; 2 messages summarised, 1 tool output pruned$/)
    expect(lines.indexOf("compacting context (overflow, ~29,010 tokens)…")).toBeLessThan(lines.indexOf(done!))
    expect(r.stderr).not.toContain("AUTO-SUMMARY-MARKER")
  })

  test("sessions show: a marker with the summary, pruned outputs noted, the continuation hidden; --format json keeps it all", async () => {
    const p = await setup(overflowing("FINAL-ANSWER"))
    const sessionID = await twoTurns(p)
    expect((await reins(["run", "--yolo", "--session", sessionID, "third"], p)).code).toBe(0)

    const shown = await reins(["sessions", "show", sessionID], p)
    expect(shown.code).toBe(0)
    const out = shown.stdout
    expect(out).toContain("── compacted (auto): 2 messages summarised, 1 tool output pruned ──\nsummary:\n  ## Objective\n  AUTO-SUMMARY-MARKER")
    expect(out).toMatch(/^✓ bash echo OLD-OUTPUT-MARKER · exit 0 · (?:\d+ms|\d+\.\ds|\d+m \d\ds) \(pruned for the model\)$/m)
    expect(out).not.toMatch(/bash echo small.*\(pruned for the model\)/) // a recent output is not pruned
    // three user turns; the loop's continuation is hidden
    expect(out.match(/── user /g)).toHaveLength(3)
    expect(out.match(/^third$/gm)).toHaveLength(1)
    // the summary is not an ordinary answer
    expect(out).not.toMatch(/── assistant [^\n]*\n## Objective/)
    expect(out.trimEnd().endsWith("FINAL-ANSWER")).toBe(true)

    const json = await reins(["sessions", "show", sessionID, "--format", "json"], p)
    expect(json.code).toBe(0)
    const { messages } = JSON.parse(json.stdout) as { messages: Array<{ info: any; parts: Array<any> }> }
    const continued = messages.filter((m) => m.info.role === "user" && m.info.metadata?.compaction_continue === true)
    expect(continued).toHaveLength(1)
    expect(continued[0]!.parts[0]).toMatchObject({ type: "text", synthetic: true })
    expect(continued[0]!.parts[0].text).toStartWith("Continue with the task where you left off")
    const summary = messages.find((m) => m.info.summary !== undefined)!
    expect(summary.info.summary).toMatchObject({ auto: true })
    expect(summary.info.summary.summarised).toHaveLength(2)
    expect(summary.parts[0].text).toBe("## Objective\nAUTO-SUMMARY-MARKER")
    const pruned = messages.flatMap((m) => m.parts).filter((x) => x.type === "tool" && x.state.time.compacted !== undefined)
    expect(pruned).toHaveLength(1)
    expect(pruned[0].state.output).toContain("OLD-OUTPUT-MARKER")
    expect(typeof pruned[0].state.pruned).toBe("string")
  })
})
