import { describe, expect, test } from "bun:test"
import type { ToolPart } from "@reins/domain"
import { diffTexts } from "@reins/tool"
import { toolDiffs, toolKind, toolLocations } from "../src/ToolCalls.ts"

const completed = (tool: string, input: Record<string, unknown>, metadata: Record<string, unknown>): ToolPart => ({
  id: "prt_1",
  sessionID: "ses_1",
  messageID: "msg_1",
  type: "tool",
  callID: "call_1",
  tool,
  state: { status: "completed", input, output: "", title: tool, metadata, time: { start: 1, end: 2 } }
})

describe("tool kinds and locations", () => {
  test.each([
    ["read", {}, "read"],
    ["write", {}, "edit"],
    ["grep", {}, "search"],
    ["bash", {}, "execute"],
    ["apply_patch", { patchText: "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch" }, "delete"],
    ["apply_patch", { patchText: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch" }, "move"],
    ["apply_patch", { patchText: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: c.txt\n*** End Patch" }, "edit"],
    ["mcp_server_tool", {}, "other"]
  ] as const)("%s %o is %s", (tool, input, kind) => {
    expect(toolKind(tool, input)).toBe(kind)
  })

  test("paths are absolute; a read's offset is its line; a patch names every file it touches", () => {
    expect(toolLocations("read", { filePath: "src/a.ts", offset: 40 }, "/p")).toEqual([{ path: "/p/src/a.ts", line: 40 }])
    expect(toolLocations("edit", { filePath: "/abs/b.ts" }, "/p")).toEqual([{ path: "/abs/b.ts" }])
    expect(
      toolLocations("apply_patch", { patchText: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/b.txt\n@@\n-x\n+y\n*** End Patch" }, "/p")
    ).toEqual([{ path: "/p/a.txt" }, { path: "/p/d/b.txt" }])
    expect(toolLocations("bash", { command: "ls" }, "/p")).toEqual([])
  })
})

describe("diffs", () => {
  test("a unified diff's hunks as before and after texts", () => {
    const diff = "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n@@ -10,1 +10,2 @@\n ten\n+eleven"
    expect(diffTexts(diff)).toEqual({ oldText: "one\ntwo\nthree\n\nten", newText: "one\nTWO\nthree\n\nten\neleven" })
    expect(diffTexts("")).toBeUndefined()
  })

  test("edit: its old and new strings; write of a new file: no old text; apply_patch: one diff per file", () => {
    expect(toolDiffs(completed("edit", { filePath: "a.txt", oldString: "x", newString: "y" }, { filePath: "/p/a.txt" }), "/p")).toEqual([
      { type: "diff", path: "/p/a.txt", oldText: "x", newText: "y" }
    ])
    expect(toolDiffs(completed("write", { filePath: "n.txt", content: "new\n" }, { filePath: "/p/n.txt", exists: false }), "/p")).toEqual([
      { type: "diff", path: "/p/n.txt", oldText: null, newText: "new\n" }
    ])
    const files = [
      { path: "/p/a.txt", type: "update", diff: "--- a.txt\n+++ a.txt\n@@ -1,1 +1,1 @@\n-x\n+y" },
      { path: "/p/b.txt", type: "add", diff: "--- b.txt\n+++ b.txt\n@@ -0,0 +1,1 @@\n+hello" }
    ]
    expect(toolDiffs(completed("apply_patch", { patchText: "" }, { files }), "/p")).toEqual([
      { type: "diff", path: "/p/a.txt", oldText: "x", newText: "y" },
      { type: "diff", path: "/p/b.txt", oldText: null, newText: "hello" }
    ])
  })
})
