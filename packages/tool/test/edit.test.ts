import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { lineDiff } from "../src/builtin/Diff.ts"
import { edit } from "../src/builtin/edit.ts"
import { runTool, tempDir } from "./helpers.ts"

const setup = (content: string) => {
  const cwd = tempDir()
  const file = path.join(cwd, "f.ts")
  fs.writeFileSync(file, content)
  return { cwd, file, contents: () => fs.readFileSync(file, "utf8") }
}

describe("edit tool", () => {
  test("replaces an exact unique match and returns a diff", async () => {
    const { cwd, contents } = setup("const a = 1\nconst b = 2\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "const b = 2", newString: "const b = 3" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(contents()).toBe("const a = 1\nconst b = 3\n")
    expect(r.success.metadata.replacer).toBe("exact")
    expect(r.success.output).toContain("exact")
    expect(r.success.metadata.diff).toContain("-const b = 2\n+const b = 3")
  })

  test("falls back to line-trimmed when only the indentation differs", async () => {
    const { cwd, contents } = setup("function f() {\n    if (x) {\n        go()\n    }\n}\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "if (x) {\n  go()\n}", newString: "    if (y) {\n        stop()\n    }" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.metadata.replacer).toBe("line-trimmed")
    expect(contents()).toBe("function f() {\n    if (y) {\n        stop()\n    }\n}\n")
  })

  test("several matches without replaceAll is an error and leaves the file alone", async () => {
    const { cwd, contents } = setup("foo bar foo baz foo")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "foo", newString: "qux" }, { cwd })
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("Found multiple matches for oldString")
    expect(r.failure.message).toContain("at line 1 (3 matches)")
    expect(contents()).toBe("foo bar foo baz foo")
  })

  test("replaceAll replaces every occurrence", async () => {
    const { cwd, contents } = setup("foo bar foo baz foo")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "foo", newString: "qux", replaceAll: true }, { cwd })
    expect(contents()).toBe("qux bar qux baz qux")
    expect(r.success.metadata.replacements).toBe(3)
  })

  test("identical strings and a missing oldString are errors a model can act on", async () => {
    const { cwd } = setup("abc\n")
    const same = await runTool(edit, { filePath: "f.ts", oldString: "abc", newString: "abc" }, { cwd })
    expect(same.failure.message).toContain("identical")
    const missing = await runTool(edit, { filePath: "f.ts", oldString: "xyz", newString: "q" }, { cwd })
    expect(missing.failure.message).toBe(
      `Could not find oldString in ${path.join(cwd, "f.ts")}. No part of the file resembles it. Re-read the file with the read tool and copy the exact text, including whitespace.`
    )
  })

  test("a CRLF file stays CRLF when the strings use LF", async () => {
    const { cwd, contents } = setup("one\r\ntwo\r\nthree\r\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "one\ntwo", newString: "uno\ndos\nmas" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(contents()).toBe("uno\r\ndos\r\nmas\r\nthree\r\n")
  })

  test("a BOM is kept, and so is the file's final-newline state", async () => {
    const bom = setup("\uFEFFfirst\nsecond\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "second\n", newString: "2nd" }, { cwd: bom.cwd })
    expect(r._tag).toBe("Success")
    expect(fs.readFileSync(bom.file)).toEqual(Buffer.from("\uFEFFfirst\n2nd\n"))
    const bare = setup("one\r\ntwo")
    const added = await runTool(edit, { filePath: "f.ts", oldString: "two", newString: "2\n" }, { cwd: bare.cwd })
    expect(added._tag).toBe("Success")
    expect(bare.contents()).toBe("one\r\n2")
  })

  test("a file with mixed line endings keeps every untouched line's ending", async () => {
    const { cwd, contents } = setup("a\r\nb\nc\r\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "a", newString: "A" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(contents()).toBe("A\r\nb\nc\r\n")
  })

  test("a CRLF file matched by a fuzzy replacer stays CRLF, and the result names the replacer and line", async () => {
    const { cwd, contents } = setup("a\r\n    if (x) {\r\n        go()\r\n    }\r\nb\r\n")
    const r = await runTool(edit, { filePath: "f.ts", oldString: "if (x) {\n    go()\n}", newString: "if (y) {\n    stop()\n}" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(contents()).toBe("a\r\n    if (y) {\r\n        stop()\r\n    }\r\nb\r\n")
    expect(r.success.output).toContain("at line 2 (matched by the line-trimmed matcher)")
    expect(r.success.metadata.diff).toContain("-    if (x) {\n-        go()")
  })

  test("not found: the error shows the nearest lines with their numbers and leaves the file alone", async () => {
    const body = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1} of the file`).join("\n")}\n`
    const { cwd, contents } = setup(body)
    const r = await runTool(
      edit,
      { filePath: "f.ts", oldString: "line 12 of the file\nsomething else entirely here\nline 14 of the file", newString: "x" },
      { cwd }
    )
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("lines 12-14")
    expect(r.failure.message).toContain("00013| line 13 of the file")
    expect(contents()).toBe(body)
  })

  test("an empty oldString creates a new file but refuses a non-empty one", async () => {
    const cwd = tempDir()
    const created = await runTool(edit, { filePath: "new/n.ts", oldString: "", newString: "export {}\n" }, { cwd })
    expect(created._tag).toBe("Success")
    expect(fs.readFileSync(path.join(cwd, "new/n.ts"), "utf8")).toBe("export {}\n")
    const refused = await runTool(edit, { filePath: "new/n.ts", oldString: "", newString: "x" }, { cwd })
    expect(refused.failure.message).toContain("not empty")
    expect(fs.readFileSync(path.join(cwd, "new/n.ts"), "utf8")).toBe("export {}\n")
  })

  test("concurrent edits of one file both land", async () => {
    const { cwd, contents } = setup("a\nb\n")
    await Promise.all([
      runTool(edit, { filePath: "f.ts", oldString: "a", newString: "A" }, { cwd }),
      runTool(edit, { filePath: "f.ts", oldString: "b", newString: "B" }, { cwd })
    ])
    expect(contents()).toBe("A\nB\n")
  })

  test("editing outside the working directory is denied non-interactively", async () => {
    const cwd = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "o.ts"), "x")
    const r = await runTool(edit, { filePath: path.join(outside, "o.ts"), oldString: "x", newString: "y" }, { cwd, nonInteractive: "deny" })
    expect(r.failure.reason).toBe("permission")
    expect(fs.readFileSync(path.join(outside, "o.ts"), "utf8")).toBe("x")
  })
})

describe("lineDiff", () => {
  test("hunks carry context and line numbers", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n")
    const after = before.replace("l10", "L10")
    expect(lineDiff("f", before, after)).toBe("--- f\n+++ f\n@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+L10\n l11\n l12\n l13")
    expect(lineDiff("f", "same", "same")).toBe("")
  })
})
