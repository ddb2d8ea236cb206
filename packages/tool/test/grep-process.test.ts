// Issue 13 item 9: a catastrophic regex runs in a child process that an interrupt or a timeout kills.
// Issue 23: the timeout is on the Effect clock (a TestClock moves past it), and a line the regex
// engine gave up on is named, not counted as "no match".
import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { eventually, it, waitFor } from "@reins/testkit"
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

// (a+)+$ against 64 a's and a "!" backtracks for far longer than any test runs on an engine without
// a limit (V8); JavaScriptCore (Bun) gives up on each such line after its fixed backtracking budget
const CATASTROPHIC = "(a+)+$"
const TRAP = `${"a".repeat(64)}!`
/** A project whose trap.txt holds `lines` lines the pattern backtracks on. */
const projectWithTrap = (lines = 1) => {
  const cwd = tempDir()
  fs.writeFileSync(path.join(cwd, "trap.txt"), `${TRAP}\n`.repeat(lines))
  return cwd
}
// 2,000 trap lines: a search that no engine finishes in minutes (each line costs JavaScriptCore its
// whole budget, twice; V8 never finishes one), so what ends it is the timeout, on any machine
const ENDLESS = 2_000

describe("grep runs off the main thread", () => {
  test("interrupting a search stuck in a catastrophic regex ends it at once and leaves no process", async () => {
    const cwd = projectWithTrap(ENDLESS)
    const fiber = Effect.runFork(toolCall(grep, { pattern: CATASTROPHIC }, { cwd }))
    // the event loop is free while the regex runs: this polling is what proves it
    await waitFor(() => searchChildren().length > 0, "the search process to start")
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(fiber.pollUnsafe()?._tag).toBe("Failure")
    await waitFor(() => searchChildren().length === 0, "the search process to be gone")
  })

  it.effect("a search past the timeout is killed with an error naming the pattern and asking for a simpler one", () =>
    Effect.gen(function* () {
      const cwd = projectWithTrap(ENDLESS)
      const fiber = yield* Effect.forkChild(toolCall(grep.pipe(Effect.provideService(GrepTimeout, 500)), { pattern: CATASTROPHIC }, { cwd }))
      yield* eventually(
        Effect.sync(() => searchChildren().length > 0),
        "the search process to start"
      )
      // virtual time: the timeout fires when the clock is moved, however fast the regex engine is
      yield* TestClock.adjust(500)
      const r = yield* Fiber.join(fiber)
      expect(r._tag).toBe("Failure")
      expect(r.failure.reason).toBe("timeout")
      expect(r.failure.message).toContain(JSON.stringify(CATASTROPHIC))
      expect(r.failure.message).toContain("Use a simpler pattern")
      yield* eventually(
        Effect.sync(() => searchChildren().length === 0),
        "the search process to be killed"
      )
    })
  )

  // wall time: the search process's own deadline (the timeout and a second's grace) is on its own clock
  test("a search whose reins stopped watching the clock still stops itself a little after the timeout", async () => {
    const cwd = projectWithTrap(ENDLESS)
    // the caller's clock is virtual and never moves: only the child's deadline can end this search
    const r = await Effect.runPromise(
      toolCall(grep.pipe(Effect.provideService(GrepTimeout, 200)), { pattern: CATASTROPHIC }, { cwd }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(r._tag).toBe("Failure")
    expect(r.failure.reason).toBe("timeout")
    await waitFor(() => searchChildren().length === 0, "the search process to exit")
  })

  test("a search whose reins was killed (SIGKILL: no finalizer ran) stops by itself", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "trap.txt"), `${TRAP}\n`.repeat(ENDLESS))
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
    await waitFor(() => {
      started.push(...orphans().map(([pid]) => pid!))
      return started.length > 0
    }, "the search process to start")
    expect(started.length).toBe(1)
    reins.kill("SIGKILL")
    await reins.exited
    // it looks for its parent ten times a second, from a thread of its own
    await waitFor(() => orphans().length === 0, "the orphaned search process to stop")
  })

  test("an ordinary search under the same short timeout finishes", async () => {
    const cwd = projectWithTrap()
    fs.writeFileSync(path.join(cwd, "b.txt"), "needle\n")
    const r = await runTool(grep.pipe(Effect.provideService(GrepTimeout, 10_000)), { pattern: "needle" }, { cwd })
    expect(r.success.output).toContain("Found 1 match")
  })
})

// JavaScriptCore answers "no match" when it runs out of backtracking budget: `^(?:(a+)+$|a*!)`
// matches TRAP (by its second branch), yet the engine says false. grep must not pass that on as "no matches".
describe("a line the regex engine gave up on", () => {
  const GIVES_UP = "^(?:(a+)+$|a*!)"

  test("is named, with why and what to do, instead of 'No files found'", async () => {
    const cwd = projectWithTrap()
    fs.writeFileSync(path.join(cwd, "other.txt"), "bbb\nccc!\n")
    const r = await runTool(grep, { pattern: GIVES_UP }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.output).not.toContain("No files found")
    expect(r.success.output).toContain("No matches found, but the regex engine gave up on 1 line that may match")
    expect(r.success.output).toContain(`${path.join(cwd, "trap.txt")}:1`)
    expect(r.success.output).toContain("use a simpler pattern")
    expect(r.success.metadata).toMatchObject({ matches: 0, gaveUp: 1, files: 0 })
  })

  test("beside real matches: they are listed and counted, the line given up on is noted apart", async () => {
    const cwd = projectWithTrap(2)
    fs.writeFileSync(path.join(cwd, "hit.txt"), "aaa!\nno\n")
    const r = await runTool(grep, { pattern: GIVES_UP }, { cwd })
    expect(r.success.output).toStartWith("Found 1 match")
    expect(r.success.output).toContain("Line 1: aaa!")
    expect(r.success.output).toContain("gave up on 2 lines before deciding whether they match")
    for (const n of [1, 2]) expect(r.success.output).toContain(`trap.txt:${n}`)
    expect(r.success.metadata).toMatchObject({ matches: 1, gaveUp: 2, files: 1 })
  })

  test("ordinary searches say nothing of it: no matches is 'No files found', matches are plain", async () => {
    const cwd = tempDir()
    // long lines and many of them, but nothing that backtracks: every answer is quick and real
    fs.writeFileSync(path.join(cwd, "big.txt"), Array.from({ length: 5_000 }, (_, i) => `line ${i} ${"x".repeat(300)}`).join("\n"))
    for (const [pattern, expected] of [
      ["nothing-here", "No files found"],
      ["line 4999 x+$", "Found 1 match"],
      ["^(line|word) \\d+ y", "No files found"]
    ] as const) {
      const r = await runTool(grep, { pattern }, { cwd })
      expect(r.success.output).toStartWith(expected)
      expect(r.success.output).not.toContain("gave up")
      expect(r.success.metadata.gaveUp).toBe(0)
    }
  })
})
