import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { list } from "../src/builtin/list.ts"
import { runTool, tempDir } from "./helpers.ts"

const put = (cwd: string, rel: string) => {
  fs.mkdirSync(path.dirname(path.join(cwd, rel)), { recursive: true })
  fs.writeFileSync(path.join(cwd, rel), "x")
}

describe("list tool", () => {
  test("draws a tree, directories first with a trailing slash, skipping build dirs and ignore globs", async () => {
    const cwd = tempDir()
    for (const f of ["README.md", "src/index.ts", "src/lib/util.ts", "dist/out.js", "node_modules/p/i.js", ".git/HEAD", "debug.log"]) put(cwd, f)
    const r = await runTool(list, { ignore: ["*.log"] }, { cwd })
    expect(r.success.output).toBe(`${cwd}/\n  src/\n    lib/\n      util.ts\n    index.ts\n  README.md`)
  })

  test("stops at 100 entries, nearest levels first", async () => {
    const cwd = tempDir()
    for (let i = 0; i < 80; i++) put(cwd, `top${String(i).padStart(2, "0")}.txt`)
    for (let i = 0; i < 50; i++) put(cwd, `deep/f${i}.txt`)
    const r = await runTool(list, { path: cwd }, { cwd })
    const entries = r.success.output.split("\n\n")[0].split("\n").slice(1)
    expect(entries).toHaveLength(100)
    expect(entries).toContain("  top79.txt")
    expect(entries).toContain("  deep/")
    expect(r.success.output).toContain("Showing the first 100 entries")
  })

  test("listing a directory outside cwd needs external_directory", async () => {
    const cwd = tempDir()
    const outside = tempDir()
    const denied = await runTool(list, { path: outside }, { cwd, nonInteractive: "deny" })
    expect(denied.failure.reason).toBe("permission")
    const allowed = await runTool(list, { path: outside }, { cwd, nonInteractive: "allow" })
    expect(allowed.success.output).toContain(`${outside}/`)
  })
})
