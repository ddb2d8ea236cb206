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
    const target = path.join(cwd, "a/b/c.txt")
    expect(r.success.metadata).toEqual({ filePath: target, exists: false, diff: `--- ${target}\n+++ ${target}\n@@ -0,0 +1,1 @@\n+hello` })
  })

  test("overwrites an existing file and says so", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "f.txt"), "old")
    const r = await runTool(write, { filePath: "f.txt", content: "new" }, { cwd })
    expect(r.success.output).toContain("Overwrote")
    expect(r.success.metadata.exists).toBe(true)
    expect(fs.readFileSync(path.join(cwd, "f.txt"), "utf8")).toBe("new")
  })

  test("the metadata's diff is from the old text to the new, line endings and BOM aside", async () => {
    const cwd = tempDir()
    const target = path.join(cwd, "f.txt")
    fs.writeFileSync(target, "\ufeffone\r\ntwo\r\nthree\r\n")
    const r = await runTool(write, { filePath: "f.txt", content: "one\nTWO\nthree\nfour\n" }, { cwd })
    expect(r.success.metadata.diff).toBe([`--- ${target}`, `+++ ${target}`, "@@ -1,3 +1,4 @@", " one", "-two", "+TWO", " three", "+four"].join("\n"))
  })

  test("replacing a binary file or an identical text gives no diff lines", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "b.bin"), Buffer.from([0, 1, 2, 3]))
    fs.writeFileSync(path.join(cwd, "same.txt"), "same\n")
    const binary = await runTool(write, { filePath: "b.bin", content: "text now\n" }, { cwd })
    expect(binary.success.metadata.diff).toBeUndefined()
    expect(binary.success.metadata.exists).toBe(true)
    const same = await runTool(write, { filePath: "same.txt", content: "same\n" }, { cwd })
    expect(same.success.metadata.diff).toBe("")
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
    const r = await runTool(
      write,
      { filePath: "locked.txt", content: "x" },
      {
        cwd,
        rules: [
          { permission: "*", pattern: "*", action: "allow" },
          { permission: "edit", pattern: "*locked.txt", action: "deny" }
        ]
      }
    )
    expect(r.failure.reason).toBe("permission")
    expect(fs.existsSync(path.join(cwd, "locked.txt"))).toBe(false)
  })
})
