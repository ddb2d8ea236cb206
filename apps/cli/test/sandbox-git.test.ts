// A command that makes a new git code-running file (bubblewrap keeps only what exists read-only): the
// built CLI takes it away after the command and the model is told, so git outside never runs it.
import { beforeAll, describe, expect, test } from "bun:test"
import { probeBwrap } from "@reins/sandbox"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, lastToolResult, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const bwrap = probeBwrap()

const bash = (command: string) => [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }]

describe.skipIf(process.platform !== "linux" || !bwrap.available)("git's code-running files under reins run --yolo", () => {
  test("a new .git/commondir pointing at a hostile git dir is taken away and the model is told; git works after", async () => {
    const p = await setup(bash("mkdir -p evil/hooks && echo $PWD/evil > .git/commondir && echo planted"))
    const r = await reins(["run", "--yolo", "plant"], p)
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, ".git", "commondir"))).toBe(false)
    const result = lastToolResult(p.server.requests)
    expect(result).toContain("planted")
    expect(result).toContain("reins's sandbox undid .git/commondir")
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: p.cwd, encoding: "utf8" })).toBeDefined()
  })
})
