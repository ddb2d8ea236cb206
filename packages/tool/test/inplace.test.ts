// Issue 13 items 16–17: edit, write and apply_patch change a file where it is (through symlinks,
// keeping its mode, its hard links and every byte they do not touch), whole or not at all, and
// refuse read-only files.
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { applyPatch } from "../src/builtin/apply_patch.ts"
import { edit } from "../src/builtin/edit.ts"
import { write } from "../src/builtin/write.ts"
import { runTool, tempDir } from "./helpers.ts"

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")
const applied = (cwd: string, patchText: string) => runTool(applyPatch, { patchText }, { cwd })
const edited = (cwd: string, filePath: string, oldString: string, newString: string) => runTool(edit, { filePath, oldString, newString }, { cwd })

/** A project with `real.txt`, a symlink `link.txt` to it, and a file kept outside the project behind `out.txt`. */
const linked = (content: string) => {
  const cwd = tempDir()
  fs.writeFileSync(path.join(cwd, "real.txt"), content)
  fs.symlinkSync("real.txt", path.join(cwd, "link.txt"))
  return { cwd, real: () => fs.readFileSync(path.join(cwd, "real.txt"), "utf8") }
}

// Each tool, as a function that changes line "b" to "B" in a file.
const tools = [
  ["edit", (cwd: string, file: string) => edited(cwd, file, "b", "B")],
  [
    "write",
    async (cwd: string, file: string) => {
      const now = fs.readFileSync(path.join(cwd, file), "utf8")
      return runTool(write, { filePath: file, content: now.replace("b\r\n", "B\r\n").replace(/^(\uFEFF?a\n)b\n/, "$1B\n") }, { cwd })
    }
  ],
  ["apply_patch", (cwd: string, file: string) => applied(cwd, patch(`*** Update File: ${file}`, "@@", " a", "-b", "+B"))]
] as const

describe.each(tools)("%s changes the file where it is", (_name, change) => {
  test("through a symlink: the link stays a link and its target changes", async () => {
    const { cwd, real } = linked("a\nb\nc\n")
    const r = await change(cwd, "link.txt")
    expect(r._tag).toBe("Success")
    expect(fs.lstatSync(path.join(cwd, "link.txt")).isSymbolicLink()).toBe(true)
    expect(fs.readlinkSync(path.join(cwd, "link.txt"))).toBe("real.txt")
    expect(real()).toBe("a\nB\nc\n")
  })

  test("a file with hard links is rewritten in place: the mode, the inode and every link keep it", async () => {
    const cwd = tempDir()
    const file = path.join(cwd, "run.sh")
    fs.writeFileSync(file, "a\nb\nc\n")
    fs.chmodSync(file, 0o751)
    fs.linkSync(file, path.join(cwd, "hard.sh"))
    const inode = fs.statSync(file).ino
    expect((await change(cwd, "run.sh"))._tag).toBe("Success")
    expect(fs.statSync(file).mode & 0o7777).toBe(0o751)
    expect(fs.statSync(file).ino).toBe(inode)
    expect(fs.readFileSync(path.join(cwd, "hard.sh"), "utf8")).toBe("a\nB\nc\n")
  })

  test("replaces a file whole (a reader of the old file keeps the old bytes; no temp file is left), keeping mode and owner", async () => {
    const { cwd, real } = linked("a\nb\nc\n")
    const file = path.join(cwd, "real.txt")
    fs.chmodSync(file, 0o640)
    const before = fs.openSync(file, "r")
    expect((await change(cwd, "link.txt"))._tag).toBe("Success")
    // a crash mid-write could only have left the temp file, never a half-written real.txt
    expect(fs.readFileSync(before, "utf8")).toBe("a\nb\nc\n")
    fs.closeSync(before)
    expect(real()).toBe("a\nB\nc\n")
    expect(fs.statSync(file).mode & 0o7777).toBe(0o640)
    expect(fs.readdirSync(cwd).sort()).toEqual(["link.txt", "real.txt"])
  })

  test.each([
    ["0444", 0o444],
    ["0400", 0o400],
    ["0555", 0o555]
  ])("a read-only file (mode %s) is refused and left as it was", async (_mode, mode) => {
    const cwd = tempDir()
    const file = path.join(cwd, "ro.txt")
    fs.writeFileSync(file, "a\nb\nc\n")
    fs.chmodSync(file, mode)
    const r = await change(cwd, "ro.txt")
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("read-only")
    expect(r.failure.message).toContain("nothing was changed")
    expect(fs.readFileSync(file, "utf8")).toBe("a\nb\nc\n")
    expect(fs.statSync(file).mode & 0o7777).toBe(mode)
  })

  test("a read-only file behind a symlink is refused too", async () => {
    const { cwd, real } = linked("a\nb\nc\n")
    fs.chmodSync(path.join(cwd, "real.txt"), 0o444)
    expect((await change(cwd, "link.txt"))._tag).toBe("Failure")
    expect(real()).toBe("a\nb\nc\n")
  })

  // Item 17: a `\r` inside a line's content is part of the line, not of its ending.
  test.each([
    ["a stray CR before CRLF", "a\r\nb\r\nfoo\r\r\nc\r\n"],
    ["two stray CRs", "a\r\nb\r\nfoo\r\r\r\nc\r\n"],
    ["a CR inside a line", "a\r\nb\r\nf\roo\r\nc\r\n"],
    ["a stray CR on the last line without a newline", "a\r\nb\r\nc\r"],
    ["a stray CR with a BOM", "\uFEFFa\r\nb\r\nfoo\r\r\nc\r\n"]
  ])("%s: untouched lines stay byte-identical", async (_label, content) => {
    const cwd = tempDir()
    const file = path.join(cwd, "crlf.txt")
    fs.writeFileSync(file, content)
    expect((await change(cwd, "crlf.txt"))._tag).toBe("Success")
    expect(fs.readFileSync(file, "latin1")).toBe(Buffer.from(content.replace("b\r\n", "B\r\n"), "utf8").toString("latin1"))
  })
})

describe("apply_patch in place, all or nothing", () => {
  test("a read-only file anywhere in the patch rejects the whole patch before any write", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "ok.txt"), "x\n")
    fs.writeFileSync(path.join(cwd, "ro.txt"), "y\n")
    fs.chmodSync(path.join(cwd, "ro.txt"), 0o444)
    const r = await applied(cwd, patch("*** Update File: ok.txt", "-x", "+X", "*** Update File: ro.txt", "-y", "+Y", "*** Add File: new.txt", "+n"))
    expect(r._tag).toBe("Failure")
    expect(fs.readFileSync(path.join(cwd, "ok.txt"), "utf8")).toBe("x\n")
    expect(fs.existsSync(path.join(cwd, "new.txt"))).toBe(false)
  })

  test("a read-only file cannot be deleted or moved by a patch", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "ro.txt"), "y\n")
    fs.chmodSync(path.join(cwd, "ro.txt"), 0o444)
    expect((await applied(cwd, patch("*** Delete File: ro.txt")))._tag).toBe("Failure")
    expect((await applied(cwd, patch("*** Update File: ro.txt", "*** Move to: moved.txt", "-y", "+Y")))._tag).toBe("Failure")
    expect(fs.readFileSync(path.join(cwd, "ro.txt"), "utf8")).toBe("y\n")
    expect(fs.existsSync(path.join(cwd, "moved.txt"))).toBe(false)
  })

  test("deleting a symlink removes the link, not its target", async () => {
    const { cwd, real } = linked("keep\n")
    expect((await applied(cwd, patch("*** Delete File: link.txt")))._tag).toBe("Success")
    expect(fs.existsSync(path.join(cwd, "link.txt"))).toBe(false)
    expect(real()).toBe("keep\n")
  })
})
