import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { execSync } from "node:child_process"
import { bash, runCommand } from "../src/builtin/bash.ts"
import { runTool, tempDir } from "./helpers.ts"

describe("bash tool", () => {
  test("runs a real command in the working directory and reports the exit code", async () => {
    const cwd = tempDir()
    const r = await runTool(bash, { command: "pwd; echo err >&2; exit 3" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.output).toContain(cwd)
    expect(r.success.output).toContain("err")
    expect(r.success.output).toContain("(exit code 3)")
    expect(r.success.metadata.exitCode).toBe(3)
  })
  test("times out and kills the command", async () => {
    const r = await runTool(bash, { command: "sleep 5", timeout: 200 }, { cwd: tempDir() })
    expect(r.success.output).toContain("timed out after 200 ms")
    expect(r.success.metadata.timedOut).toBe(true)
  })
  test("bad arguments give a message for the model", async () => {
    const r = await runTool(bash, { command: 5, timeout: -1 }, { cwd: tempDir() })
    expect(r._tag).toBe("Failure")
    expect(r.failure.reason).toBe("invalid-arguments")
    expect(r.failure.message).toContain("The bash tool was called with invalid arguments: command:")
    expect(r.failure.message).toContain("timeout:")
    expect(r.failure.message).toContain("Please rewrite the input so it satisfies the schema.")
  })
  test("a deny rule stops the command before it runs", async () => {
    const cwd = tempDir()
    const r = await runTool(bash, { command: "touch marker" }, { cwd, rules: [{ permission: "bash", pattern: "touch *", action: "deny" }] })
    expect(r.failure.reason).toBe("permission")
    expect(Bun.file(`${cwd}/marker`).size).toBe(0)
  })
  test("long output keeps the tail and spills the rest", async () => {
    const r = await runTool(bash, { command: "seq 1 5000" }, { cwd: tempDir() })
    expect(r.success.truncated).toBe(true)
    expect(r.success.output).toContain("4999")
    expect(r.success.output).not.toContain("\n17\n")
  })
  test("interrupting kills the process group, children included", async () => {
    const n = `3${Math.floor(Math.random() * 1000)}.5`
    const fiber = Effect.runFork(runCommand(`sleep ${n} & sleep ${n}; echo done`, tempDir(), 60_000))
    await Bun.sleep(200)
    await Effect.runPromise(Fiber.interrupt(fiber))
    await Bun.sleep(100)
    const left = execSync("ps -eo args", { encoding: "utf8" }).split("\n").filter((l) => l.trim() === `sleep ${n}`)
    expect(left).toEqual([])
  })
})
