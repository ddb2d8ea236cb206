// Budgets as a user meets them: the scripted Anthropic server bills each request, the catalogue's
// prices for claude-sonnet-4-5 ($3 in, $15 out, $0.30 cache read, $3.75 cache write per million) make
// the cost, and a cap stops the turn before the model call that would go past it.
import { afterEach, beforeAll, describe, expect, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startAnthropicServer, type AnthropicServer } from "@reins/testkit"
import { ensureBuilt, events, reins, writeUserConfig } from "./support.ts"

beforeAll(ensureBuilt)
const servers: Array<AnthropicServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop()
})

const setup = async (steps: Parameters<typeof startAnthropicServer>[0], extra: Record<string, unknown> = {}) => {
  const server = await startAnthropicServer(steps)
  servers.push(server)
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-budget-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-budget-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  writeUserConfig(
    dataDir,
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key" } }, ...extra })
  )
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }
  return { server, p: { cwd, dataDir, env } }
}

/** What the server billed, at the catalogue's prices for claude-sonnet-4-5. */
const billed = (server: AnthropicServer, from = 0) =>
  server.requests.slice(from).reduce((sum, r) => {
    const u = r.usage as { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number }
    return sum + (u.input_tokens * 3 + u.cache_read_input_tokens * 0.3 + u.cache_creation_input_tokens * 3.75) / 1e6
  }, 0)

/** 20,000 output tokens: $0.30 a step, so the caps below fall between steps whatever the prompt's size. */
const OUT = 20_000
const outCost = (steps: number) => (steps * OUT * 15) / 1e6
const bashStep = (n: number) => ({
  toolCalls: [{ name: "bash", arguments: { command: `echo step${n}`, description: "echo" } }],
  usage: { prompt_tokens: 0, completion_tokens: OUT }
})
const dollarsIn = (text: string) => [...text.matchAll(/\$(\d+\.\d+)/g)].map((m) => Number(m[1]))

describe("budgets", () => {
  test("--max-cost stops the turn before the call that would pass it, says what was spent, and the session goes on with more", async () => {
    const { server, p } = await setup([bashStep(1), bashStep(2), bashStep(3), { text: "Finished at last." }])
    const run = await reins(["run", "--yolo", "--max-cost", "0.5", "work"], p)
    expect(run.code).toBe(1)
    // two steps ($0.30 of output each, plus input) reach $0.50: the third is never asked for
    expect(server.requests).toHaveLength(2)
    expect(run.stderr).toContain("Stopped: the session spent $")
    expect(run.stderr).toContain("of its $0.50 budget (budget.session or --max-cost). Raise it to go on.")
    const [spent] = dollarsIn(run.stderr.slice(run.stderr.indexOf("spent")))
    expect(spent).toBeCloseTo(outCost(2) + billed(server), 1)

    // the same cap again: already spent, so no call at all, and the same clear line
    const again = await reins(["run", "--yolo", "--max-cost", "0.5", "-c", "go on"], p)
    expect(again.code).toBe(1)
    expect(server.requests).toHaveLength(2)
    expect(again.stderr).toContain("Stopped: the session spent $")

    // raised: the session is whole and continues where it stopped
    const more = await reins(["run", "--yolo", "--max-cost", "5", "-c", "--format", "json", "go on"], p)
    expect(more.code).toBe(0)
    expect(server.requests).toHaveLength(4)
    const result = events(more.stdout).at(-1)
    expect(result).toMatchObject({ type: "turn.result", status: "ok", text: "Finished at last." })
    // the continued requests carry the stopped turn's tool results
    expect(JSON.stringify(server.requests[2]!.body)).toContain("step2")
  })

  test("budget.turn in reins.json: each turn gets its own; --format json reports the reason", async () => {
    const { server, p } = await setup([bashStep(1), bashStep(2), { text: "second turn answered" }], { budget: { turn: 0.25 } })
    const run = await reins(["run", "--yolo", "--format", "json", "work"], p)
    expect(run.code).toBe(1)
    expect(server.requests).toHaveLength(1)
    const result = events(run.stdout).at(-1)!
    expect(result).toMatchObject({ type: "turn.result", status: "error", exitCode: 1, error: { reason: "budget" } })
    expect(result.error.message).toMatch(/the turn spent \$0\.3\d of its/)
    expect(result.error.message).toContain("of its $0.25 budget (budget.turn)")
    // a new turn has a new turn budget
    const next = await reins(["run", "--yolo", "-c", "again"], p)
    expect(next.code).toBe(1)
    expect(server.requests).toHaveLength(2)
    expect(next.stderr).toContain("the turn spent")
  })

  test("a sub-agent's spending counts into its parent's turn as it happens", async () => {
    const { server, p } = await setup(
      [
        {
          toolCalls: [{ name: "task", arguments: { description: "dig", prompt: "CHILD dig in", subagent_type: "general" } }],
          usage: { prompt_tokens: 0, completion_tokens: OUT }
        },
        bashStep(1),
        bashStep(2),
        { text: "never reached" }
      ],
      { budget: { turn: 0.5 } }
    )
    const run = await reins(["run", "--yolo", "work"], p)
    expect(run.code).toBe(1)
    // the parent's step ($0.30) and the child's first ($0.30) pass the turn's $0.50: the child asks no more, nor the parent
    expect(server.requests).toHaveLength(2)
    expect(JSON.stringify(server.requests[1]!.body)).toContain("CHILD dig in")
    expect(run.stderr).toMatch(/the turn spent \$0\.6\d of its/)
    expect(run.stderr).toContain("of its $0.50 budget (budget.turn)")
  })

  test("budget.subagent stops the sub-agent; its parent is told and goes on", async () => {
    const { server, p } = await setup(
      [
        {
          toolCalls: [{ name: "task", arguments: { description: "dig", prompt: "CHILD dig in", subagent_type: "general" } }],
          usage: { prompt_tokens: 0, completion_tokens: 10 }
        },
        bashStep(1),
        { text: "child never reached" },
        { text: "The parent answers itself." }
      ],
      { budget: { subagent: 0.2 } }
    )
    const run = await reins(["run", "--yolo", "work"], p)
    expect(run.stderr).not.toContain("rror")
    expect(run.code).toBe(0)
    expect(run.stdout.trim()).toBe("child never reached")
    expect(server.requests).toHaveLength(3)
    // the parent's second request carries the failed task call with the sub-agent's stop line
    expect(JSON.stringify(server.requests[2]!.body)).toMatch(/the sub-agent spent \$0\.3\d of its/)
  })

  test.each([
    ["zero", "0"],
    ["negative", "-1"]
  ])("a %s --max-cost is a usage error before any call", async (_, value) => {
    const { server, p } = await setup([{ text: "never" }])
    const run = await reins(["run", "--max-cost", value, "hi"], p)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("--max-cost takes a positive amount of dollars")
    expect(server.requests).toHaveLength(0)
  })
})

test("the interactive footer shows what is left of --max-cost, and a turn that reaches it says so", async () => {
  const { server, p } = await setup([bashStep(1), { text: "Done.", usage: { prompt_tokens: 0, completion_tokens: OUT } }, bashStep(2), { text: "never" }])
  const { openTui, send, settled } = await import("./tui-support.ts")
  await using pty = await openTui({ ...p, server } as never, ["--yolo", "--max-cost", "0.7"], { cols: 150, rows: 30 })
  await pty.waitFor("$0.00 ($0.70 left)")
  await send(pty, "work")
  await settled(pty, "Done.")
  // two steps of $0.30 and their input: about $0.09 left
  await pty.waitUntil((s) => /\$0\.6\d \(\$0\.0\d left\)/.test(s), "the footer with about $0.09 left")
  await send(pty, "more")
  await pty.waitFor("Stopped: the session spent $0.")
  await pty.waitFor("(budget spent)")
  expect(server.requests).toHaveLength(3)
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
}, 60_000)
