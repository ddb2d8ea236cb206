import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { read } from "../src/builtin/read.ts"
import { runTool, tempDir } from "./helpers.ts"

const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")}\n`

describe("read tool", () => {
  test("numbers lines with 5-digit padding and reports the end of file", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "a.txt"), "alpha\nbeta\n")
    const r = await runTool(read, { filePath: "a.txt" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.output).toBe("<file>\n00001| alpha\n00002| beta\n\n(End of file - total 2 lines)\n</file>")
  })

  test("offset is the 1-based first line and limit bounds the lines", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "n.txt"), lines(10))
    const r = await runTool(read, { filePath: path.join(cwd, "n.txt"), offset: 4, limit: 3 }, { cwd })
    expect(r.success.output).toContain("00004| line 4\n00005| line 5\n00006| line 6\n")
    expect(r.success.output).not.toContain("line 3\n")
    expect(r.success.output).not.toContain("line 7")
    expect(r.success.output).toContain("(File has more lines. Use 'offset' to read beyond line 6)")
  })

  test("defaults to 2000 lines", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "big.txt"), lines(2500))
    const r = await runTool(read, { filePath: "big.txt" }, { cwd })
    expect(r.success.output).toContain("02000| line 2000")
    expect(r.success.output).not.toContain("02001|")
    expect(r.success.output).toContain("beyond line 2000)")
  })

  test("cuts long lines and caps total bytes", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "long.txt"), `${"x".repeat(3000)}\nshort\n`)
    const r = await runTool(read, { filePath: "long.txt" }, { cwd })
    expect(r.success.output).toContain(`00001| ${"x".repeat(2000)}…\n00002| short`)
    fs.writeFileSync(path.join(cwd, "wide.txt"), Array.from({ length: 100 }, () => "y".repeat(1000)).join("\n"))
    const w = await runTool(read, { filePath: "wide.txt" }, { cwd })
    expect(Buffer.byteLength(w.success.output)).toBeLessThan(52_000)
    expect(w.success.output).toMatch(/\(Output capped at 51200 bytes\. Use 'offset' to read beyond line (\d+)\)/)
    expect(w.success.output).not.toContain("00100|")
  })

  test("a missing file suggests similar names in the same directory", async () => {
    const cwd = tempDir()
    for (const name of ["config.ts", "config.test.ts", "unrelated.md"]) fs.writeFileSync(path.join(cwd, name), "x")
    const r = await runTool(read, { filePath: "confg.ts" }, { cwd })
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("File not found")
    expect(r.failure.message).toContain(path.join(cwd, "config.ts"))
    expect(r.failure.message).not.toContain("unrelated.md")
  })

  test("a directory points to list; a binary file is refused", async () => {
    const cwd = tempDir()
    fs.mkdirSync(path.join(cwd, "sub"))
    const d = await runTool(read, { filePath: "sub" }, { cwd })
    expect(d.failure.message).toContain("Use the list tool")
    fs.writeFileSync(path.join(cwd, "blob.dat2"), Buffer.from([65, 0, 66]))
    const b = await runTool(read, { filePath: "blob.dat2" }, { cwd })
    expect(b.failure.message).toContain("binary")
  })

  test(".env needs approval (denied non-interactively) but .env.example is allowed", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, ".env"), "SECRET=1\n")
    fs.writeFileSync(path.join(cwd, ".env.example"), "SECRET=\n")
    const denied = await runTool(read, { filePath: ".env" }, { cwd, nonInteractive: "deny" })
    expect(denied._tag).toBe("Failure")
    expect(denied.failure.reason).toBe("permission")
    const allowed = await runTool(read, { filePath: ".env.example" }, { cwd, nonInteractive: "deny" })
    expect(allowed.success.output).toContain("00001| SECRET=")
  })

  test("a file outside the working directory asks external_directory", async () => {
    const cwd = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "o.txt"), "out\n")
    const denied = await runTool(read, { filePath: path.join(outside, "o.txt") }, { cwd, nonInteractive: "deny" })
    expect(denied.failure.reason).toBe("permission")
    expect(denied.failure.message).toContain("external_directory")
    expect(denied.failure.message).toContain(`${outside}/*`)
    const allowed = await runTool(read, { filePath: path.join(outside, "o.txt") }, { cwd, nonInteractive: "allow" })
    expect(allowed.success.output).toContain("00001| out")
  })
})
