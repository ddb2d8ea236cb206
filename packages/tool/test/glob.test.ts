import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { glob } from "../src/builtin/glob.ts"
import { runTool, tempDir } from "./helpers.ts"

const touch = (file: string, secondsAgo: number) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, "x")
  const t = new Date(Date.now() - secondsAgo * 1000)
  fs.utimesSync(file, t, t)
}

describe("glob tool", () => {
  test("returns absolute paths newest first, skipping .git and node_modules", async () => {
    const cwd = tempDir()
    touch(path.join(cwd, "old.ts"), 300)
    touch(path.join(cwd, "src/new.ts"), 10)
    touch(path.join(cwd, "src/mid.ts"), 100)
    touch(path.join(cwd, "src/readme.md"), 1)
    touch(path.join(cwd, "node_modules/pkg/index.ts"), 0)
    touch(path.join(cwd, ".git/hooks/x.ts"), 0)
    const r = await runTool(glob, { pattern: "**/*.ts" }, { cwd })
    expect(r.success.output).toBe([path.join(cwd, "src/new.ts"), path.join(cwd, "src/mid.ts"), path.join(cwd, "old.ts")].join("\n"))
    const top = await runTool(glob, { pattern: "*.ts" }, { cwd })
    expect(top.success.output).toBe(path.join(cwd, "old.ts"))
  })

  test("shows at most 100 and says how many matched", async () => {
    const cwd = tempDir()
    for (let i = 0; i < 120; i++) touch(path.join(cwd, `f${i}.txt`), 1000 - i)
    const r = await runTool(glob, { pattern: "*.txt", path: "." }, { cwd })
    const listed = r.success.output.split("\n\n")[0].split("\n")
    expect(listed).toHaveLength(100)
    expect(listed[0]).toBe(path.join(cwd, "f119.txt"))
    expect(r.success.output).toContain("of 120 matches")
  })

  test("no match says so; a search root outside cwd needs external_directory", async () => {
    const cwd = tempDir()
    expect((await runTool(glob, { pattern: "*.nope" }, { cwd })).success.output).toBe("No files found")
    const outside = tempDir()
    const r = await runTool(glob, { pattern: "*", path: outside }, { cwd, nonInteractive: "deny" })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toContain(`${outside}/*`)
  })
})
