// Issue 13 item 9: a catastrophic regex runs in a child process that an interrupt or a timeout kills.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { grep } from "../src/builtin/grep.ts"
import { GrepTimeout } from "../src/builtin/GrepProcess.ts"
import { runTool, tempDir, toolCall } from "./helpers.ts"

/** The search processes this test process started (children running GrepChild.ts). */
const searchChildren = () =>
  spawnSync("ps", ["-o", "pid=,ppid=,args=", "-e"], { encoding: "utf8" })
    .stdout.split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, ...args]) => ppid === String(process.pid) && args.join(" ").includes("GrepChild.ts"))

// (a+)+$ against 64 a's and a "!" backtracks for far longer than any test runs
const CATASTROPHIC = "(a+)+$"
const projectWithTrap = () => {
  const cwd = tempDir()
  fs.writeFileSync(path.join(cwd, "trap.txt"), `${"a".repeat(64)}!\n`)
  return cwd
}

describe("grep runs off the main thread", () => {
  test("interrupting a search stuck in a catastrophic regex ends it at once and leaves no process", async () => {
    const cwd = projectWithTrap()
    const fiber = Effect.runFork(toolCall(grep, { pattern: CATASTROPHIC }, { cwd }))
    // the event loop is free while the regex runs: this polling is what proves it
    while (searchChildren().length === 0) await Bun.sleep(20)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(fiber.pollUnsafe()?._tag).toBe("Failure")
    for (let i = 0; i < 100 && searchChildren().length > 0; i++) await Bun.sleep(20)
    expect(searchChildren()).toEqual([])
  }, 30_000)

  test("a search past the timeout is killed with an error naming the pattern and asking for a simpler one", async () => {
    const cwd = projectWithTrap()
    const r = await runTool(grep.pipe(Effect.provideService(GrepTimeout, 500)), { pattern: CATASTROPHIC }, { cwd })
    expect(r._tag).toBe("Failure")
    expect(r.failure.reason).toBe("timeout")
    expect(r.failure.message).toContain(JSON.stringify(CATASTROPHIC))
    expect(r.failure.message).toContain("Use a simpler pattern")
    for (let i = 0; i < 100 && searchChildren().length > 0; i++) await Bun.sleep(20)
    expect(searchChildren()).toEqual([])
  }, 30_000)

  test("a search whose reins was killed (SIGKILL: no finalizer ran) stops by itself", async () => {
    const cwd = tempDir()
    // every line backtracks for about a second here: 300 of them keep an orphan busy for minutes
    fs.writeFileSync(path.join(cwd, "trap.txt"), `${"a".repeat(40)}!\n`.repeat(300))
    const standIn = path.join(cwd, "stand-in.ts")
    fs.writeFileSync(
      standIn,
      `import { grep } from ${JSON.stringify(path.join(import.meta.dir, "../src/builtin/grep.ts"))}\n` +
        `import { runTool } from ${JSON.stringify(path.join(import.meta.dir, "helpers.ts"))}\n` +
        `await runTool(grep, { pattern: ${JSON.stringify(CATASTROPHIC)} }, { cwd: ${JSON.stringify(cwd)} })\n`
    )
    const reins = Bun.spawn(["bun", standIn], { cwd, stdio: ["ignore", "ignore", "ignore"] })
    const orphans = () =>
      spawnSync("ps", ["-o", "pid=,ppid=,args=", "-e"], { encoding: "utf8" })
        .stdout.split("\n")
        .map((line) => line.trim().split(/\s+/))
        .filter(([pid, ppid, ...args]) => args.join(" ").includes("GrepChild.ts") && (ppid === String(reins.pid) || started.includes(pid!)))
    const started: Array<string> = []
    for (let i = 0; i < 500 && started.length === 0; i++) {
      started.push(...orphans().map(([pid]) => pid!))
      await Bun.sleep(20)
    }
    expect(started.length).toBe(1)
    reins.kill("SIGKILL")
    await reins.exited
    // it looks for its parent between lines, and a line here takes about a second (more on a loaded machine)
    for (let i = 0; i < 1000 && orphans().length > 0; i++) await Bun.sleep(20)
    expect(orphans()).toEqual([])
  }, 45_000)

  test("an ordinary search under the same short timeout finishes", async () => {
    const cwd = projectWithTrap()
    fs.writeFileSync(path.join(cwd, "b.txt"), "needle\n")
    const r = await runTool(grep.pipe(Effect.provideService(GrepTimeout, 10_000)), { pattern: "needle" }, { cwd })
    expect(r.success.output).toContain("Found 1 match")
  })
})
