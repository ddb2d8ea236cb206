// A long single turn on a small (4k) context through the composed runtime: the scripted model
// refuses any request over its window, reports usage that grows with the request, writes summaries
// that carry its progress, and (like small local models) takes its request repeated as the last
// message as a new task and starts over. The turn must finish, and no tool call may run twice.
import { describe, expect, test } from "bun:test"
import { Effect, Schema } from "effect"
import type { Event } from "@reins/domain"
import { Bus } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import type { ScriptedStep } from "@reins/testkit"
import { Tool } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { scriptedRuntimes, tmp } from "./support.ts"

const runtime = scriptedRuntimes()

const CONTEXT = 4_096
const TASK = "TASK-MARKER: run the steps 1 to N with the step tool, one call per step, then say ALL-DONE"
const MODEL = { providerID: "local", modelID: "small" }

/** A tool that records every execution (step number and call id) in a file, and returns a marker and some log lines. */
const stepTool = (log: string, padding: number) =>
  Tool.define("step", {
    description: "Runs one numbered step of the task",
    parameters: Schema.Struct({ n: Schema.Number }),
    execute: (args, ctx) =>
      Effect.sync(() => {
        fs.appendFileSync(log, `${args.n} ${ctx.callID}\n`)
        const lines = Array.from({ length: padding }, (_, i) => `log line ${i + 1} of step ${args.n}`)
        return { title: `step ${args.n}`, output: [`STEP-DONE-${args.n}`, ...lines].join("\n") }
      })
  })

const isSummaryRequest = (body: any) => typeof body.messages?.[0]?.content === "string" && body.messages[0].content.startsWith("You are summarising")

const highest = (text: string, marker: string) => Math.max(0, ...[...text.matchAll(new RegExp(`${marker}-(\\d+)`, "g"))].map((m) => Number(m[1])))

/** The last message's text, whatever its shape. */
const lastText = (body: any) => {
  const last = body.messages.at(-1)
  if (last?.role !== "user") return ""
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content)
}

interface Scripted {
  readonly steps: number
  /** Requests over the window get the provider's context-length error. */
  readonly context: number
  /** Usage reported as this instead of the server's own count (a quarter of the request's characters). */
  readonly usage?: { prompt_tokens: number; completion_tokens: number }
}

/**
 * The model: progress is the highest step it can see done (tool results or the summary); the
 * request repeated as the last message starts it over. Summaries carry the progress seen.
 */
const respond =
  (options: Scripted) =>
  (body: any): ScriptedStep => {
    const size = Math.ceil(JSON.stringify(body).length / 4)
    if (size > options.context) {
      return {
        error: {
          status: 400,
          message: `This model's maximum context length is ${options.context} tokens. However, your messages resulted in ${size} tokens.`,
          code: "context_length_exceeded"
        }
      }
    }
    const text = JSON.stringify(body.messages)
    const seen = Math.max(highest(text, "STEP-DONE"), highest(text, "PROGRESS"))
    if (isSummaryRequest(body)) {
      return {
        text: `## Objective\nRun the numbered steps.\n## Work State\n### Completed\nSteps 1 to ${seen} (PROGRESS-${seen}).\n## Next Move\nStep ${seen + 1}.`
      }
    }
    const restart = lastText(body).includes("TASK-MARKER")
    const done = restart ? 0 : seen
    if (done >= options.steps) return { text: "ALL-DONE", ...(options.usage ? { usage: options.usage } : {}) }
    return { toolCalls: [{ name: "step", arguments: { n: done + 1 } }], ...(options.usage ? { usage: options.usage } : {}) }
  }

const longTurn = async (options: {
  steps?: number
  padding?: number
  compaction?: Record<string, unknown>
  models?: Record<string, { context: number; output: number }>
  usage?: Scripted["usage"]
}) => {
  const steps = options.steps ?? 30
  const dir = tmp()
  const log = path.join(dir, "executions.log")
  const made = await runtime([], {
    models: options.models ?? { small: { context: CONTEXT, output: 8_192 } },
    config: { retry: { attempts: 1, initial_delay_ms: 1, max_delay_ms: 1 }, compaction: options.compaction ?? {} },
    tools: [stepTool(log, options.padding ?? 25)],
    server: { respond: respond({ steps, context: CONTEXT, ...(options.usage ? { usage: options.usage } : {}) }) }
  })
  const events: Array<Event> = []
  const outcome = await Effect.runPromise(
    Effect.gen(function* () {
      yield* (yield* Bus).listen((e) => Effect.sync(() => void events.push(e)))
      const sessions = yield* SessionService
      const created = yield* sessions.create({ directory: made.cwd })
      const result = yield* Effect.result(sessions.prompt({ sessionID: created.id, text: TASK.replace("N", String(steps)), model: MODEL }))
      const messages = yield* (yield* SessionStore).messages(created.id)
      return { result, messages }
    }).pipe(Effect.provide(made.layer), Effect.scoped)
  )
  const executions = fs.existsSync(log)
    ? fs
        .readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l !== "")
    : []
  return { ...outcome, events, executions, requests: made.server.requests }
}

const compactions = (events: ReadonlyArray<Event>) => events.filter((e) => e.type === "compaction.completed").length

const expectEachStepOnce = (executions: ReadonlyArray<string>, steps: number) => {
  const numbers = executions.map((l) => Number(l.split(" ")[0]))
  const calls = executions.map((l) => l.split(" ")[1])
  expect(numbers).toEqual(Array.from({ length: steps }, (_, i) => i + 1))
  expect(new Set(calls).size).toBe(calls.length)
}

describe("a long single turn on a 4k context", () => {
  test("30 steps finish: it compacts, every request fits, and every step runs exactly once", async () => {
    const r = await longTurn({})
    if (r.result._tag === "Failure") throw new Error(`the turn failed: ${r.result.failure.message}`)
    expect(r.result.success.text).toBe("ALL-DONE")
    // No request asks for more output than the reserve (a third of 4,096), although the model's
    // `output` is 8,192: prompt + max_tokens never exceeds the window (vLLM-style servers refuse that).
    expect(new Set(r.requests.map((q) => q.body.max_tokens))).toEqual(new Set([1_365]))
    expectEachStepOnce(r.executions, 30)
    expect(compactions(r.events)).toBeGreaterThan(1)
    // The pinned request stays verbatim in every request after a compaction.
    expect(r.requests.every((q) => JSON.stringify(q.body).includes("TASK-MARKER"))).toBe(true)
    // The provider's context error never had to be met: the overflow check compacted in time.
    expect(r.events.some((e) => e.type === "compaction.started" && e.reason === "provider")).toBe(false)
  }, 60_000)

  test('"tail_turns": 0 finishes too, each step once', async () => {
    const r = await longTurn({ compaction: { tail_turns: 0 } })
    if (r.result._tag === "Failure") throw new Error(`the turn failed: ${r.result.failure.message}`)
    expect(r.result.success.text).toBe("ALL-DONE")
    expectEachStepOnce(r.executions, 30)
    expect(compactions(r.events)).toBeGreaterThan(1)
  }, 60_000)

  test("compactions that make no room end the turn with a clear error, without looping or re-running a step", async () => {
    // Every step reports more than the 2,731 usable tokens, however small the request was.
    const r = await longTurn({ usage: { prompt_tokens: 3_500, completion_tokens: 10 }, padding: 100 })
    if (r.result._tag !== "Failure") throw new Error("expected the turn to stop")
    const error = r.result.failure
    expect(error).toMatchObject({ _tag: "CompactionError", reason: "no-progress" })
    expect(error.message).toContain("The context of local/small stays full however often it is compacted")
    expect(error.message).toContain("4,096 tokens, 2,731 of them for the conversation")
    expect(error.message).toContain("Use a model with a larger context")
    // A handful of steps and compactions, not hundreds.
    expect(compactions(r.events)).toBeGreaterThanOrEqual(1)
    expect(compactions(r.events)).toBeLessThanOrEqual(3)
    expect(r.requests.length).toBeLessThan(12)
    expect(r.executions.length).toBeLessThan(8)
    expectEachStepOnce(r.executions, r.executions.length)
    expect(r.events.some((e) => e.type === "session.error" && e.error.reason === "CompactionError")).toBe(true)
  }, 60_000)

  test("usage with NaN (null on the wire) counts as the sum of its parts; the provider's context error still compacts and the turn finishes", async () => {
    const r = await longTurn({ usage: { prompt_tokens: Number.NaN, completion_tokens: Number.NaN } })
    if (r.result._tag === "Failure") throw new Error(`the turn failed: ${r.result.failure.message}`)
    expect(r.result.success.text).toBe("ALL-DONE")
    expectEachStepOnce(r.executions, 30)
    // No usage to go by: the provider's refusals start the compactions.
    expect(r.events.some((e) => e.type === "compaction.started" && e.reason === "provider")).toBe(true)
  }, 60_000)

  test('a "compaction.reserved" as large as the model\'s input limit is a config error before anything is stored', async () => {
    const r = await longTurn({ compaction: { reserved: 4_096 } })
    if (r.result._tag !== "Failure") throw new Error("expected a config error")
    expect(r.result.failure).toMatchObject({ _tag: "CompactionError", reason: "config" })
    expect(r.result.failure.message).toBe(
      '"compaction.reserved" is 4096 tokens but local/small takes at most 4096 input tokens, so nothing would be left for the conversation: ' +
        'set "compaction.reserved" in reins.json below 4096 (or remove it: the default keeps min(output, a third of the window) free).'
    )
    expect(r.messages).toHaveLength(0)
    expect(r.requests).toHaveLength(0)
  }, 60_000)
})
