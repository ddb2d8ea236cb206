// The permission prompt on a real terminal: `script` gives the CLI a pty, we answer like a person.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, ensureBuilt, HANG_MS, project, reins } from "./support.ts"

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
    // a hang guard: a run that never ends is killed, and the test fails on its exit code
    const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS)
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
    expect(r.output).toContain(`always would allow: bash "touch *"`)
    expect(r.output).toContain(`in: ${fs.realpathSync(p.cwd)}`)
    expect(r.output).toContain(`rule: bash "*" → ask`)
    expect(r.output.split("Permission needed").length - 1).toBe(1)
    expect(fs.existsSync(path.join(p.cwd, "first.txt"))).toBe(true)
    expect(fs.existsSync(path.join(p.cwd, "second.txt"))).toBe(true)
  })

  test("an edit's question shows the diff it asks about; rejected, the file is untouched", async () => {
    const p = await project(
      [{ toolCalls: [{ name: "edit", arguments: { filePath: "app.ts", oldString: "const port = 80", newString: "const port = 8080" } }] }, { text: "left it" }],
      {
        permission: { edit: "ask" }
      }
    )
    stops.push(() => p.server.stop())
    fs.writeFileSync(path.join(p.cwd, "app.ts"), "// server\nconst port = 80\nlisten(port)\n")
    const r = await runOnTty(p.cwd, p.env, "change the port", ["r", ""])
    expect(r.code).toBe(0)
    expect(r.output).toContain("Permission needed: edit")
    // the changed lines, with their context, above the options
    const question = r.output.slice(r.output.indexOf("Permission needed: edit"), r.output.indexOf("[o]nce"))
    expect(question).toContain("-const port = 80")
    expect(question).toContain("+const port = 8080")
    expect(question).toContain(" listen(port)")
    expect(fs.readFileSync(path.join(p.cwd, "app.ts"), "utf8")).toBe("// server\nconst port = 80\nlisten(port)\n")
  })

  test("reject with a message sends the message to the model and runs nothing", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "touch nope.txt" } }] }, { text: "ok, I will not" }], {
      permission: { bash: "ask" }
    })
    stops.push(() => p.server.stop())
    const r = await runOnTty(p.cwd, p.env, "make a file", ["r", "use the write tool instead"])
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, "nope.txt"))).toBe(false)
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("use the write tool instead")
  })

  test("once allows only this call: the next one is asked again", async () => {
    const p = await project(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "touch one.txt" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "touch two.txt" } }] },
        { text: "done" }
      ],
      { permission: { bash: "ask" } }
    )
    stops.push(() => p.server.stop())
    const r = await runOnTty(p.cwd, p.env, "make files", ["o", "o"])
    expect(r.code).toBe(0)
    expect(r.output.split("Permission needed: bash").length - 1).toBe(2)
    expect(r.output).not.toContain("always allowed")
    expect(fs.existsSync(path.join(p.cwd, "one.txt"))).toBe(true)
    expect(fs.existsSync(path.join(p.cwd, "two.txt"))).toBe(true)
  })

  test("always on git status inside `git status && rm -rf x` never grants rm", async () => {
    const p = await project(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "git status && rm -rf junk" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "git status --short && rm -rf junk2" } }] },
        { text: "finished" }
      ],
      { permission: { bash: "ask" } }
    )
    stops.push(() => p.server.stop())
    fs.mkdirSync(path.join(p.cwd, "junk"))
    fs.mkdirSync(path.join(p.cwd, "junk2"))
    // git status → always; rm -rf junk → once; then git status --short is covered, rm -rf junk2 is asked: reject
    const r = await runOnTty(p.cwd, p.env, "clean up", ["a", "o", "r", "keep junk2"])
    expect(r.code).toBe(0)
    const asked = r.output.split("Permission needed: bash").length - 1
    expect(asked).toBe(3)
    expect(r.output).toContain(`always allowed for this session: bash "git status *"`)
    expect(r.output).not.toMatch(/always allowed[^\n]*rm \*/)
    expect(fs.existsSync(path.join(p.cwd, "junk"))).toBe(false)
    expect(fs.existsSync(path.join(p.cwd, "junk2"))).toBe(true)
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("keep junk2")
  })

  test("permission_persist project: always is saved, listed, used by the next run and revocable", async () => {
    const p = await project(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "touch saved.txt" } }] },
        { text: "first done" },
        { toolCalls: [{ name: "bash", arguments: { command: "touch again.txt" } }] },
        { text: "second done" }
      ],
      { permission: { bash: "ask" }, permission_persist: "project" }
    )
    stops.push(() => p.server.stop())
    const first = await runOnTty(p.cwd, p.env, "make a file", ["a"])
    expect(first.code).toBe(0)
    expect(first.output).toContain(`always allowed for this project: bash "touch *"`)
    const grants = JSON.parse((await reins(["permissions", "list", "--format", "json"], p)).stdout)
    expect(grants.map((g: any) => [g.permission, g.pattern, g.project])).toEqual([["bash", "touch *", p.cwd]])
    // a new process, no terminal: the saved grant answers instead of the deny policy
    const second = await reins(["run", "make another"], p)
    expect(second.code).toBe(0)
    expect(second.stderr).not.toContain("permission denied")
    expect(fs.existsSync(path.join(p.cwd, "again.txt"))).toBe(true)
    expect((await reins(["permissions", "revoke", grants[0].id], p)).code).toBe(0)
    expect(JSON.parse((await reins(["permissions", "list", "--format", "json"], p)).stdout)).toEqual([])
  })
})
