import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { applyPatch } from "../src/builtin/apply_patch.ts"
import { runTool, tempDir } from "./helpers.ts"

/** A temp project with the given files (relative path → content). */
const project = (files: Record<string, string> = {}) => {
  const cwd = tempDir()
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(cwd, rel)), { recursive: true })
    fs.writeFileSync(path.join(cwd, rel), content)
  }
  return { cwd, read: (rel: string) => fs.readFileSync(path.join(cwd, rel), "utf8"), exists: (rel: string) => fs.existsSync(path.join(cwd, rel)) }
}

/** Every file and directory below `root` (hidden ones included), with file contents. */
const snapshot = (root: string) => {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      const rel = path.relative(root, full)
      if (entry.isDirectory()) {
        out[`${rel}/`] = ""
        walk(full)
      } else out[rel] = fs.readFileSync(full, "latin1")
    }
  }
  walk(root)
  return out
}

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

const run = (cwd: string, patchText: string) => runTool(applyPatch, { patchText }, { cwd })

/** Runs a patch that must be rejected, checking that nothing on disk changed. */
const rejected = async (cwd: string, patchText: string) => {
  const before = snapshot(cwd)
  const r = await run(cwd, patchText)
  expect(r._tag).toBe("Failure")
  expect(snapshot(cwd)).toEqual(before)
  return r.failure.message as string
}

describe("apply_patch tool", () => {
  test("adds a file in a new directory with exactly the + lines and a final newline", async () => {
    const { cwd, read } = project()
    const r = await run(cwd, patch("*** Add File: path/new.ts", "+line one", "+line two"))
    expect(r._tag).toBe("Success")
    expect(read("path/new.ts")).toBe("line one\nline two\n")
    expect(r.success.output).toContain("Applied patch: A path/new.ts")
    expect(r.success.metadata.files).toEqual([{ path: path.join(cwd, "path/new.ts"), type: "add", diff: expect.stringContaining("+line one\n+line two") }])
  })

  test("deletes a file", async () => {
    const { cwd, exists } = project({ "old.ts": "bye\n", "keep.ts": "k\n" })
    const r = await run(cwd, patch("*** Delete File: old.ts"))
    expect(r._tag).toBe("Success")
    expect(exists("old.ts")).toBe(false)
    expect(exists("keep.ts")).toBe(true)
    expect(r.success.output).toContain("D old.ts")
    expect(r.success.metadata.files[0]).toMatchObject({ type: "delete", diff: expect.stringContaining("-bye") })
  })

  test("updates a file with several hunks, each after the previous one", async () => {
    const { cwd, read } = project({ "a.ts": "function a() {\n  return 1\n}\n\nfunction b() {\n  return 1\n}\n\nconst z = 0\n" })
    const r = await run(
      cwd,
      patch(
        "*** Update File: a.ts",
        "@@ function a() {",
        "-  return 1",
        "+  return 10",
        "@@ function b() {",
        "-  return 1",
        "+  return 20",
        "@@",
        "-const z = 0",
        "+const z = 3"
      )
    )
    expect(r._tag).toBe("Success")
    expect(read("a.ts")).toBe("function a() {\n  return 10\n}\n\nfunction b() {\n  return 20\n}\n\nconst z = 3\n")
    expect(r.success.output).toContain("M a.ts: 3 hunks, +3 -3")
  })

  test("moves a file to a new directory with the new content", async () => {
    const { cwd, read, exists } = project({ "src/a.ts": "export const a = 1\n" })
    const r = await run(cwd, patch("*** Update File: src/a.ts", "*** Move to: other/dir/a.ts", "@@", "-export const a = 1", "+export const a = 2"))
    expect(r._tag).toBe("Success")
    expect(exists("src/a.ts")).toBe(false)
    expect(read("other/dir/a.ts")).toBe("export const a = 2\n")
    expect(r.success.output).toContain("M src/a.ts → other/dir/a.ts")
    expect(r.success.metadata.files[0]).toMatchObject({ type: "move", path: path.join(cwd, "src/a.ts"), movePath: path.join(cwd, "other/dir/a.ts") })
    expect(r.success.metadata.files[0].diff).toStartWith("--- src/a.ts\n+++ other/dir/a.ts\n")
  })

  test("an End of File hunk matches at the end even when its lines occur earlier", async () => {
    const { cwd, read } = project({ "f.ts": "}\nreturn x\n}\nmiddle\n}\nreturn x\n}\n" })
    const r = await run(cwd, patch("*** Update File: f.ts", "@@", " return x", "-}", "+} // end", "*** End of File"))
    expect(r._tag).toBe("Success")
    expect(read("f.ts")).toBe("}\nreturn x\n}\nmiddle\n}\nreturn x\n} // end\n")
  })

  test("a pure-addition hunk goes after its @@ line, or at the end without one", async () => {
    const { cwd, read } = project({ "f.ts": "import a\nimport b\n\ncode()\n" })
    const r = await run(cwd, patch("*** Update File: f.ts", "@@ import b", "+import c", "@@", "+more()"))
    expect(r._tag).toBe("Success")
    expect(read("f.ts")).toBe("import a\nimport b\nimport c\n\ncode()\nmore()\n")
  })

  test("context with unicode punctuation in the file matches ASCII in the patch", async () => {
    const { cwd, read } = project({ "f.md": "title\n“quoted” — dash\u00A0here\nend\n" })
    const r = await run(cwd, patch("*** Update File: f.md", "@@", ' "quoted" - dash here', "-end", "+fin"))
    expect(r._tag).toBe("Success")
    expect(read("f.md")).toBe("title\n“quoted” — dash\u00A0here\nfin\n")
    expect(r.success.output).toContain("matched ignoring unicode punctuation")
  })

  test("padded markers and a heredoc wrapper are tolerated", async () => {
    const { cwd, read } = project({ "f.ts": "a\nb\n" })
    const text = "apply_patch <<'EOF'\n  *** Begin Patch \n *** Update File: f.ts  \n  @@  \n-b\n+B\n *** End Patch  \nEOF\n"
    const r = await run(cwd, text)
    expect(r._tag).toBe("Success")
    expect(read("f.ts")).toBe("a\nB\n")
  })

  test("trailing whitespace and indentation differences are fuzzed", async () => {
    const { cwd, read } = project({ "f.py": "def f():   \n        if x:\n            go()\n" })
    const r = await run(cwd, patch("*** Update File: f.py", "@@ def f():", "    if x:", "-        go()", "+        stop()"))
    expect(r._tag).toBe("Success")
    expect(read("f.py")).toBe("def f():   \n        if x:\n        stop()\n")
    expect(r.success.output).toContain("matched ignoring surrounding whitespace")
  })

  test("a CRLF file stays CRLF and a file without a final newline keeps it that way", async () => {
    const { cwd, read } = project({ "w.txt": "one\r\ntwo\r\nthree\r\n", "n.txt": "x\ny" })
    const r = await run(cwd, patch("*** Update File: w.txt", " one", "-two", "+2", "+2b", "*** Update File: n.txt", "-y", "+z"))
    expect(r._tag).toBe("Success")
    expect(read("w.txt")).toBe("one\r\n2\r\n2b\r\nthree\r\n")
    expect(read("n.txt")).toBe("x\nz")
  })

  test("a byte-order mark is kept", async () => {
    const { cwd, read } = project({ "b.cs": "\uFEFFclass A {}\n" })
    const r = await run(cwd, patch("*** Update File: b.cs", "-class A {}", "+class B {}"))
    expect(r._tag).toBe("Success")
    expect(read("b.cs")).toBe("\uFEFFclass B {}\n")
  })

  test("an updated file keeps its mode", async () => {
    const { cwd } = project({ "run.sh": "echo a\n" })
    fs.chmodSync(path.join(cwd, "run.sh"), 0o755)
    const r = await run(cwd, patch("*** Update File: run.sh", "-echo a", "+echo b"))
    expect(r._tag).toBe("Success")
    expect(fs.statSync(path.join(cwd, "run.sh")).mode & 0o777).toBe(0o755)
  })

  test("a patch over several files reports each and leaves no temp files", async () => {
    const { cwd } = project({ "a.ts": "1\n", "old.ts": "o\n" })
    const r = await run(cwd, patch("*** Add File: n.ts", "+n", "*** Update File: a.ts", "-1", "+2", "*** Delete File: old.ts"))
    expect(r._tag).toBe("Success")
    expect(r.success.output.split("\n")[0]).toBe("Applied patch: A n.ts, M a.ts, D old.ts")
    expect(r.success.title).toBe("3 files")
    expect(r.success.metadata.diff).toContain("--- a.ts\n+++ a.ts")
    expect(r.success.metadata.diff).toContain("--- n.ts")
    expect(Object.keys(snapshot(cwd)).sort()).toEqual(["a.ts", "n.ts"])
  })
})

describe("apply_patch rejections change nothing", () => {
  test("an empty patch", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    expect(await rejected(cwd, "")).toContain("The patch is empty")
    expect(await rejected(cwd, patch())).toContain("no file operations")
  })

  test("a missing Begin Patch", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    expect(await rejected(cwd, "*** Update File: a.ts\n-a\n+b\n*** End Patch")).toContain("*** Begin Patch")
  })

  test("context not found, after a valid first file", async () => {
    const { cwd } = project({ "a.ts": "a\n", "b.ts": "one\ntwo\nthree\n" })
    const message = await rejected(
      cwd,
      patch("*** Add File: new/n.ts", "+n", "*** Update File: a.ts", "-a", "+A", "*** Update File: b.ts", "@@", " one", "-zwei", "+2")
    )
    expect(message).toContain("Hunk 1 of the update of b.ts")
    expect(message).toContain("  one\n  zwei")
    expect(message).toContain("Re-read b.ts")
  })

  test("the second hunk of a file not found", async () => {
    const { cwd } = project({ "a.ts": "x\ny\n" })
    const message = await rejected(cwd, patch("*** Update File: a.ts", "@@", "-x", "+X", "@@", "-x", "+X"))
    expect(message).toContain("Hunk 2 of the update of a.ts")
  })

  test("delete of a missing file, after a valid update", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    const message = await rejected(cwd, patch("*** Update File: a.ts", "-a", "+A", "*** Delete File: gone.ts"))
    expect(message).toContain("Cannot delete gone.ts: the file does not exist")
  })

  test("update of a missing file, after a valid add", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    const message = await rejected(cwd, patch("*** Add File: b.ts", "+b", "*** Update File: missing.ts", "-a", "+b"))
    expect(message).toContain("Cannot update missing.ts: the file does not exist")
    expect(message).toContain("*** Add File: missing.ts")
  })

  test("an invalid hunk or operation header, after a valid operation", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    const header = await rejected(cwd, patch("*** Update File: a.ts", "-a", "+A", "*** Frobnicate File: x"))
    expect(header).toContain('line 5 of the patch: "*** Frobnicate File: x"')
    expect(header).toContain("*** Delete File: <path>")
    const hunkLine = await rejected(cwd, patch("*** Update File: a.ts", "-a", "+A", "a bare line"))
    expect(hunkLine).toContain('at line 5 of the patch: "a bare line"')
  })

  test("add of an existing file, after a valid update", async () => {
    const { cwd } = project({ "a.ts": "a\n", "b.ts": "b\n" })
    const message = await rejected(cwd, patch("*** Update File: a.ts", "-a", "+A", "*** Add File: b.ts", "+new"))
    expect(message).toContain("already exists; use *** Update File")
  })

  test("a move onto an existing file", async () => {
    const { cwd } = project({ "a.ts": "a\n", "b.ts": "b\n" })
    expect(await rejected(cwd, patch("*** Update File: a.ts", "*** Move to: b.ts", "-a", "+A"))).toContain("the destination already exists")
  })

  test("the same file in two operations", async () => {
    const { cwd } = project({ "a.ts": "a\nb\n" })
    expect(await rejected(cwd, patch("*** Update File: a.ts", "-a", "+A", "*** Update File: a.ts", "-b", "+B"))).toContain("appears in more than one operation")
  })

  test("a write that fails while staging removes the staged files and the directories it made", async () => {
    const { cwd } = project({ "a.ts": "a\n" })
    // The target's name fits, but its temp name (".<name>.reins-patch-…") is too long: staging fails after two files were staged.
    const long = `${"x".repeat(240)}.ts`
    const message = await rejected(cwd, patch("*** Add File: fresh/dir/n.ts", "+n", "*** Update File: a.ts", "-a", "+A", `*** Add File: ${long}`, "+x"))
    expect(message).toContain("The patch was not applied; nothing was changed.")
  })

  test("a patch outside the working directory asks external_directory and is denied non-interactively", async () => {
    const { cwd } = project()
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "o.ts"), "x\n")
    const r = await runTool(applyPatch, { patchText: patch(`*** Update File: ${path.join(outside, "o.ts")}`, "-x", "+y") }, { cwd, nonInteractive: "deny" })
    expect(r._tag).toBe("Failure")
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toContain("external_directory")
    expect(fs.readFileSync(path.join(outside, "o.ts"), "utf8")).toBe("x\n")
  })
  test("a move whose destination is outside the working directory is asked for and denied", async () => {
    const { cwd, read } = project({ "a.ts": "a\n" })
    const outside = tempDir()
    const dest = path.join(outside, "moved.ts")
    const r = await run(cwd, patch("*** Update File: a.ts", `*** Move to: ${dest}`, "-a", "+b"))
    expect(r.failure.reason).toBe("permission")
    expect(read("a.ts")).toBe("a\n")
    expect(fs.existsSync(dest)).toBe(false)
  })
})
