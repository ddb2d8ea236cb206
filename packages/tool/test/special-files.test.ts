// Issue 13 item 10 (read): a FIFO, socket or device is refused, never opened and waited on.
import { describe, expect, test } from "bun:test"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { grep } from "../src/builtin/grep.ts"
import { read } from "../src/builtin/read.ts"
import { write } from "../src/builtin/write.ts"
import { runTool, tempDir } from "./helpers.ts"

const mkfifo = (file: string) => expect(spawnSync("mkfifo", [file]).status).toBe(0)

describe("non-regular files", () => {
  test("read refuses a FIFO, a symlink to one, and a device, with a clear message", async () => {
    const cwd = tempDir()
    mkfifo(path.join(cwd, "pipe"))
    fs.symlinkSync(path.join(cwd, "pipe"), path.join(cwd, "link"))
    fs.symlinkSync("/dev/zero", path.join(cwd, "zero"))
    const rules = [{ permission: "*", pattern: "*", action: "allow" as const }]
    for (const [file, kind] of [
      ["pipe", "a FIFO (named pipe)"],
      ["link", "a FIFO (named pipe)"],
      ["zero", "a character device"]
    ] as const) {
      const r = await runTool(read, { filePath: file }, { cwd, rules })
      expect(r._tag).toBe("Failure")
      expect(r.failure.message).toContain(`is ${kind}, not a regular file`)
    }
  }, 30_000)

  test("grep refuses a FIFO given as the path, and a walk passes FIFOs by without opening them", async () => {
    const cwd = tempDir()
    mkfifo(path.join(cwd, "pipe"))
    fs.writeFileSync(path.join(cwd, "a.txt"), "needle\n")
    const direct = await runTool(grep, { pattern: "needle", path: "pipe" }, { cwd })
    expect(direct.failure.message).toContain("is a FIFO (named pipe), not a regular file")
    const walk = await runTool(grep, { pattern: "needle", include_ignored: true }, { cwd })
    expect(walk.success.output).toBe(`Found 1 match\n\n${path.join(cwd, "a.txt")}:\n  Line 1: needle`)
    const named = await runTool(grep, { pattern: "needle", include: "pipe" }, { cwd })
    expect(named.success.output).toBe("No files found")
  }, 30_000)

  test("write refuses a FIFO, a symlink to one, and a device instead of waiting for a reader; a regular file is still written", async () => {
    const cwd = tempDir()
    mkfifo(path.join(cwd, "pipe"))
    fs.symlinkSync(path.join(cwd, "pipe"), path.join(cwd, "link"))
    fs.symlinkSync("/dev/null", path.join(cwd, "null"))
    const rules = [{ permission: "*", pattern: "*", action: "allow" as const }]
    for (const [file, kind] of [
      ["pipe", "a FIFO (named pipe)"],
      ["link", "a FIFO (named pipe)"],
      ["null", "a character device"]
    ] as const) {
      const r = await runTool(write, { filePath: file, content: "x" }, { cwd, rules })
      expect(r._tag).toBe("Failure")
      expect(r.failure.message).toContain(`is ${kind}, not a regular file, and is not written`)
    }
    expect(fs.statSync(path.join(cwd, "pipe")).isFIFO()).toBe(true)
    const ok = await runTool(write, { filePath: "a.txt", content: "x" }, { cwd, rules })
    expect(ok._tag).toBe("Success")
    expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("x")
  }, 30_000)
})
