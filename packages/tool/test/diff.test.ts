import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { diffStat, diffTexts, lineDiff } from "../src/builtin/Diff.ts"
import { edit } from "../src/builtin/edit.ts"
import { runTool, tempDir } from "./helpers.ts"

const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`)
const text = (lines: ReadonlyArray<string>, eol = "\n") => lines.map((line) => `${line}${eol}`).join("")

describe("lineDiff", () => {
  test("two changed lines in a 1,200-line file are +2 −2 in two small hunks, not the whole file", () => {
    const before = numbered(1200)
    const after = [...before]
    after[9] = "CHANGED 10"
    after[1100] = "CHANGED 1101"
    const diff = lineDiff("big.ts", text(before), text(after))
    expect(diffStat(diff)).toEqual({ added: 2, removed: 2 })
    const lines = diff.split("\n")
    expect(lines.filter((line) => line.startsWith("@@"))).toEqual(["@@ -7,7 +7,7 @@", "@@ -1098,7 +1098,7 @@"])
    // headers, two hunks of 3 context + 1 removed + 1 added + 3 context
    expect(lines).toHaveLength(2 + 2 * 9)
  })

  test("the 1,200-line edit through the edit tool carries that diff in its metadata", async () => {
    const cwd = tempDir()
    const before = numbered(1200)
    fs.writeFileSync(path.join(cwd, "big.ts"), text(before))
    const r = await runTool(edit, { filePath: "big.ts", oldString: "line 600\n", newString: "line six hundred\n" }, { cwd })
    expect(r._tag).toBe("Success")
    const diff = r.success.metadata.diff as string
    expect(diffStat(diff)).toEqual({ added: 1, removed: 1 })
    expect(diff).toContain("@@ -597,7 +597,7 @@\n line 597\n line 598\n line 599\n-line 600\n+line six hundred\n line 601")
  })

  test("insert at the top", () => {
    const diff = lineDiff("f", text(numbered(10)), text(["new", ...numbered(10)]))
    expect(diff).toBe("--- f\n+++ f\n@@ -1,3 +1,4 @@\n+new\n line 1\n line 2\n line 3")
  })

  test("delete at the end", () => {
    const diff = lineDiff("f", text(numbered(10)), text(numbered(8)))
    expect(diff).toBe("--- f\n+++ f\n@@ -6,5 +6,3 @@\n line 6\n line 7\n line 8\n-line 9\n-line 10")
  })

  test("whole-file replace removes every old line and adds every new one", () => {
    const diff = lineDiff("f", text(numbered(50)), text(numbered(40, 100)))
    expect(diffStat(diff)).toEqual({ added: 40, removed: 50 })
    expect(diff.split("\n")[2]).toBe("@@ -1,50 +1,40 @@")
  })

  test("a change too large to search is still one correct hunk", () => {
    const diff = lineDiff("f", text(numbered(5000)), text(numbered(5000, 10_000)))
    expect(diffStat(diff)).toEqual({ added: 5000, removed: 5000 })
    expect(diff.split("\n")[2]).toBe("@@ -1,5000 +1,5000 @@")
  })

  test("CRLF files diff by line, carriage returns ignored", () => {
    const before = numbered(20)
    const after = [...before]
    after[4] = "five"
    const diff = lineDiff("f", text(before, "\r\n"), text(after, "\r\n"))
    expect(diffStat(diff)).toEqual({ added: 1, removed: 1 })
    expect(diff).not.toContain("\r")
    expect(lineDiff("f", text(before, "\r\n"), text(before, "\n"))).toBe("")
  })

  test("no trailing newline is marked, and counted as a change of that line only", () => {
    const diff = lineDiff("f", "a\nb\nc", "a\nb\nd")
    expect(diff).toBe("--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+d\n\\ No newline at end of file")
    expect(diffStat(diff)).toEqual({ added: 1, removed: 1 })
    expect(diffTexts(diff)).toEqual({ oldText: "a\nb\nc", newText: "a\nb\nd" })
  })

  test("nothing changed, a new file and a deleted file", () => {
    expect(lineDiff("f", "same\n", "same\n")).toBe("")
    expect(lineDiff("f", "", "x\ny\n")).toBe("--- f\n+++ f\n@@ -0,0 +1,2 @@\n+x\n+y")
    expect(lineDiff("f", "x\ny\n", "")).toBe("--- f\n+++ f\n@@ -1,2 +0,0 @@\n-x\n-y")
  })
})

describe("reading diffs", () => {
  test("a removed line reading `-- x` and an added `++ y` are counted, not taken for file headers", () => {
    const diff = lineDiff("f", "keep\n-- x\n", "keep\n++ y\n")
    expect(diffStat(diff)).toEqual({ added: 1, removed: 1 })
    expect(diffTexts(diff)).toEqual({ oldText: "keep\n-- x", newText: "keep\n++ y" })
  })

  test("several files joined (apply_patch) are counted together; text that is no diff counts nothing", () => {
    const joined = `${lineDiff("a", "1\n", "2\n")}\n${lineDiff("b", "", "x\ny\n")}`
    expect(diffStat(joined)).toEqual({ added: 3, removed: 1 })
    expect(diffStat("@@ -1,5 +1,1 @@\n-x")).toEqual({ added: 0, removed: 0 })
    expect(diffTexts("not a diff")).toBeUndefined()
  })
})
