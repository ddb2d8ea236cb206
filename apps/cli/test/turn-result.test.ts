// `reins run --format json` ends with one `turn.result` line however the run ends: the answer, the
// tokens and cost, the session, and the status and exit code the process then exits with.
import { beforeAll, describe, expect, test } from "bun:test"
import { spawn } from "node:child_process"
import { BIN, editConfig, ensureBuilt, events, gate, projects, reins, waitFor, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** $1 per million tokens in, $2 out: a cost the test can check. */
const priced = (p: Project) =>
  editConfig(p as Project & { configFile: string }, (c) => ({
    ...c,
    provider: { local: { ...c.provider.local, models: { scripted: { context: 32000, output: 4000, price: { input: 1, output: 2 } } } } }
  }))

const resultOf = (stdout: string) => {
  const all = events(stdout)
  expect(all.filter((e) => e.type === "turn.result")).toHaveLength(1)
  expect(all.at(-1)?.type).toBe("turn.result")
  return all.at(-1)!
}

describe("the turn.result line of reins run --format json", () => {
  test("a turn that ends well: its text, the usage and cost of every step, the session, status ok and exit 0", async () => {
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }], usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 } },
      { text: "All done.", usage: { prompt_tokens: 2000, completion_tokens: 50 } }
    ])
    priced(p)
    const r = await reins(["run", "--format", "json", "--yolo", "say hi"], p)
    expect(r.code).toBe(0)
    const result = resultOf(r.stdout)
    const created = events(r.stdout).find((e) => e.type === "session.created")!
    expect(result).toEqual({
      type: "turn.result",
      status: "ok",
      exitCode: 0,
      sessionID: created.session.id,
      text: "All done.",
      steps: 2,
      usage: { input: 2600, output: 150, reasoning: 0, cacheRead: 400, cacheWrite: 0 },
      cost: result.cost
    })
    // (600 + 2000) × $1 + 400 cached × $1 + 150 × $2, per million
    expect(result.cost).toBeCloseTo((2600 + 400 + 300) / 1e6, 10)
  })

  test("a provider error: status error with the provider's reason and message, exit 1 like the process", async () => {
    const p = await setup([{ error: { status: 400, message: "model does not exist" } }])
    const r = await reins(["run", "--format", "json", "hello"], p)
    expect(r.code).toBe(1)
    const result = resultOf(r.stdout)
    expect(result).toMatchObject({ type: "turn.result", status: "error", exitCode: 1, text: "", steps: 0, error: { reason: "invalid" } })
    expect(result.error.message).toContain("model does not exist")
    expect(result.sessionID).toStartWith("ses")
    expect(r.stderr).toContain("model does not exist")
  })

  test("Ctrl+C (SIGINT) during a command: status interrupted, exit 130, the session to continue", async () => {
    const held = gate()
    const p = await setup([{ text: "Starting.", toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "never asked" }])
    const child = spawn(BIN, ["run", "--format", "json", "--yolo", "wait"], { cwd: p.cwd, env: p.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.on("data", (b) => (stdout += b))
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    try {
      await waitFor(
        () => events(stdout).some((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "running"),
        "the command to run"
      )
      child.kill("SIGINT")
      expect(await exited).toBe(130)
      const result = resultOf(stdout)
      expect(result).toMatchObject({ type: "turn.result", status: "interrupted", exitCode: 130, text: "Starting." })
      expect(result.sessionID).toStartWith("ses")
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  })
})
