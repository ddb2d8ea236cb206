import { beforeAll, describe, expect, test } from "bun:test"
import { execSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("reins run end to end", () => {
  test("a 3-step session writes a file, runs bash on it, reads it back and answers", async () => {
    const p = await setup([
      { toolCalls: [{ name: "write", arguments: { filePath: "notes.txt", content: "alpha\nbeta\n" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "wc -l notes.txt && echo gamma >> notes.txt", description: "count lines" } }] },
      { toolCalls: [{ name: "read", arguments: { filePath: "notes.txt" } }] },
      { text: "notes.txt now has alpha, beta and gamma." }
    ])
    const r = await reins(["run", "--format", "json", "make notes"], p)
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("alpha\nbeta\ngamma\n")

    const evs = events(r.stdout)
    expect(evs[0]!.type).toBe("session.created")
    expect(evs.at(-2)).toMatchObject({ type: "session.status", status: "idle" })
    expect(evs.at(-1)).toMatchObject({ type: "turn.result", status: "ok", exitCode: 0, steps: 4, text: "notes.txt now has alpha, beta and gamma." })
    // a running call's progress (bash: its process group, at once) repeats its state: counted once
    const toolStates = evs
      .filter((e) => e.type === "part.updated" && e.part.type === "tool")
      .map((e) => `${e.part.tool}:${e.part.state.status}`)
      .filter((state, i, all) => state !== all[i - 1])
    expect(toolStates).toEqual([
      "write:pending",
      "write:running",
      "write:completed",
      "bash:pending",
      "bash:running",
      "bash:completed",
      "read:pending",
      "read:running",
      "read:completed"
    ])
    const text = evs
      .filter((e) => e.type === "part.delta")
      .map((e) => e.delta)
      .join("")
    expect(text).toBe("notes.txt now has alpha, beta and gamma.")
    const finishes = evs.filter((e) => e.type === "part.updated" && e.part.type === "step-finish").map((e) => e.part.reason)
    expect(finishes).toEqual(["tool-calls", "tool-calls", "tool-calls", "stop"])

    // the stored session has every part, in order, with the tool outputs
    const sessionID = evs[0]!.session.id as string
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    expect(exported.session.id).toBe(sessionID)
    expect(exported.messages.map((m: any) => m.info.role)).toEqual(["user", "assistant", "assistant", "assistant", "assistant"])
    const tools = exported.messages.flatMap((m: any) => m.parts).filter((x: any) => x.type === "tool")
    expect(tools.map((t: any) => t.state.status)).toEqual(["completed", "completed", "completed"])
    expect(tools[1].state.output).toContain("2 notes.txt")
    expect(tools[1].state.output).toContain("(exit code 0)")
    expect(tools[2].state.output).toContain("gamma")
    expect(exported.messages.at(-1).info.finish).toBe("stop")

    const list = await reins(["sessions", "list", "--format", "json"], p)
    expect(JSON.parse(list.stdout).map((s: any) => s.id)).toEqual([sessionID])
  })

  test("SIGINT during a long bash call exits without waiting for it, marks the call interrupted, kills sleep, and --continue works", async () => {
    const marker = `3${Math.floor(Math.random() * 900) + 100}.25`
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `echo started-${marker}; sleep ${marker}` } }] }, { text: "resumed fine" }])
    const child = spawn(BIN, ["run", "--format", "json", "--yolo", "sleep please"], { cwd: p.cwd, env: p.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    // the event this test needs: the running call's progress shows the command's first line, so the
    // output an interrupt keeps holds it (waiting a fixed time instead raced the output on a busy machine)
    const printed = new Promise<void>((resolve) => {
      child.stdout.on("data", (b) => {
        stdout += b
        const progress = events(stdout.slice(0, stdout.lastIndexOf("\n") + 1)).some(
          (e) =>
            e.type === "part.updated" &&
            e.part.type === "tool" &&
            e.part.state.status === "running" &&
            e.part.state.metadata?.tail?.includes(`started-${marker}`)
        )
        if (progress) resolve()
      })
    })
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
    await printed
    child.kill("SIGINT")
    // it exits without waiting for the command (an hour's sleep): the test would hang otherwise
    await exited
    expect(child.exitCode === 130 || child.signalCode === "SIGINT").toBe(true)

    const left = execSync("ps -eo args", { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.trim() === `sleep ${marker}`)
    expect(left).toEqual([])

    const sessionID = events(stdout)[0]!.session.id as string
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    const tool = exported.messages.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
    expect(tool.state).toMatchObject({ status: "error", interrupted: true })
    // what the command printed before the interrupt is kept for the model
    expect(tool.state.error).toContain(`Output so far (last lines):\nstarted-${marker}`)

    const resumed = await reins(["run", "--continue", "go on"], p)
    expect(resumed.code).toBe(0)
    expect(resumed.stdout.trim()).toBe("resumed fine")
    const again = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    expect(again.messages.length).toBe(exported.messages.length + 2)
    // the resumed request showed the model the interrupted call
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("interrupted")
  })

  test("a malformed reins.json gives one line naming the file and field, exit 2", async () => {
    const p = await setup([])
    fs.writeFileSync(path.join(p.cwd, "reins.json"), JSON.stringify({ model: "local/x", agent: { steps: "many" } }))
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(2)
    const lines = r.stderr.trim().split("\n")
    expect(lines.length).toBe(1)
    expect(lines[0]).toContain(path.join(p.cwd, "reins.json"))
    expect(lines[0]).toContain("agent.steps")
    expect(p.server.requests.length).toBe(0)
  })

  test("no model configured: one line saying what to set, exit 2", async () => {
    const p = await setup([])
    fs.rmSync(p.configFile)
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n").length).toBe(1)
    expect(r.stderr).toContain("ANTHROPIC_API_KEY")
  })

  test("a 500 is retried and the session completes", async () => {
    const p = await setup([{ error: { status: 500, message: "upstream exploded", headers: { "retry-after-ms": "20" } } }, { text: "recovered" }])
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe("recovered")
    expect(r.stderr).toContain("retrying")
    expect(p.server.requests.length).toBe(2)
  })

  test("a 400 saying the context is too long is reported as overflow, not retried", async () => {
    const p = await setup([
      {
        error: {
          status: 400,
          message: "This model's maximum context length is 32000 tokens. However, your messages resulted in 40000 tokens.",
          code: "context_length_exceeded"
        }
      },
      { text: "never" }
    ])
    const r = await reins(["run", "--format", "json", "hello"], p)
    expect(r.code).toBe(1)
    expect(p.server.requests.length).toBe(1)
    const error = events(r.stdout).find((e) => e.type === "session.error")
    expect(error?.error.reason).toBe("overflow")
    expect(r.stderr).toContain("context overflow")
  })

  test("bad flags and unknown sessions fail with a non-zero exit", async () => {
    const p = await setup([])
    expect((await reins(["run", "--format", "xml", "x"], p)).code).toBe(2)
    const r = await reins(["sessions", "show", "ses_missing"], p)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("reins sessions list")
  })
})
