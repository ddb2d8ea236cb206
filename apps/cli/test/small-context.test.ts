// Small local models through the real CLI: an 8k model whose "output" is as large as its context
// runs a 30-step single turn with every built-in tool offered (and with "tail_turns": 0), each bash
// call running once; a "compaction.reserved" the model cannot hold is a config error (exit 2).
import { beforeAll, describe, expect, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { ensureBuilt, events, reins, type Project, writeUserConfig } from "./support.ts"

beforeAll(() => ensureBuilt())

const CONTEXT = 8_192
const STEPS = 30

const highest = (text: string, marker: string) => Math.max(0, ...[...text.matchAll(new RegExp(`${marker}-(\\d+)`, "g"))].map((m) => Number(m[1])))

/**
 * A model with an 8k window: refuses larger requests as an OpenAI server does; its progress is the
 * highest step it sees done (bash results or the summary); its request repeated as the last message
 * makes it start over, as small models do. Each step appends its number to steps.log with bash.
 */
const model =
  (context: number) =>
  (body: any): ScriptedStep => {
    const size = Math.ceil(JSON.stringify(body).length / 4)
    if (size > context) {
      return {
        error: {
          status: 400,
          message: `This model's maximum context length is ${context} tokens. However, your messages resulted in ${size} tokens.`,
          code: "context_length_exceeded"
        }
      }
    }
    const text = JSON.stringify(body.messages)
    const seen = Math.max(highest(text, "STEP-DONE"), highest(text, "PROGRESS"))
    if (typeof body.messages[0]?.content === "string" && body.messages[0].content.startsWith("You are summarising")) {
      return {
        text: `## Objective\nRun the numbered steps.\n## Work State\n### Completed\nSteps 1 to ${seen} (PROGRESS-${seen}).\n## Next Move\nStep ${seen + 1}.`
      }
    }
    const last = body.messages.at(-1)
    const restart = last?.role === "user" && JSON.stringify(last.content).includes("TASK-MARKER")
    const done = restart ? 0 : seen
    if (done >= STEPS) return { text: "ALL-DONE" }
    const n = done + 1
    return { toolCalls: [{ name: "bash", arguments: { command: `echo ${n} >> steps.log && echo STEP-DONE-${n} && seq -f 'log line %g of the step' 1 40` } }] }
  }

const setup = async (compaction: Record<string, unknown>, context = CONTEXT): Promise<Project & { server: ScriptedServer }> => {
  const server = await startScriptedServer([], { respond: model(context) })
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-small-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-small-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  writeUserConfig(
    dataDir,
    JSON.stringify({
      model: "local/small",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { small: { context, output: 8_192 } } } },
      retry: { attempts: 1 },
      compaction
    })
  )
  return { cwd, dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }, server }
}

const TASK = `TASK-MARKER: run the steps 1 to ${STEPS} with bash, one call per step, then say ALL-DONE`

describe("a small local model through the CLI", () => {
  for (const compaction of [{}, { tail_turns: 0 }]) {
    test(`a 30-step single turn finishes, each bash call runs once (compaction ${JSON.stringify(compaction)})`, async () => {
      const p = await setup(compaction)
      try {
        const r = await reins(["run", "--yolo", "--format", "json", TASK], p)
        expect(r.stderr).toBe("")
        expect(r.code).toBe(0)
        const evs = events(r.stdout)
        const steps = fs.readFileSync(path.join(p.cwd, "steps.log"), "utf8").trim().split("\n").map(Number)
        expect(steps).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1))
        expect(evs.filter((e) => e.type === "compaction.completed").length).toBeGreaterThan(0)
        // Every continuation after a compaction continued the work; none replayed the request.
        const continued = evs.filter((e) => e.type === "message.updated" && e.message.metadata?.compaction_continue === true)
        expect(continued.every((e) => e.message.metadata.continuation === "continue")).toBe(true)
        expect(r.stdout).toContain("ALL-DONE")
      } finally {
        await p.server.stop()
      }
    }, 120_000)
  }

  test('"compaction.reserved" as large as the model\'s input limit: one line, exit 2, no model call', async () => {
    const p = await setup({ reserved: CONTEXT })
    try {
      const r = await reins(["run", "--yolo", TASK], p)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(
        `reins: "compaction.reserved" is ${CONTEXT} tokens but local/small takes at most ${CONTEXT} input tokens, so nothing would be left for the conversation: ` +
          `set "compaction.reserved" in reins.json below ${CONTEXT} (or remove it: the default keeps min(output, a third of the window) free).\n`
      )
      expect(p.server.requests).toHaveLength(0)
      const compact = await reins(["compact"], p)
      expect(compact.code).toBe(2)
      expect(compact.stderr).toContain('"compaction.reserved" is 8192 tokens')
    } finally {
      await p.server.stop()
    }
  }, 60_000)

  test("a 4k model with every built-in tool cannot make room: a clear error after a few compactions, exit 1, stdout clean, each call once", async () => {
    // The system prompt and the tool definitions alone take ~2,400 of the 2,731 usable tokens.
    // a window the system prompt and every tool's definition fit in with the task, and little more (the plan tools
    // and webfetch are not offered below a 16k window): each step's output soon leaves no room
    const p = await setup({}, 4_096)
    try {
      const r = await reins(["run", "--yolo", TASK], p)
      expect(r.code).toBe(1)
      const error = r.stderr.split("\n").find((l) => l.startsWith("reins: "))
      expect(error).toStartWith("reins: The context of local/small stays full however often it is compacted")
      expect(error).toContain("the system prompt and tool definitions alone ~")
      expect(error).toContain("Use a model with a larger context")
      // the plan tools are left out below a 16k window; the tools the work needs are there
      const offered = (p.server.requests[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)
      expect(offered).toContain("bash")
      expect(offered).not.toContain("todowrite")
      expect(offered).not.toContain("todoread")
      expect(offered).not.toContain("webfetch")
      // Only bash's progress lines on stderr besides the compaction notes; nothing but the answer on stdout.
      expect(r.stdout).not.toContain("WARN")
      expect(r.stdout).not.toContain("Nothing to summarise")
      const steps = fs.readFileSync(path.join(p.cwd, "steps.log"), "utf8").trim().split("\n").map(Number)
      expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1))
      expect(steps.length).toBeLessThan(10)
      expect(p.server.requests.length).toBeLessThan(16)
    } finally {
      await p.server.stop()
    }
  }, 60_000)
})
