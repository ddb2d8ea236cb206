// The permission prompt on a real terminal: `script` gives the CLI a pty, we answer like a person.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, ensureBuilt, project } from "./support.ts"

const hasScript = spawnSync("script", ["--version"]).status === 0
beforeAll(() => ensureBuilt())
const stops: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const stop of stops) await stop()
})

/** Runs `reins run` under a pty and answers each permission prompt in turn. */
const runOnTty = (cwd: string, env: Record<string, string>, message: string, answers: Array<string>) =>
  new Promise<{ output: string; code: number | null; prompts: number }>((resolve) => {
    const command = `${BIN} run ${JSON.stringify(message)}`
    const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd, env: { ...env, TERM: "dumb" }, stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    let prompts = 0
    const onData = (b: Buffer) => {
      output += b.toString()
      const asked = output.split("[r]eject: ").length - 1
      const followUp = output.split("(Enter to skip): ").length - 1
      while (prompts < asked + followUp && answers.length > 0) {
        prompts++
        child.stdin.write(`${answers.shift()}\r`)
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ output, code, prompts })
    })
  })

describe.skipIf(!hasScript)("permission prompt on a terminal", () => {
  test("always grants the approved command prefix for the rest of the session", async () => {
    const p = await project(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "touch first.txt" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "touch second.txt" } }] },
        { text: "both files made" }
      ],
      { permission: { bash: "ask" } }
    )
    stops.push(() => p.server.stop())
    const r = await runOnTty(p.cwd, p.env, "make files", ["a"])
    expect(r.code).toBe(0)
    expect(r.output).toContain("Permission needed: bash")
    expect(r.output).toContain("touch first.txt")
    expect(r.output.split("Permission needed").length - 1).toBe(1)
    expect(fs.existsSync(path.join(p.cwd, "first.txt"))).toBe(true)
    expect(fs.existsSync(path.join(p.cwd, "second.txt"))).toBe(true)
  })

  test("reject with a message sends the message to the model and runs nothing", async () => {
    const p = await project(
      [{ toolCalls: [{ name: "bash", arguments: { command: "touch nope.txt" } }] }, { text: "ok, I will not" }],
      { permission: { bash: "ask" } }
    )
    stops.push(() => p.server.stop())
    const r = await runOnTty(p.cwd, p.env, "make a file", ["r", "use the write tool instead"])
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, "nope.txt"))).toBe(false)
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("use the write tool instead")
  })
})
