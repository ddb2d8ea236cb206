import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { write } from "../src/builtin/write.ts"
import { runTool, tempDir } from "./helpers.ts"

describe("write tool", () => {
  test("creates missing parent directories and reports a new file", async () => {
    const cwd = tempDir()
    const r = await runTool(write, { filePath: "a/b/c.txt", content: "hello\n" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(fs.readFileSync(path.join(cwd, "a/b/c.txt"), "utf8")).toBe("hello\n")
    expect(r.success.output).toContain("Created")
    expect(r.success.metadata).toEqual({ filePath: path.join(cwd, "a/b/c.txt"), exists: false })
  })

  test("overwrites an existing file and says so", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "f.txt"), "old")
    const r = await runTool(write, { filePath: "f.txt", content: "new" }, { cwd })
    expect(r.success.output).toContain("Overwrote")
    expect(r.success.metadata.exists).toBe(true)
    expect(fs.readFileSync(path.join(cwd, "f.txt"), "utf8")).toBe("new")
  })

  test("writing outside the working directory is stopped by external_directory", async () => {
    const cwd = tempDir()
    const outside = tempDir()
    const r = await runTool(write, { filePath: path.join(outside, "x.txt"), content: "x" }, { cwd, nonInteractive: "deny" })
    expect(r.failure.reason).toBe("permission")
    expect(fs.existsSync(path.join(outside, "x.txt"))).toBe(false)
  })

  test("an edit deny rule on the path stops the write", async () => {
    const cwd = tempDir()
    const r = await runTool(write, { filePath: "locked.txt", content: "x" }, {
      cwd,
      rules: [{ permission: "*", pattern: "*", action: "allow" }, { permission: "edit", pattern: "*locked.txt", action: "deny" }]
    })
    expect(r.failure.reason).toBe("permission")
    expect(fs.existsSync(path.join(cwd, "locked.txt"))).toBe(false)
  })
})
