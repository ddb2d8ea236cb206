// Issue 13 items 4 and 9 through the built CLI: grep's search process ships with the bundle, and a
// project-wide grep leaves .env out. Issue 26: the search process does not read the project's bunfig.toml.
import { beforeAll, describe, expect, test } from "bun:test"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, lastToolResult, projects, reins, waitFor } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("grep in the built CLI", () => {
  test("searches in its own process, leaves .env and ignored files out, and says so", async () => {
    const p = await setup([{ toolCalls: [{ name: "grep", arguments: { pattern: "TOKEN" } }] }, { text: "done" }])
    fs.writeFileSync(path.join(p.cwd, ".env"), "TOKEN=secret-dotenv\n")
    fs.writeFileSync(path.join(p.cwd, ".gitignore"), "out/\n")
    fs.mkdirSync(path.join(p.cwd, "out"))
    fs.writeFileSync(path.join(p.cwd, "out", "bundle.js"), "TOKEN='secret-build'\n")
    fs.writeFileSync(path.join(p.cwd, "app.ts"), "const TOKEN = 1\n")
    // the search process is bun too: the project's bunfig.toml (a preload that would run in it) is not read
    fs.writeFileSync(path.join(p.cwd, "bunfig.toml"), 'preload = ["./preload.ts"]\n')
    fs.writeFileSync(path.join(p.cwd, "preload.ts"), 'require("node:fs").writeFileSync(`${process.cwd()}/preloaded-${process.pid}`, "")\n')
    const r = await reins(["run", "find the token"], p)
    expect(r.code).toBe(0)
    expect(fs.readdirSync(p.cwd).filter((f) => f.startsWith("preloaded-"))).toEqual([])
    const seen = lastToolResult(p.server.requests)
    expect(seen).toContain("Line 1: const TOKEN = 1")
    expect(seen).not.toContain("secret-")
    expect(seen).toContain("left out because the permission rules ask before reading it")
    expect(seen).toContain(".env")
  }, 60_000)

  test("a catastrophic pattern in a session is stopped by SIGINT at once and leaves no search process", async () => {
    const p = await setup([{ toolCalls: [{ name: "grep", arguments: { pattern: "(a+)+$" } }] }, { text: "done" }])
    fs.writeFileSync(path.join(p.cwd, "trap.txt"), `${"a".repeat(64)}!\n`)
    const run = reins(["run", "--yolo", "search"], p)
    const searching = () =>
      spawnSync("ps", ["-eo", "args="], { encoding: "utf8" })
        .stdout.split("\n")
        .filter((l) => l.includes(path.join("dist", "GrepChild")))
    const cli = () =>
      spawnSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
        .stdout.split("\n")
        .filter((l) => l.includes("reins.js run --yolo search"))
    await waitFor(() => searching().length > 0, "the search process")
    for (const line of cli()) process.kill(Number(line.trim().split(/\s+/)[0]), "SIGINT")
    const done = await run
    expect(done.code).not.toBe(0)
    await waitFor(() => searching().length === 0, "the search process to be gone")
    expect(searching()).toEqual([])
  }, 60_000)
})
