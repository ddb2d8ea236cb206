import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Sink } from "../src/index.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-sink-"))

describe("Sink", () => {
  test("small output stays in memory and never creates a file", () => {
    const sink = new Sink(path.join(dir, "small.txt"), { memoryBytes: 1024, keepBytes: 256 })
    sink.write(Buffer.from("a\nb"))
    sink.write(Buffer.from("c\n"))
    const c = sink.close()
    expect(c).toMatchObject({ text: "a\nbc\n", totalBytes: 5, totalLines: 2 })
    expect(c.file).toBeUndefined()
    expect(fs.existsSync(path.join(dir, "small.txt"))).toBe(false)
  })

  test("large output goes to the file in order; only whole lines of head and tail stay", () => {
    const file = path.join(dir, "large.txt")
    const sink = new Sink(file, { memoryBytes: 4096, keepBytes: 512 })
    let expected = ""
    for (let i = 0; i < 10_000; i++) {
      const line = `line ${i}\n`
      expected += line
      // odd chunking: split each line in two writes
      sink.write(Buffer.from(line.slice(0, 3)))
      sink.write(Buffer.from(line.slice(3)))
    }
    const c = sink.close()
    expect(c.text).toBeUndefined()
    expect(c.file).toBe(file)
    expect(fs.readFileSync(file, "utf8")).toBe(expected)
    expect(c.totalLines).toBe(10_000)
    expect(c.totalBytes).toBe(Buffer.byteLength(expected))
    expect(c.head.startsWith("line 0\nline 1\n")).toBe(true)
    expect(c.head.endsWith("\n")).toBe(true)
    expect(c.head.length).toBeLessThanOrEqual(512)
    expect(c.tail.endsWith("line 9999\n")).toBe(true)
    expect(c.tail.startsWith("line ")).toBe(true)
    expect(c.tail.length).toBeLessThanOrEqual(512)
  })

  test("a full disk while spilling is reported and counting goes on", () => {
    const file = path.join(dir, "full.txt")
    fs.symlinkSync("/dev/full", file)
    const sink = new Sink(file, { memoryBytes: 100, keepBytes: 50 })
    for (let i = 0; i < 100; i++) sink.write(Buffer.from(`row ${i}\n`))
    const c = sink.close()
    expect(c.file).toBeUndefined()
    expect(c.error?.reason).toBe("disk-full")
    expect(c.error?.message).toContain("Free some disk space")
    expect(c.totalLines).toBe(100)
    expect(c.tail.endsWith("row 99\n")).toBe(true)
  })

  test("a multibyte character split across the kept head never decodes to garbage", () => {
    const sink = new Sink(path.join(dir, "mb.txt"), { memoryBytes: 64, keepBytes: 33 })
    sink.write(Buffer.from("€".repeat(100))) // one 300-byte line, no newline
    const c = sink.close()
    expect(c.head).not.toContain("\uFFFD")
    expect(c.tail).not.toContain("\uFFFD")
    expect(c.head.length).toBe(11)
    expect(c.totalLines).toBe(1)
  })
})
