// `reins debug edit` and `reins debug apply-patch` as a person or a script would use them.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const scratch = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-debug-edit-")))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, REINS_DATA_DIR: dir, NO_COLOR: "1" }
  return { dir, run: (args: ReadonlyArray<string>, stdin = "") => reins(args, { cwd: dir, dataDir: dir, env }, stdin) }
}

describe("reins debug edit", () => {
  test("prints the result and the matcher without writing; --write writes, keeping CRLF", async () => {
    const { dir, run } = scratch()
    const file = path.join(dir, "a.ts")
    fs.writeFileSync(file, "a\r\nconst   x  =  5;\r\nb\r\n")
    const shown = await run(["debug", "edit", "a.ts", "--old", "const x = 5;", "--new", "const x = 6;"])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toBe("a\r\nconst x = 6;\r\nb\r\n")
    expect(shown.stderr).toContain("matched by the whitespace-normalized matcher: 1 replacement at line 2; not written")
    expect(fs.readFileSync(file, "utf8")).toBe("a\r\nconst   x  =  5;\r\nb\r\n")
    const written = await run(["debug", "edit", "a.ts", "--old", "const x = 5;", "--new", "const x = 6;", "--write", "--format", "json"])
    expect(written.code).toBe(0)
    expect(JSON.parse(written.stdout)).toMatchObject({ ok: true, replacer: "whitespace-normalized", replacements: 1, lines: [2], written: true })
    expect(fs.readFileSync(file, "utf8")).toBe("a\r\nconst x = 6;\r\nb\r\n")
  })

  test("--old-file/--new-file and --all", async () => {
    const { dir, run } = scratch()
    fs.writeFileSync(path.join(dir, "b.txt"), "foo bar foo baz foo")
    fs.writeFileSync(path.join(dir, "old.txt"), "foo")
    fs.writeFileSync(path.join(dir, "new.txt"), "qux")
    const r = await run(["debug", "edit", "b.txt", "--old-file", "old.txt", "--new-file", "new.txt", "--all"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("qux bar qux baz qux")
    expect(r.stderr).toContain("3 replacements")
  })

  test("no match exits 1 with the model's error; bad flags exit 2", async () => {
    const { dir, run } = scratch()
    fs.writeFileSync(path.join(dir, "c.txt"), "test\ntest\ndifferent\ntest\n")
    const multiple = await run(["debug", "edit", "c.txt", "--old", "test", "--new", "x", "--format", "json"])
    expect(multiple.code).toBe(1)
    expect(JSON.parse(multiple.stdout)).toMatchObject({ ok: false, reason: "multiple" })
    const missing = await run(["debug", "edit", "c.txt", "--old", "absent words", "--new", "x"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("Could not find oldString in c.txt")
    const both = await run(["debug", "edit", "c.txt", "--old", "a", "--old-file", "x", "--new", "y"])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("either --old or --old-file")
    const noFile = await run(["debug", "edit", "nope.txt", "--old", "a", "--new", "b"])
    expect(noFile.code).toBe(2)
    expect(noFile.stderr).toContain("no such file")
    expect(fs.readFileSync(path.join(dir, "c.txt"), "utf8")).toBe("test\ntest\ndifferent\ntest\n")
  })
})

describe("reins debug apply-patch", () => {
  const patch = [
    "*** Begin Patch",
    "*** Update File: src/a.txt",
    "@@",
    " one",
    "-two",
    "+TWO",
    " three",
    "*** Add File: docs/new.md",
    "+# New",
    "*** End Patch",
    ""
  ].join("\n")

  test("--dry-run checks and writes nothing; a patch from stdin with --cwd applies", async () => {
    const { dir, run } = scratch()
    const work = path.join(dir, "work")
    fs.mkdirSync(path.join(work, "src"), { recursive: true })
    fs.writeFileSync(path.join(work, "src/a.txt"), "one\ntwo\nthree\n")
    fs.writeFileSync(path.join(dir, "change.patch"), patch)
    const dry = await run(["debug", "apply-patch", "--cwd", "work", "--dry-run", "change.patch"])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain("Would apply (dry run, nothing written): M src/a.txt, A docs/new.md")
    expect(fs.readFileSync(path.join(work, "src/a.txt"), "utf8")).toBe("one\ntwo\nthree\n")
    expect(fs.existsSync(path.join(work, "docs"))).toBe(false)
    const applied = await run(["debug", "apply-patch", "--cwd", "work", "--format", "json", "-"], patch)
    expect(applied.code).toBe(0)
    const out = JSON.parse(applied.stdout)
    expect(out).toMatchObject({ ok: true, applied: true })
    expect(out.files.map((f: { type: string }) => f.type)).toEqual(["update", "add"])
    expect(out.files[0].diff).toContain("-two\n+TWO")
    expect(fs.readFileSync(path.join(work, "src/a.txt"), "utf8")).toBe("one\nTWO\nthree\n")
    expect(fs.readFileSync(path.join(work, "docs/new.md"), "utf8")).toBe("# New\n")
  })

  test("a hunk that does not apply exits 1 naming the file and hunk, and changes nothing", async () => {
    const { dir, run } = scratch()
    fs.mkdirSync(path.join(dir, "src"))
    fs.writeFileSync(path.join(dir, "src/a.txt"), "one\nchanged\nthree\n")
    fs.writeFileSync(path.join(dir, "change.patch"), patch)
    const r = await run(["debug", "apply-patch", "change.patch"])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("Hunk 1 of the update of src/a.txt")
    expect(fs.readFileSync(path.join(dir, "src/a.txt"), "utf8")).toBe("one\nchanged\nthree\n")
    expect(fs.existsSync(path.join(dir, "docs"))).toBe(false)
    const missing = await run(["debug", "apply-patch", "nope.patch"])
    expect(missing.code).toBe(2)
    const badCwd = await run(["debug", "apply-patch", "--cwd", "nowhere", "change.patch"])
    expect(badCwd.code).toBe(2)
    expect(badCwd.stderr).toContain("is not a directory")
  })
})
