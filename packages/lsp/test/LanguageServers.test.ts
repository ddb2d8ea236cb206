// The edit tools with real language servers (the devDependencies' typescript-language-server and pyright) behind
// them: a type error an edit makes is appended to its result, the fix clears it, and no server means nothing added.
import { describe, expect, test } from "bun:test"
import { applyPatch, diagnostics, edit, write } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathWithServers, tempDir, withServers } from "./helpers.ts"

const tsProject = () => {
  const cwd = tempDir()
  fs.writeFileSync(path.join(cwd, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }))
  fs.mkdirSync(path.join(cwd, "src"))
  fs.writeFileSync(path.join(cwd, "src", "a.ts"), "export const count: number = 1\n")
  return cwd
}

describe("diagnostics after edits", () => {
  test("typescript-language-server: an edit's type error follows its result, the fix clears it, diagnostics reads them", async () => {
    const cwd = tsProject()
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers(), HOME: process.env.HOME }, projectCode: true }, async (call, offered) => {
      expect(offered).toBe(true)
      const broken = await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: '= "one"' })
      expect(broken.failed).toBeUndefined()
      expect(broken.output).toContain("Edited")
      expect(broken.output).toContain(
        "Errors reported by typescript-language-server after this edit:\nsrc/a.ts:1:14 TS2322 Type 'string' is not assignable to type 'number'."
      )
      expect(broken.metadata?.diagnostics).toEqual({ errors: 1 })

      const asked = await call(diagnostics, {})
      expect(asked.output).toContain("src/a.ts: 1 error, 0 warnings (typescript-language-server)")
      expect(asked.output).toContain("TS2322")

      const fixed = await call(edit, { filePath: "src/a.ts", oldString: '= "one"', newString: "= 2" })
      expect(fixed.output).toContain("Edited")
      expect(fixed.output).not.toContain("Errors reported")

      // a new file through write, and one through apply_patch: both checked
      const written = await call(write, { filePath: "src/b.ts", content: 'import { count } from "./a"\nexport const label: string = count\n' })
      expect(written.output).toContain("src/b.ts:2:14 TS2322 Type 'number' is not assignable to type 'string'.")
      const patched = await call(applyPatch, {
        patchText:
          "*** Begin Patch\n*** Update File: src/b.ts\n@@\n-export const label: string = count\n+export const label: string = String(count)\n*** End Patch"
      })
      expect(patched.failed).toBeUndefined()
      expect(patched.output).not.toContain("Errors reported")

      const clean = await call(diagnostics, { path: "src/a.ts" })
      expect(clean.output).toBe("src/a.ts: 0 errors, 0 warnings (typescript-language-server)")
    })
  })

  test("an error that was there before the edit is counted, not listed again", async () => {
    const cwd = tsProject()
    fs.writeFileSync(path.join(cwd, "src", "a.ts"), "export const count: number = 1\nexport const other: number = 2\n")
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      const first = await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: '= "one"' })
      expect(first.output).toContain("src/a.ts:1:14 TS2322")
      const second = await call(edit, { filePath: "src/a.ts", oldString: "= 2", newString: "= true" })
      expect(second.output).toContain("src/a.ts:2:14 TS2322 Type 'boolean' is not assignable to type 'number'.")
      expect(second.output).not.toContain("src/a.ts:1:14")
      expect(second.output).toContain("(1 error in these files was there before this edit.)")
    })
  })

  test("a file's first edit: an error it had before is counted, not listed as the edit's", async () => {
    const cwd = tsProject()
    fs.writeFileSync(path.join(cwd, "src", "a.ts"), 'export const count: number = 1\nexport const other: number = "x"\n')
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      const r = await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: "= true" })
      expect(r.output).toContain("src/a.ts:1:14 TS2322 Type 'boolean' is not assignable to type 'number'.")
      expect(r.output).not.toContain("src/a.ts:2:14")
      expect(r.output).toContain("(1 error in these files was there before this edit.)")
    })
  })

  test("a file apply_patch deletes is closed in its server: a file importing it then reports the missing module", async () => {
    const cwd = tsProject()
    fs.writeFileSync(path.join(cwd, "src", "b.ts"), 'import { count } from "./a"\nexport const n: number = count\n')
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: "= 2" })
      const clean = await call(edit, { filePath: "src/b.ts", oldString: "n: number", newString: "m: number" })
      expect(clean.output).not.toContain("Errors reported")
      const deleted = await call(applyPatch, { patchText: "*** Begin Patch\n*** Delete File: src/a.ts\n*** End Patch" })
      expect(deleted.failed).toBeUndefined()
      const r = await call(edit, { filePath: "src/b.ts", oldString: "m: number", newString: "k: number" })
      expect(r.output).toContain("src/b.ts:1:23 TS2307 Cannot find module './a'")
    })
  })

  test("pyright: an edit's type error follows its result, the fix clears it", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "pyproject.toml"), "[project]\nname = 'x'\n")
    fs.writeFileSync(path.join(cwd, "app.py"), "count: int = 1\n")
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      const broken = await call(edit, { filePath: "app.py", oldString: "= 1", newString: '= "one"' })
      expect(broken.output).toContain("Errors reported by pyright-langserver after this edit:\napp.py:1:14 reportAssignmentType")
      const fixed = await call(edit, { filePath: "app.py", oldString: '= "one"', newString: "= 2" })
      expect(fixed.output).not.toContain("Errors reported")
    })
  })

  test("a project without a marker at its root: the diagnostics tool is not offered, edits are still checked", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "loose.ts"), "export const count: number = 1\n")
    await withServers({ cwd, config: undefined, env: { PATH: pathWithServers() }, projectCode: true }, async (call, offered) => {
      expect(offered).toBe(false)
      const r = await call(edit, { filePath: "loose.ts", oldString: "= 1", newString: '= "one"' })
      expect(r.output).toContain("loose.ts:1:14 TS2322")
    })
  })

  test("no server on PATH: nothing is appended and the tool is not offered", async () => {
    const cwd = tsProject()
    await withServers({ cwd, config: undefined, env: { PATH: "/nonexistent" }, projectCode: true }, async (call, offered) => {
      expect(offered).toBe(false)
      const r = await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: '= "one"' })
      expect(r.output).toBe(`Edited ${path.join(cwd, "src", "a.ts")}: replaced 1 occurrence at line 1 (matched by the exact matcher).`)
    })
  })

  test('"lsp": false and a disabled server start nothing', async () => {
    const cwd = tsProject()
    for (const config of [false as const, { typescript: { disabled: true } }]) {
      await withServers({ cwd, config, env: { PATH: pathWithServers() }, projectCode: true }, async (call, offered) => {
        const r = await call(edit, { filePath: "src/a.ts", oldString: "count", newString: "total" })
        expect(r.output).not.toContain("Errors reported")
        expect(r.metadata?.diagnostics).toBeUndefined()
        if (config === false) expect(offered).toBe(false)
      })
    }
  })

  test("an untrusted project's node_modules/.bin is not run", async () => {
    const cwd = tsProject()
    fs.mkdirSync(path.join(cwd, "node_modules", ".bin"), { recursive: true })
    const planted = path.join(cwd, "node_modules", ".bin", "typescript-language-server")
    const marker = path.join(cwd, "ran")
    fs.writeFileSync(planted, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 })
    await withServers({ cwd, config: undefined, env: { PATH: "/nonexistent" }, projectCode: false }, async (call, offered) => {
      expect(offered).toBe(false)
      const r = await call(edit, { filePath: "src/a.ts", oldString: "= 1", newString: '= "one"' })
      expect(r.output).not.toContain("Errors reported")
    })
    expect(fs.existsSync(marker)).toBe(false)
  })

  test("a server that crashes is started again once, then left off; the edits' results are unaffected", async () => {
    const cwd = tempDir()
    const starts = path.join(cwd, "starts.log")
    fs.writeFileSync(path.join(cwd, "a.foo"), "one\n")
    const config = { foo: { command: ["node", path.join(import.meta.dir, "fixtures", "crashing-server.cjs"), starts], extensions: [".foo"] } }
    await withServers({ cwd, config, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      for (const word of ["two", "three", "four", "five"]) {
        const before = fs.readFileSync(path.join(cwd, "a.foo"), "utf8").trim()
        const r = await call(edit, { filePath: "a.foo", oldString: before, newString: word })
        expect(r.failed).toBeUndefined()
        expect(r.output).not.toContain("Errors reported")
      }
    })
    expect(fs.readFileSync(starts, "utf8").trim().split("\n")).toEqual(["start", "start"])
  })
})
