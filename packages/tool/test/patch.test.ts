import { describe, expect, test } from "bun:test"
import { Result } from "effect"
import { parsePatch, type FileOp, type Hunk, type HunkLine } from "../src/builtin/Patch.ts"
import { applyHunks, normalise, seekSequence } from "../src/builtin/PatchApply.ts"

const ops = (text: string): ReadonlyArray<FileOp> => {
  const r = parsePatch(text)
  if (Result.isFailure(r)) throw new Error(`expected a parse, got: ${r.failure.message}`)
  return r.success
}

const parseError = (text: string): string => {
  const r = parsePatch(text)
  if (Result.isSuccess(r)) throw new Error("expected a parse error")
  return r.failure.message
}

/** Hunk lines from their patch form: " context", "-removed", "+added". */
const L = (...lines: Array<string>): Array<HunkLine> => lines.map((l) => ({ kind: l[0] as HunkLine["kind"], text: l.slice(1) }))

const hunk = (lines: Array<string>, extra: Partial<Hunk> = {}): Hunk => ({ lines: L(...lines), endOfFile: false, line: 1, ...extra })

const apply = (text: string, hunks: ReadonlyArray<Hunk>) => {
  const r = applyHunks(text, hunks, "f.ts")
  return Result.isSuccess(r) ? { text: r.success.text, fuzz: r.success.fuzz } : { error: r.failure.message }
}

describe("parsePatch", () => {
  test("reads add, delete and update-with-move operations with their hunks", () => {
    const parsed = ops(
      [
        "*** Begin Patch",
        "*** Add File: a/new.ts",
        "+one",
        "+two",
        "*** Delete File: old.ts",
        "*** Update File: x.ts",
        "*** Move to: y/x.ts",
        "@@ function f() {",
        " keep",
        "-gone",
        "+came",
        "@@",
        "-tail",
        "*** End of File",
        "*** End Patch"
      ].join("\n")
    )
    expect(parsed).toEqual([
      { type: "add", path: "a/new.ts", lines: ["one", "two"] },
      { type: "delete", path: "old.ts" },
      {
        type: "update",
        path: "x.ts",
        movePath: "y/x.ts",
        hunks: [
          { header: "function f() {", lines: L(" keep", "-gone", "+came"), endOfFile: false, line: 8 },
          { lines: L("-tail"), endOfFile: true, line: 12 }
        ]
      }
    ])
  })

  test("the first hunk may omit @@, and a blank hunk line is an empty context line", () => {
    const [op] = ops("*** Begin Patch\n*** Update File: f\n a\n\n-b\n+c\n*** End Patch")
    expect(op).toEqual({ type: "update", path: "f", hunks: [{ lines: L(" a", " ", "-b", "+c"), endOfFile: false, line: 3 }] })
  })

  test("tolerates padded markers, a heredoc wrapper and CRLF", () => {
    const text = "apply_patch <<'EOF'\r\n  *** Begin Patch  \r\n   *** Update File: f.ts   \r\n  @@   \r\n-a\r\n+b\r\n  *** End Patch \r\nEOF\r\n"
    expect(ops(text)).toEqual([{ type: "update", path: "f.ts", hunks: [{ lines: L("-a", "+b"), endOfFile: false, line: 4 }] }])
  })

  test("a missing End Patch is tolerated, dropping a heredoc terminator and trailing blank lines", () => {
    const parsed = ops("cat <<EOF | apply_patch\n*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\nEOF\n\n")
    expect(parsed).toEqual([{ type: "update", path: "f", hunks: [{ lines: L("-a", "+b"), endOfFile: false, line: 4 }] }])
  })

  test("blank lines between operations are spacing, not context", () => {
    const parsed = ops("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n\n\n*** Delete File: g\n*** End Patch")
    expect(parsed[0]).toEqual({ type: "update", path: "f", hunks: [{ lines: L("-a", "+b"), endOfFile: false, line: 3 }] })
    expect(parsed[1]).toEqual({ type: "delete", path: "g" })
  })

  test("a unified-diff range on the @@ line is dropped, keeping the section text", () => {
    const [op] = ops("*** Begin Patch\n*** Update File: f\n@@ -3,4 +3,5 @@ class A {\n-a\n+b\n*** End Patch")
    expect(op?.type === "update" && op.hunks[0]?.header).toBe("class A {")
  })

  test("errors: empty, no Begin, no operations", () => {
    expect(parseError("   \n")).toContain("The patch is empty")
    expect(parseError("*** Update File: f\n-a\n+b\n*** End Patch")).toContain('does not contain a "*** Begin Patch" line')
    expect(parseError("*** Begin Patch\n*** End Patch")).toContain("contains no file operations")
  })

  test("an invalid operation header names the patch line and the valid headers", () => {
    const message = parseError("*** Begin Patch\n*** Add File: a\n+x\n*** Frobnicate File: x\n*** End Patch")
    expect(message).toContain('at line 4 of the patch: "*** Frobnicate File: x"')
    expect(message).toContain("*** Add File: <path>")
    expect(message).toContain("*** Update File: <path>")
  })

  test("an unprefixed line in a hunk names the file, hunk and patch line", () => {
    const message = parseError("*** Begin Patch\n*** Update File: f.ts\n@@\n a\n@@\n b\nnot prefixed\n*** End Patch")
    expect(message).toContain('Invalid line in hunk 2 of the update of f.ts, at line 7 of the patch: "not prefixed"')
    expect(message).toContain("Context lines need a leading space")
  })

  test("an update with no hunks, or an empty hunk, is an error", () => {
    expect(parseError("*** Begin Patch\n*** Update File: f.ts\n*** End Patch")).toContain("The update of f.ts (line 2 of the patch) has no hunks")
    expect(parseError("*** Begin Patch\n*** Update File: f.ts\n@@\n-a\n@@\n*** End Patch")).toContain("Hunk 2 of the update of f.ts")
  })
})

describe("seekSequence", () => {
  const lines = ["a", "b  ", "  c", "“quoted” — dash", "a", "b"]

  test("climbs the fuzz ladder only when a stricter rung finds nothing", () => {
    expect(seekSequence(lines, ["a", "b"], 0, false)).toEqual({ index: 4, fuzz: 0 })
    expect(seekSequence(lines, ["b"], 0, false)).toEqual({ index: 5, fuzz: 0 })
    expect(seekSequence(lines, ["b", "  c"], 0, false)).toEqual({ index: 1, fuzz: 1 })
    expect(seekSequence(lines, ["c"], 0, false)).toEqual({ index: 2, fuzz: 2 })
    expect(seekSequence(lines, ['"quoted" - dash'], 0, false)).toEqual({ index: 3, fuzz: 3 })
    expect(seekSequence(lines, ["zzz"], 0, false)).toBeUndefined()
  })

  test("starts at the given position and, with eof, matches only at the end", () => {
    expect(seekSequence(lines, ["a"], 1, false)).toEqual({ index: 4, fuzz: 0 })
    expect(seekSequence(["x", "y", "x"], ["x"], 0, true)).toEqual({ index: 2, fuzz: 0 })
    expect(seekSequence(["x", "y"], ["x"], 0, true)).toBeUndefined()
    expect(seekSequence(["x"], ["x", "y"], 0, false)).toBeUndefined()
  })

  test("normalise maps typographic punctuation and spaces to ASCII", () => {
    expect(normalise("\u00A0‘a’ “b” – c — d − e\u3000")).toBe(`'a' "b" - c - d - e`)
  })
})

describe("applyHunks", () => {
  test("applies hunks in order, each sought after the previous one", () => {
    const r = apply("x\ny\nx\ny\n", [hunk(["-x", "+X1"]), hunk(["-x", "+X2"])])
    expect(r.text).toBe("X1\ny\nX2\ny\n")
  })

  test("an @@ header is sought first and the hunk after it", () => {
    const file = "function a() {\n  return 1\n}\nfunction b() {\n  return 1\n}\n"
    const r = apply(file, [hunk(["-  return 1", "+  return 2"], { header: "function b() {" })])
    expect(r.text).toBe("function a() {\n  return 1\n}\nfunction b() {\n  return 2\n}\n")
  })

  test("an End of File hunk matches the last occurrence", () => {
    const r = apply("end\nmiddle\nend\n", [hunk(["-end", "+END"], { endOfFile: true })])
    expect(r.text).toBe("end\nmiddle\nEND\n")
  })

  test("pure additions go after the header, or at the end", () => {
    expect(apply("a\nb\nc\n", [hunk(["+new"], { header: "a" })]).text).toBe("a\nnew\nb\nc\n")
    expect(apply("a\nb\n", [hunk(["+z"])]).text).toBe("a\nb\nz\n")
    expect(apply("", [hunk(["+first"])]).text).toBe("first\n")
  })

  test("a trailing empty context line that is not in the file is dropped on retry", () => {
    expect(apply("a\nb", [hunk([" a", "-b", "+B", " "])]).text).toBe("a\nB")
  })

  test("keeps the file's final-newline state", () => {
    expect(apply("a\nb", [hunk(["-b", "+c", "+d"])]).text).toBe("a\nc\nd")
    expect(apply("a\nb\n", [hunk(["-b", "+c"])]).text).toBe("a\nc\n")
  })

  test("context lines matched by fuzz keep the file's own text", () => {
    const r = apply("  “a”  \n  b\n", [hunk([' "a"', "-b", "+c"])])
    expect(r).toEqual({ text: "  “a”  \nc\n", fuzz: 3 })
  })

  test("reports the loosest fuzz rung used", () => {
    expect(apply("  a  \n", [hunk(["-a", "+b"])])).toEqual({ text: "b\n", fuzz: 2 })
  })

  test("not found names the hunk and shows the missing lines", () => {
    const r = apply("a\nb\n", [hunk(["-a", "+A"]), hunk(["-q1", "-q2", "-q3", "-q4", "-q5", "-q6", "-q7", "-q8"], { line: 9 })])
    expect(r.error).toContain("Hunk 2 of the update of f.ts (line 9 of the patch): could not find these lines in the file after the previous hunk:")
    expect(r.error).toContain("  q1\n  q2")
    expect(r.error).toContain("(2 more lines)")
    expect(r.error).not.toContain("q7")
    expect(r.error).toContain("Re-read f.ts with the read tool")
    const header = apply("a\n", [hunk(["-a", "+b"], { header: "class Z" })])
    expect(header.error).toContain('could not find its "@@ class Z" line')
  })
})
