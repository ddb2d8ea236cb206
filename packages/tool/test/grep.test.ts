import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { grep } from "../src/builtin/grep.ts"
import { runTool, tempDir } from "./helpers.ts"

const put = (cwd: string, rel: string, content: string | Buffer, secondsAgo = 0) => {
  const file = path.join(cwd, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
  const t = new Date(Date.now() - secondsAgo * 1000)
  fs.utimesSync(file, t, t)
}

describe("grep tool", () => {
  test("groups matching lines by file, newest file first", async () => {
    const cwd = tempDir()
    put(cwd, "old.ts", "const hit = 1\nnothing\nhit again\n", 100)
    put(cwd, "src/new.tsx", "x\nfunction hit() {}\n", 1)
    put(cwd, "node_modules/p/i.ts", "hit\n")
    put(cwd, "bin.dat2", Buffer.from("hit\u0000hit"))
    const r = await runTool(grep, { pattern: "hit\\b" }, { cwd })
    expect(r.success.output).toBe(
      `Found 3 matches\n\n${path.join(cwd, "src/new.tsx")}:\n  Line 2: function hit() {}\n\n${path.join(cwd, "old.ts")}:\n  Line 1: const hit = 1\n  Line 3: hit again`
    )
  })

  test("include filters file names, with braces", async () => {
    const cwd = tempDir()
    put(cwd, "a.ts", "needle\n")
    put(cwd, "b.tsx", "needle\n")
    put(cwd, "c.md", "needle\n")
    const ts = await runTool(grep, { pattern: "needle", include: "*.ts" }, { cwd })
    expect(ts.success.output).toContain("a.ts")
    expect(ts.success.output).not.toContain("b.tsx")
    const both = await runTool(grep, { pattern: "needle", include: "*.{ts,tsx}" }, { cwd })
    expect(both.success.output).toContain("Found 2 matches")
    expect(both.success.output).not.toContain("c.md")
  })

  test("stops at 100 matches and says so", async () => {
    const cwd = tempDir()
    put(cwd, "many.txt", Array.from({ length: 150 }, (_, i) => `match ${i}`).join("\n"))
    const r = await runTool(grep, { pattern: "^match" }, { cwd })
    expect(r.success.output).toContain("Found 150 matches (showing first 100)")
    expect(r.success.output).toContain("Line 100: match 99")
    expect(r.success.output).not.toContain("Line 101:")
  })

  test("an invalid regex and an empty result are model-friendly", async () => {
    const cwd = tempDir()
    put(cwd, "a.ts", "x\n")
    const bad = await runTool(grep, { pattern: "foo(" }, { cwd })
    expect(bad._tag).toBe("Failure")
    expect(bad.failure.message).toContain("not a valid JavaScript regular expression")
    expect(bad.failure.message).toContain("escape special characters")
    const none = await runTool(grep, { pattern: "zzz" }, { cwd })
    expect(none.success.output).toBe("No files found")
  })

  test("searching outside cwd is denied non-interactively", async () => {
    const cwd = tempDir()
    const outside = tempDir()
    put(outside, "s.txt", "secret\n")
    const r = await runTool(grep, { pattern: "secret", path: outside }, { cwd, nonInteractive: "deny" })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toContain("external_directory")
  })
})
