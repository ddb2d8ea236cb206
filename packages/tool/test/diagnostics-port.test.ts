// What an edit's result says about the errors a language server reported: only new errors, capped, the ones the edit
// left alone counted, a slow server said so.
import { describe, expect, test } from "bun:test"
import { afterEditText, type FileCheck, type Problem } from "../src/builtin/DiagnosticsPort.ts"

const error = (line: number, message: string, code = "TS2322"): Problem => ({ line, column: 1, severity: 1, code, message })

describe("afterEditText", () => {
  test("new errors listed, old ones counted (by code and message, not line), warnings left out", () => {
    const check: FileCheck = {
      status: "checked",
      path: "/p/src/a.ts",
      server: "typescript-language-server",
      problems: [error(9, "old one"), error(3, "new one\n  with an elaboration"), { line: 4, column: 2, severity: 2, message: "unused" }],
      before: [error(7, "old one")]
    }
    expect(afterEditText("/p", [check])).toBe(
      "Errors reported by typescript-language-server after this edit:\nsrc/a.ts:3:1 TS2322 new one\n(1 error in these files was there before this edit.)"
    )
  })

  test("capped at 20 lines with the rest counted; nothing when clean; a timeout said briefly", () => {
    const many: FileCheck = { status: "checked", path: "/p/a.ts", server: "s", problems: Array.from({ length: 25 }, (_, i) => error(i + 1, `e${i}`)) }
    const text = afterEditText("/p", [many])
    expect(text.split("\n").length).toBe(22)
    expect(text).toEndWith("… and 5 more errors.")
    expect(afterEditText("/p", [{ status: "checked", path: "/p/a.ts", server: "s", problems: [] }])).toBe("")
    expect(afterEditText("/p", [{ status: "timeout", path: "/p/a.ts", server: "gopls", waitedMs: 5000 }])).toBe("(gopls gave no diagnostics within 5 s.)")
  })
})
