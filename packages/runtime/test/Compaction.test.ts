// Long sessions through the composed runtime and the scripted server: overflow → prune + summary →
// the loop goes on by itself; a provider's "maximum context length" error does the same.
import { describe, expect, test } from "bun:test"
import { Effect, Schema } from "effect"
import type { ScriptedServer, ScriptedStep } from "@reins/testkit"
import { Tool, bash, read } from "@reins/tool"
import { runIn, scriptedRuntimes, sessionTurns } from "./support.ts"

const runtime = scriptedRuntimes()
let server: ScriptedServer | undefined

// A stand-in for the skill tool: its outputs are protected from pruning by default.
const skill = Tool.define("skill", {
  description: "Loads a skill",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args) => Effect.succeed({ title: args.name, output: `SKILL-OUTPUT-MARKER for ${args.name}` })
})

/** Runs the given user turns on one session; returns every request the server saw, the events and the stored messages. */
const session = async (steps: ReadonlyArray<ScriptedStep>, turns: ReadonlyArray<string>, compaction: Record<string, unknown> = {}) => {
  const made = await runtime(steps, {
    models: { small: { context: 16_000, output: 2_000 } },
    config: { retry: { attempts: 2, initial_delay_ms: 1, max_delay_ms: 5 }, compaction },
    tools: [bash, read, skill]
  })
  const { cwd, layer } = made
  server = made.server
  return runIn(
    layer,
    sessionTurns(
      turns.map((text) => ({ text, model: { providerID: "local", modelID: "small" } })),
      cwd
    )
  )
}

const requestText = (index: number) => JSON.stringify(server!.requests[index]!.body.messages)
const bigOutput = { name: "bash", arguments: { command: "seq 100000 103000" } }

describe("compaction in a running session", () => {
  test("an overflowing step compacts: summary, pinned task, tail verbatim, no pruned output; the turn finishes on its own", async () => {
    const steps: Array<ScriptedStep> = [
      { text: "ok one" }, // turn 1
      { toolCalls: [{ name: "skill", arguments: { name: "testing" } }] }, // turn 2
      { toolCalls: [bigOutput] },
      { text: "ok two" },
      { text: "ok three" }, // turn 3
      { toolCalls: [{ name: "bash", arguments: { command: "echo small" } }], usage: { prompt_tokens: 15_000, completion_tokens: 10 } }, // turn 4: overflow
      { text: "## Objective\nSUMMARY-MARKER: finish the task" }, // the summary call
      { text: "FINAL-ANSWER" }
    ]
    const { results, events, messages } = await session(steps, ["TASK-MARKER: build it", "second", "third", "fourth"], { tail_turns: 3 })
    expect(results[3]!.text).toBe("FINAL-ANSWER")
    expect(server!.remaining()).toBe(0)

    // The summary call: no tools, the head's transcript.
    const summaryRequest = server!.requests[6]!.body
    expect(summaryRequest.tools ?? []).toEqual([])
    expect(JSON.stringify(summaryRequest.messages)).toContain("TASK-MARKER")

    // The request after compaction.
    const after = requestText(7)
    expect(after).toContain("TASK-MARKER: build it") // pinned first user message
    expect(after).toContain("SUMMARY-MARKER") // the summary
    expect(after).toContain("third") // the tail, verbatim
    expect(after).toContain("SKILL-OUTPUT-MARKER") // a protected output older than the prune boundary
    expect(after).not.toContain("102999") // the pruned bash output
    expect(after).not.toContain("ok one") // the summarised head
    expect(requestText(5)).toContain("102999") // it was there before

    // The store keeps the whole output, stamped compacted.
    const tools = messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p] : []))
    const big = tools.find((p) => p.state.input.command === "seq 100000 103000")!
    expect(big.state.status === "completed" && big.state.time.compacted).toBeGreaterThan(0)
    expect(big.state.status === "completed" && big.state.output).toContain("102999")
    const skillPart = tools.find((p) => p.tool === "skill")!
    expect(skillPart.state.status === "completed" && skillPart.state.time.compacted).toBeUndefined()

    // Events, and the continuation message the loop wrote.
    const started = events.find((e) => e.type === "compaction.started")
    const completed = events.find((e) => e.type === "compaction.completed")
    expect(started).toMatchObject({ reason: "overflow", tokens: 15_010 })
    expect(completed).toMatchObject({ summary: "## Objective\nSUMMARY-MARKER: finish the task", pruned: [big.id] })
    const continued = messages.filter((m) => m.info.role === "user" && m.info.metadata?.compaction_continue === true)
    expect(continued).toHaveLength(1)
    // The overflowing step had run a tool: the loop continues the work rather than replaying the request.
    expect(continued[0]!.info.role === "user" && continued[0]!.info.metadata?.continuation).toBe("continue")
  })

  test('a 400 "maximum context length" from the provider compacts, then the turn succeeds', async () => {
    const steps: Array<ScriptedStep> = [
      { text: "ok one" },
      { toolCalls: [bigOutput] },
      { text: "ok two" },
      {
        error: {
          status: 400,
          message: "This model's maximum context length is 16385 tokens. However, your messages resulted in 17000 tokens.",
          code: "context_length_exceeded"
        }
      },
      { text: "## Objective\nSUMMARY-MARKER" },
      { text: "FINAL-ANSWER" }
    ]
    const { results, events } = await session(steps, ["TASK-MARKER", "second", "third"], { tail_turns: 1 })
    expect(results[2]!.text).toBe("FINAL-ANSWER")
    expect(events.find((e) => e.type === "compaction.started")).toMatchObject({ reason: "provider" })
    expect(server!.requests).toHaveLength(6)
    expect(requestText(5)).toContain("SUMMARY-MARKER")
    expect(requestText(5)).not.toContain("102999")
  })

  test('"auto": false never compacts, and the overflow error ends the turn', async () => {
    const steps: Array<ScriptedStep> = [{ error: { status: 400, message: "maximum context length exceeded", code: "context_length_exceeded" } }]
    await expect(session(steps, ["hello"], { auto: false })).rejects.toThrow(/maximum context length/)
    expect(server!.requests).toHaveLength(1)
  })

  test("an overflowing step with nothing to summarise goes on without compacting", async () => {
    const steps: Array<ScriptedStep> = [
      { toolCalls: [{ name: "bash", arguments: { command: "echo small" } }], usage: { prompt_tokens: 15_500, completion_tokens: 10 } },
      { text: "DONE-ANYWAY" }
    ]
    const { results, events } = await session(steps, ["one short task"])
    expect(results[0]!.text).toBe("DONE-ANYWAY")
    expect(events.some((e) => e.type === "compaction.started" || e.type === "compaction.completed")).toBe(false)
    expect(server!.remaining()).toBe(0)
  })
})
