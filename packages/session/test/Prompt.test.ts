import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { eventually, runTest, waitFor } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { envBlock, findInstructions, gitStatus, systemPrompt, worktreeRoot } from "../src/Prompt.ts"

const run = Effect.runPromise

describe("system prompt", () => {
  test("instructions are found walking up to the worktree root, first name wins per directory", async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-prompt-")))
    const root = path.join(outside, "repo")
    const sub = path.join(root, "pkg", "src")
    fs.mkdirSync(sub, { recursive: true })
    fs.mkdirSync(path.join(root, ".git"))
    fs.writeFileSync(path.join(outside, "AGENTS.md"), "outside the repo")
    fs.writeFileSync(path.join(root, "AGENTS.md"), "root rules")
    fs.writeFileSync(path.join(root, "CLAUDE.md"), "ignored: AGENTS.md wins")
    fs.writeFileSync(path.join(root, "pkg", "CLAUDE.md"), "package rules")
    expect(await run(worktreeRoot(sub))).toBe(root)
    expect(await run(findInstructions(sub))).toEqual([path.join(root, "AGENTS.md"), path.join(root, "pkg", "CLAUDE.md")])
    const [header, rest] = await run(systemPrompt(sub, new Date(0)))
    expect(header).toContain("reins")
    expect(rest).toContain("root rules")
    expect(rest).toContain("package rules")
    expect(rest).not.toContain("outside the repo")
    expect(rest).not.toContain("ignored")
  })
  test("the env block names the directory and git status", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-env-")))
    expect(await run(envBlock(dir, new Date(0)))).toContain("Not a git repository")
    Bun.spawnSync(["git", "init", "-q"], { cwd: dir })
    fs.writeFileSync(path.join(dir, "new.txt"), "x")
    const block = await run(envBlock(dir, new Date(0)))
    expect(block).toContain(`Working directory: ${dir}`)
    expect(block).toContain("?? new.txt")
  })

  test("git status runs as a child process: a git that hangs is killed at the timeout, or when the turn is interrupted", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-git-")))
    const bin = path.join(dir, "bin")
    fs.mkdirSync(bin)
    const marker = path.join(dir, "git-pids")
    // a `git` that records its pid and never answers
    fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\necho $$ >> ${marker}\nexec sleep 300\n`, { mode: 0o755 })
    const saved = process.env.PATH
    process.env.PATH = `${bin}:${saved}`
    try {
      const started = () =>
        fs.existsSync(marker)
          ? fs
              .readFileSync(marker, "utf8")
              .split("\n")
              .filter((l) => l !== "").length
          : 0
      // virtual time: the minute-long timeout passes when the test moves the clock, once git runs
      await runTest(
        Effect.gen(function* () {
          const hung = yield* Effect.forkChild(gitStatus(dir, 60_000))
          yield* eventually(
            Effect.sync(() => started() === 1),
            "the first git to start"
          )
          yield* TestClock.adjust("1 minute")
          expect(yield* Fiber.join(hung)).toBe("")
        })
      )
      const fiber = Effect.runFork(gitStatus(dir, 60_000))
      await waitFor(() => started() === 2, "the second git to start")
      await Effect.runPromise(Fiber.interrupt(fiber))
    } finally {
      process.env.PATH = saved
    }
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0)
        return !fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z")
      } catch {
        return false
      }
    }
    for (const pid of fs
      .readFileSync(marker, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map(Number))
      expect(alive(pid)).toBe(false)
  })
})
