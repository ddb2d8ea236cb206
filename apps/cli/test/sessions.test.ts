// `reins sessions list|show|delete` (issue 15, item 3): the list's model, messages, tokens and cost as
// stored; delete with its refusals; show's tool calls as one readable line each.
import { beforeAll, describe, expect, test } from "bun:test"
import { Database } from "bun:sqlite"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, ensureBuilt, leaseLapsed, projects, reins, reinsOk, waitFor, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

/** The project's model renamed to one the catalogue prices (claude-sonnet-4-5: $3 / $15 / $0.30 per million). */
const priced = (p: Project) => {
  const file = p.configFile!
  const config = JSON.parse(fs.readFileSync(file, "utf8"))
  config.model = "local/claude-sonnet-4-5"
  config.provider.local.models = { "claude-sonnet-4-5": { context: 32000, output: 4000 } }
  fs.writeFileSync(file, JSON.stringify(config))
}

/** The processes of a group still running (zombies, dead already, are not counted). */
const groupMembers = (pgid: number) =>
  Bun.spawnSync(["ps", "-eo", "pgid=,stat=,args="])
    .stdout.toString()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([g, stat]) => g === String(pgid) && !stat!.startsWith("Z"))

/** The command's JSON output; a failed command fails the test with what it said (not a parse error of nothing). */
const json = async (args: ReadonlyArray<string>, p: Project) => JSON.parse((await reinsOk(args, p)).stdout)
const listJson = async (p: Project) => (await json(["sessions", "list", "--format", "json"], p)) as Array<any>
const exported = (p: Project, id: string) => json(["sessions", "export", id], p)

describe("sessions list", () => {
  test("model, message count, tokens and cost of each session, as stored; text and json", async () => {
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }], usage: { prompt_tokens: 10_000, completion_tokens: 200, cached_tokens: 8_000 } },
      { text: "first answer", usage: { prompt_tokens: 12_000, completion_tokens: 100, cached_tokens: 10_000 } },
      { text: "second answer", usage: { prompt_tokens: 1_000, completion_tokens: 50 } }
    ])
    priced(p)
    expect((await reins(["run", "--yolo", "one"], p)).code).toBe(0)
    expect((await reins(["run", "two"], p)).code).toBe(0)

    const list = await listJson(p)
    expect(list).toHaveLength(2)
    const [second, first] = list
    // the first session: a user message and two steps; 22,000 prompt tokens of which 18,000 read from the cache
    expect(first).toMatchObject({
      model: "local/claude-sonnet-4-5",
      messages: 3,
      tokens: { input: 4_000, output: 300, reasoning: 0, cacheRead: 18_000, cacheWrite: 0 }
    })
    // 4,000 × $3 + 300 × $15 + 18,000 × $0.30, per million
    expect(first.cost).toBeCloseTo((4_000 * 3 + 300 * 15 + 18_000 * 0.3) / 1e6, 10)
    expect(second).toMatchObject({ model: "local/claude-sonnet-4-5", messages: 2, tokens: { input: 1_000, output: 50, cacheRead: 0 } })
    // the sums are those of the stored messages
    const stored = (await exported(p, first.id)).messages.filter((m: any) => m.info.role === "assistant")
    expect(stored.reduce((n: number, m: any) => n + m.info.usage.cacheRead, 0)).toBe(first.tokens.cacheRead)
    expect(stored.reduce((n: number, m: any) => n + m.info.cost, 0)).toBeCloseTo(first.cost, 12)

    const text = await reins(["sessions", "list"], p)
    expect(text.code).toBe(0)
    const lines = text.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      new RegExp(`^${second.id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  local/claude-sonnet-4-5  2 messages  1k in / 50 out +\\$0\\.0037  two  \\(${p.cwd}\\)$`)
    )
    expect(lines[1]).toMatch(new RegExp(`^${first.id}  .*  local/claude-sonnet-4-5  3 messages  22k in / 300 out +\\$0\\.02  one  \\(${p.cwd}\\)$`))
    // no colour on a pipe
    expect(text.stdout).not.toContain("\x1b")
  })
})

describe("sessions delete", () => {
  test("deletes the session with its messages; an unknown id is a clear error with exit 2", async () => {
    const p = await setup([{ text: "kept" }, { text: "gone" }])
    expect((await reins(["run", "keep me"], p)).code).toBe(0)
    expect((await reins(["run", "delete me"], p)).code).toBe(0)
    const [doomed, kept] = await listJson(p)

    const r = await reins(["sessions", "delete", doomed.id], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`Deleted session ${doomed.id} (delete me; 2 messages).\n`)
    expect((await listJson(p)).map((s) => s.id)).toEqual([kept.id])
    const shown = await reins(["sessions", "show", doomed.id], p)
    expect(shown.code).toBe(2)
    // the event log keeps only the deletion: a follower on any process (reins serve over the same data) learns it
    const db = new Database(path.join(p.dataDir, "reins.db"), { readonly: true })
    const logged = db.query<{ type: string }, [string]>("SELECT type FROM session_event WHERE session_id = ? ORDER BY id").all(doomed.id)
    db.close()
    expect(logged.map((row) => row.type)).toEqual(["session.deleted"])

    const unknown = await reins(["sessions", "delete", "ses_nope"], p)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe("reins: Session ses_nope not found; `reins sessions list` shows the ids.\n")
    expect((await listJson(p)).map((s) => s.id)).toEqual([kept.id])
  })

  test("a session a live reins is running is deleted after that run's turn is stopped (as serve's DELETE does); if its process died, it goes too", async () => {
    // a command that outlasts the test: only reins stops it (Ctrl+C, or the delete of a dead run's session)
    const sleepy = { toolCalls: [{ name: "bash", arguments: { command: "sleep 3600" } }] }
    const p = await setup([sleepy, sleepy, { text: "never" }])
    // until the run's command runs; a run that ended first fails the wait at once, with what it said
    const waitRunning = (run: { readonly exited: Promise<number | null>; readonly stderr: () => string }) => {
      let ended: number | null | undefined
      void run.exited.then((code) => {
        ended = code
      })
      return waitFor(async () => {
        if (ended !== undefined) throw new Error(`the run ended (${ended}) before its command ran: ${run.stderr().slice(-2000)}`)
        const id = (await listJson(p))[0]?.id as string | undefined
        const tool = id === undefined ? undefined : (await exported(p, id)).messages.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
        return tool?.state?.status === "running" ? id : undefined
      }, "the run to start its command")
    }
    // unsandboxed: a sandboxed command dies with its reins (bubblewrap's --die-with-parent), and this case needs one left running
    const start = () => {
      // a lease of 1 s (renewed every 100 ms), so that a killed run's lapses soon
      const env = { ...p.env, REINS_TEST_RUN_TIMING: "100,1000" }
      const child = spawn(BIN, ["run", "--yolo", "--sandbox", "off", "nap"], { cwd: p.cwd, env, stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      child.stdout.resume()
      return { child, exited: new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code))), stderr: () => stderr }
    }

    // a live run: its turn is asked to stop (its command with it), then the session is deleted
    const live = start()
    const id = await waitRunning(live)
    const deleted = await reins(["sessions", "delete", id], p)
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toBe(`Deleted session ${id} (nap; 2 messages; its running turn was stopped first).\n`)
    expect(await live.exited).toBe(130)
    expect(await listJson(p)).toEqual([])

    // a run killed outright leaves its lease behind, and its command running; the session is free once the lease lapses
    const killed = start()
    const second = await waitRunning(killed)
    const pgid = (await exported(p, second)).messages.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool").state.metadata.process.pgid as number
    try {
      killed.child.kill("SIGKILL")
      await killed.exited
      expect(groupMembers(pgid).length).toBeGreaterThan(0)
      await waitFor(() => leaseLapsed(p, second), "the killed run's lease to lapse")
      const gone = await reins(["sessions", "delete", second], p)
      expect(gone.code).toBe(0)
      expect(gone.stdout).toBe(`Deleted session ${second} (nap; 2 messages; stopped 1 command its last run left running).\n`)
      expect(await listJson(p)).toEqual([])
      await waitFor(() => groupMembers(pgid).length === 0, "the left-over command to be gone")
      expect(groupMembers(pgid)).toEqual([])
    } finally {
      if (groupMembers(pgid).length > 0) process.kill(-pgid, "SIGKILL")
    }
  })
})

describe("sessions show", () => {
  test("tool calls as one line each with their outcome, not raw JSON; --format json keeps everything", async () => {
    const p = await setup([
      { toolCalls: [{ name: "write", arguments: { filePath: "notes.txt", content: "alpha\nbeta\n" } }] },
      { toolCalls: [{ name: "edit", arguments: { filePath: "notes.txt", oldString: "beta", newString: "gamma\ndelta" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "cat notes.txt; exit 4" } }] },
      { toolCalls: [{ name: "grep", arguments: { pattern: "a" } }] },
      { toolCalls: [{ name: "read", arguments: { filePath: "missing.txt" } }] },
      { text: "finished" }
    ])
    expect((await reins(["run", "--yolo", "work"], p)).code).toBe(0)
    const [session] = await listJson(p)
    const shown = await reins(["sessions", "show", session.id], p)
    expect(shown.code).toBe(0)
    const out = shown.stdout
    expect(out).toMatch(/^work\nses_\w+ · .+ · \d{4}-\d\d-\d\d \d\d:\d\d\n6 steps · [\d.]+k? in \/ \d+ out · \$0\.00\n/)
    expect(out).toMatch(/^✓ write notes\.txt · \+2 −0 · (?:\d+ms|\d+\.\ds|\d+m \d\ds)$/m)
    expect(out).toMatch(/^✓ edit notes\.txt · \+2 −1 · (?:\d+ms|\d+\.\ds|\d+m \d\ds)$/m)
    expect(out).toMatch(/^✗ bash cat notes\.txt; exit 4 · exit 4 · (?:\d+ms|\d+\.\ds|\d+m \d\ds)$/m)
    expect(out).toMatch(/^✓ grep a · 3 matches in 1 file · \d+ms$/m)
    expect(out).toMatch(/^✗ read missing\.txt · File not found: /m)
    expect(out).toContain("── assistant ")
    expect(out).toContain(" · local/scripted\n")
    expect(out).not.toContain('{"')
    expect(out.trimEnd().endsWith("finished")).toBe(true)

    const json = JSON.parse((await reins(["sessions", "show", session.id, "--format", "json"], p)).stdout)
    const tools = json.messages.flatMap((m: any) => m.parts).filter((x: any) => x.type === "tool")
    expect(tools.map((t: any) => t.tool)).toEqual(["write", "edit", "bash", "grep", "read"])
    expect(tools[2].state.input).toEqual({ command: "cat notes.txt; exit 4" })
    expect(tools[0].state.metadata.diff).toContain("+alpha")
  })
})
