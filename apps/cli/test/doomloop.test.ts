import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** Tool parts that ran, from `--format json` output: `tool:status` in order. */
const ranTools = (stdout: string) =>
  events(stdout)
    .filter((e) => e.type === "part.updated" && e.part.type === "tool" && (e.part.state.status === "completed" || e.part.state.status === "error"))
    .map((e) => `${e.part.tool}:${e.part.state.status}`)

describe("doom-loop guard (T6) in reins run", () => {
  test("the same bash call 3 times across 3 steps: stopped after the third, exit 1, the reason on stderr", async () => {
    // a different output each time, so only the identical-call rule can fire
    const loop = { toolCalls: [{ name: "bash", arguments: { command: "date +%s%N", description: "time" } }] }
    const p = await setup([loop, loop, loop, loop, { text: "never" }])
    const r = await reins(["run", "--format", "json", "what time is it"], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("reins: Stopped a doom loop: The model called bash with the same arguments 3 times in this turn.\n")
    expect(ranTools(r.stdout)).toEqual(["bash:completed", "bash:completed", "bash:completed"])
    expect(p.server.requests.length).toBe(3)
    const evs = events(r.stdout)
    expect(evs.find((e) => e.type === "permission.asked")).toMatchObject({ permission: "doom_loop", patterns: ["bash"] })
    expect(evs.find((e) => e.type === "permission.replied")).toMatchObject({ reply: "reject", by: "policy" })
    expect(evs.find((e) => e.type === "session.error")?.error).toEqual({
      reason: "doom_loop",
      message: "Stopped a doom loop: The model called bash with the same arguments 3 times in this turn."
    })
    expect(evs.at(-2)).toMatchObject({ type: "session.status", status: "idle" })
    expect(evs.at(-1)).toMatchObject({ type: "turn.result", status: "error", exitCode: 1, error: { reason: "doom_loop" } })

    // the reason is stored on the last assistant message, and the session can go on
    const sessionID = evs[0]!.session.id as string
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    expect(exported.messages.at(-1).info.error.reason).toBe("doom_loop")
  })

  test("text mode: the tool lines, then one line naming the loop", async () => {
    const loop = { toolCalls: [{ name: "bash", arguments: { command: "date +%s%N" } }] }
    const p = await setup([loop, loop, loop, loop, { text: "never" }])
    const r = await reins(["run", "what time is it"], p)
    expect(r.code).toBe(1)
    expect(r.stderr.split("\n").filter((l) => l.startsWith("✓ bash date +%s%N · exit 0"))).toHaveLength(3)
    expect(r.stderr.trim().split("\n").at(-1)).toBe("reins: Stopped a doom loop: The model called bash with the same arguments 3 times in this turn.")
    expect(r.stdout).not.toContain("never")
  })

  test("reading the same unchanged file three times is a repeated call+result pair: stopped after the third", async () => {
    const loop = { toolCalls: [{ name: "read", arguments: { filePath: "notes.txt" } }] }
    const p = await setup([loop, loop, loop, loop, { text: "never" }])
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "alpha\n")
    const r = await reins(["run", "--format", "json", "read the notes"], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("The model called read with the same arguments 3 times in this turn and got the same result each time")
    expect(ranTools(r.stdout)).toEqual(["read:completed", "read:completed", "read:completed"])
    expect(p.server.requests.length).toBe(3)
  })

  test("A,B,A,B,A,B is stopped as a cycle after the sixth call", async () => {
    const a = { toolCalls: [{ name: "bash", arguments: { command: "date +%s%N" } }] }
    const b = { toolCalls: [{ name: "read", arguments: { filePath: "notes.txt" } }] }
    // the identical and pair rules are raised so that only the cycle rule can fire
    const p = await setup([a, b, a, b, a, b, a, { text: "never" }], { doom_loop: { identical: 10, pairs: 10 } })
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "alpha\n")
    const r = await reins(["run", "--format", "json", "loop"], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("reins: Stopped a doom loop: The model repeated the same cycle of 2 calls (bash → read) 3 times in this turn.\n")
    expect(ranTools(r.stdout)).toEqual(["bash", "read", "bash", "read", "bash", "read"].map((t) => `${t}:completed`))
    expect(events(r.stdout).find((e) => e.type === "permission.asked")).toMatchObject({ permission: "doom_loop", patterns: ["bash", "read"] })
  })

  test("A,B,A,B,A,B with the default limits is stopped too (earlier: A's third identical call+result)", async () => {
    const a = { toolCalls: [{ name: "read", arguments: { filePath: "a.txt" } }] }
    const b = { toolCalls: [{ name: "read", arguments: { filePath: "b.txt" } }] }
    const p = await setup([a, b, a, b, a, b, { text: "never" }])
    fs.writeFileSync(path.join(p.cwd, "a.txt"), "a\n")
    fs.writeFileSync(path.join(p.cwd, "b.txt"), "b\n")
    const r = await reins(["run", "--format", "json", "loop"], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("Stopped a doom loop: The model called read with the same arguments 3 times")
    expect(ranTools(r.stdout)).toHaveLength(5)
  })

  test("--permission allow lets the loop go on: the run finishes with exit 0", async () => {
    const loop = { toolCalls: [{ name: "bash", arguments: { command: "date +%s%N" } }] }
    const p = await setup([loop, loop, loop, { text: "it is late" }])
    const r = await reins(["run", "--permission", "allow", "--format", "json", "what time is it"], p)
    expect(r.code).toBe(0)
    expect(ranTools(r.stdout)).toHaveLength(3)
    const evs = events(r.stdout)
    expect(evs.find((e) => e.type === "permission.replied")).toMatchObject({ reply: "once", by: "policy" })
    expect(evs.some((e) => e.type === "session.error")).toBe(false)
  })
})
