import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import type { Answer, Pending, Rule } from "@reins/permission"
import * as fs from "node:fs"
import * as path from "node:path"
import { applyPatch } from "../src/builtin/apply_patch.ts"
import { edit } from "../src/builtin/edit.ts"
import { write } from "../src/builtin/write.ts"
import { MAX_PREVIEW_CHARS } from "../src/Preview.ts"
import { runTool, tempDir } from "./helpers.ts"

const ASK_EDITS: ReadonlyArray<Rule> = [
  { permission: "*", pattern: "*", action: "allow" },
  { permission: "edit", pattern: "*", action: "ask" }
]

/** Runs one call with edits asked about; the person answers `answer` and every question is kept. */
const asking = async (definition: Parameters<typeof runTool>[0], args: unknown, cwd: string, answer: Answer = { reply: "once" }, rules = ASK_EDITS) => {
  const asked: Array<Pending> = []
  const result = await runTool(definition, args, {
    cwd,
    rules,
    prompter: {
      ask: (request) =>
        Effect.sync(() => {
          asked.push(request)
          return answer
        })
    }
  })
  return { result, asked }
}

const project = (files: Record<string, string>) => {
  const cwd = tempDir()
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(cwd, name)), { recursive: true })
    fs.writeFileSync(path.join(cwd, name), content)
  }
  return cwd
}

describe("the edit tools' permission question shows the diff it asks about", () => {
  test("edit: the lines it would replace, before anything is written", async () => {
    const cwd = project({ "a.ts": "const a = 1\nconst b = 2\n" })
    const { result, asked } = await asking(edit, { filePath: "a.ts", oldString: "const b = 2", newString: "const b = 3" }, cwd, { reply: "reject" })
    expect(result._tag).toBe("Failure")
    expect(asked).toHaveLength(1)
    expect(asked[0]!.diffs).toEqual([{ path: path.join(cwd, "a.ts"), diff: expect.stringContaining("-const b = 2\n+const b = 3") }])
    // rejected: the file is as it was
    expect(fs.readFileSync(path.join(cwd, "a.ts"), "utf8")).toBe("const a = 1\nconst b = 2\n")
  })

  test("the diff asked about is the diff applied", async () => {
    const cwd = project({ "a.ts": "x\n\tindented()\ny\n" })
    const { result, asked } = await asking(edit, { filePath: "a.ts", oldString: "  indented()", newString: "  changed()" }, cwd)
    expect(result._tag).toBe("Success")
    expect(asked[0]!.diffs![0]!.diff).toBe(result.success.metadata.diff)
  })

  test("edit that creates a file, write over a file and write of a new one", async () => {
    const cwd = project({ "old.txt": "one\ntwo\n" })
    const created = await asking(edit, { filePath: "new.ts", oldString: "", newString: "fresh\n" }, cwd)
    expect(created.asked[0]!.diffs).toEqual([{ path: path.join(cwd, "new.ts"), created: true, diff: expect.stringContaining("+fresh") }])
    const over = await asking(write, { filePath: "old.txt", content: "one\nTWO\n" }, cwd)
    expect(over.asked[0]!.diffs![0]).toEqual({ path: path.join(cwd, "old.txt"), diff: expect.stringContaining("-two\n+TWO") })
    expect(over.asked[0]!.diffs![0]!.created).toBeUndefined()
    const fresh = await asking(write, { filePath: "dir/made.txt", content: "hello\n" }, cwd)
    expect(fresh.asked[0]!.diffs).toEqual([{ path: path.join(cwd, "dir/made.txt"), created: true, diff: expect.stringContaining("+hello") }])
  })

  test("write over a binary file names it with no diff", async () => {
    const cwd = project({})
    fs.writeFileSync(path.join(cwd, "blob.bin"), Buffer.from([0, 1, 2, 0, 255]))
    const { asked } = await asking(write, { filePath: "blob.bin", content: "text\n" }, cwd)
    expect(asked[0]!.diffs).toEqual([{ path: path.join(cwd, "blob.bin"), diff: "" }])
  })

  test("apply_patch: every file, a move under its new name, an added file marked created", async () => {
    const cwd = project({ "keep.ts": "a\nb\n", "move.ts": "m\n", "gone.ts": "g\n" })
    const patchText = [
      "*** Begin Patch",
      "*** Update File: keep.ts",
      "@@",
      " a",
      "-b",
      "+B",
      "*** Update File: move.ts",
      "*** Move to: moved/there.ts",
      "@@",
      "-m",
      "+M",
      "*** Add File: added.ts",
      "+new",
      "*** Delete File: gone.ts",
      "*** End Patch"
    ].join("\n")
    const { result, asked } = await asking(applyPatch, { patchText }, cwd)
    expect(result._tag).toBe("Success")
    // one question per file the patch touches, each showing the whole patch
    expect(asked.length).toBeGreaterThan(1)
    for (const question of asked) expect(question.diffs).toEqual(asked[0]!.diffs)
    const diffs = asked[0]!.diffs!
    expect(diffs.map((d) => path.relative(cwd, d.path))).toEqual(["keep.ts", "moved/there.ts", "added.ts", "gone.ts"])
    expect(diffs[0]!.diff).toContain("-b\n+B")
    expect(diffs[1]!.diff).toContain("+++ moved/there.ts")
    expect(diffs[2]).toMatchObject({ created: true })
    expect(diffs[3]!.diff).toContain("-g")
  })

  test("a call that would fail is still asked about, without a diff; execute says why", async () => {
    const cwd = project({ "a.ts": "const a = 1\n" })
    const { result, asked } = await asking(edit, { filePath: "a.ts", oldString: "not there", newString: "x" }, cwd)
    expect(asked).toHaveLength(1)
    expect(asked[0]!.diffs).toBeUndefined()
    expect(result._tag).toBe("Failure")
    const broken = await asking(applyPatch, { patchText: "*** Begin Patch\n*** Update File: a.ts\n@@\n-missing\n+x\n*** End Patch" }, cwd)
    expect(broken.asked[0]!.diffs).toBeUndefined()
    expect(broken.result._tag).toBe("Failure")
  })

  test("an allowed or a denied edit asks nothing", async () => {
    const cwd = project({ "a.ts": "one\n" })
    const allowed = await asking(edit, { filePath: "a.ts", oldString: "one", newString: "two" }, cwd, { reply: "once" }, [
      { permission: "*", pattern: "*", action: "allow" }
    ])
    expect(allowed.asked).toHaveLength(0)
    expect(allowed.result._tag).toBe("Success")
    const denied = await asking(edit, { filePath: "a.ts", oldString: "two", newString: "three" }, cwd, { reply: "once" }, [
      { permission: "*", pattern: "*", action: "allow" },
      { permission: "edit", pattern: "*", action: "deny" }
    ])
    expect(denied.asked).toHaveLength(0)
    expect(denied.result._tag).toBe("Failure")
  })

  test("nothing of a file outside the project, or one the rules do not let the model read, is shown (nor stored with the question)", async () => {
    const cwd = project({ "a.ts": "x\n", ".env": "SECRET=1\n" })
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "id_rsa"), "PRIVATE KEY\n")
    const rules: ReadonlyArray<Rule> = [...ASK_EDITS, { permission: "external_directory", pattern: "*", action: "ask" }]
    const external = await asking(write, { filePath: path.join(outside, "id_rsa"), content: "overwritten\n" }, cwd, { reply: "reject" }, rules)
    expect(external.asked.length).toBeGreaterThan(0)
    for (const q of external.asked) expect(q.diffs).toBeUndefined()
    const deleted = await asking(
      applyPatch,
      { patchText: `*** Begin Patch\n*** Delete File: ${path.join(outside, "id_rsa")}\n*** End Patch` },
      cwd,
      { reply: "reject" },
      rules
    )
    for (const q of deleted.asked) expect(q.diffs).toBeUndefined()
    const unreadable = await asking(write, { filePath: ".env", content: "SECRET=2\n" }, cwd, { reply: "reject" }, [
      ...ASK_EDITS,
      { permission: "read", pattern: "*.env", action: "deny" }
    ])
    expect(unreadable.asked).toHaveLength(1)
    expect(unreadable.asked[0]!.diffs).toBeUndefined()
    expect(fs.readFileSync(path.join(outside, "id_rsa"), "utf8")).toBe("PRIVATE KEY\n")
  })

  test("a file over 1 MiB is asked about by name, without reading it for a diff", async () => {
    const cwd = project({ "big.txt": `${"line\n".repeat(300_000)}needle\n` })
    const { asked, result } = await asking(edit, { filePath: "big.txt", oldString: "needle", newString: "pin" }, cwd)
    expect(asked[0]!.diffs).toBeUndefined()
    expect(result._tag).toBe("Success")
  })

  test("a huge change is cut to the budget with a line saying so", async () => {
    const cwd = project({})
    const content = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${"x".repeat(20)}`).join("\n")
    const { asked } = await asking(write, { filePath: "big.txt", content }, cwd)
    const diff = asked[0]!.diffs![0]!.diff
    expect(diff.length).toBeLessThanOrEqual(MAX_PREVIEW_CHARS + 100)
    expect(diff).toMatch(/\n\\ \d+ more lines of this diff not shown$/)
    expect(diff).toContain("+line 0 ")
  })

  test("a large first file does not take the budget of the others: each keeps a share", async () => {
    const cwd = project({ "small.ts": "a\n" })
    const big = Array.from({ length: 20_000 }, (_, i) => `+filler ${i}`).join("\n")
    const patchText = `*** Begin Patch\n*** Add File: filler.txt\n${big}\n*** Update File: small.ts\n@@\n-a\n+EVIL\n*** End Patch`
    const { asked } = await asking(applyPatch, { patchText }, cwd, { reply: "reject" })
    const [filler, small] = asked[0]!.diffs!
    expect(filler!.diff).toMatch(/more lines of this diff not shown$/)
    expect(small!.diff).toContain("-a\n+EVIL")
    expect(filler!.diff.length + small!.diff.length).toBeLessThanOrEqual(MAX_PREVIEW_CHARS + 200)
  })
})
