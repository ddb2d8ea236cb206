// Diagnostics after edits through the built CLI: a scripted model edits a TypeScript file into a type error, and
// the next request to the model carries the language server's TS2322 (typescript-language-server from the lsp
// package's devDependencies, found on PATH as a user would have it).
import { beforeAll, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, lastToolResult, projects, reins, trust } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const SERVERS = path.resolve(import.meta.dir, "..", "..", "..", "packages", "lsp", "node_modules", ".bin")

test("an edit that breaks a type: the next request carries TS2322", async () => {
  const p = await setup([{ toolCalls: [{ name: "edit", arguments: { filePath: "src/a.ts", oldString: "= 1", newString: '= "one"' } }] }, { text: "edited" }], {
    permission: { edit: "allow" }
  })
  fs.writeFileSync(path.join(p.cwd, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true } }))
  fs.mkdirSync(path.join(p.cwd, "src"))
  fs.writeFileSync(path.join(p.cwd, "src", "a.ts"), "export const count: number = 1\n")
  const r = await reins(["run", "make count a word"], { ...p, env: { ...p.env, PATH: `${SERVERS}${path.delimiter}${p.env.PATH}` } })
  expect(r.code).toBe(0)
  expect(fs.readFileSync(path.join(p.cwd, "src", "a.ts"), "utf8")).toBe('export const count: number = "one"\n')
  expect(lastToolResult(p.server.requests)).toContain(
    "Errors reported by typescript-language-server after this edit:\nsrc/a.ts:1:14 TS2322 Type 'string' is not assignable to type 'number'."
  )
  // the diagnostics tool is offered: a server is here
  const tools = (p.server.requests.at(-1)!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)
  expect(tools).toContain("diagnostics")
})

test("a cloned repo with nothing to trust: its node_modules/.bin server is never run; trusted with reins trust, it is", async () => {
  const editStep = (from: string, to: string) => ({ toolCalls: [{ name: "edit", arguments: { filePath: "a.ts", oldString: from, newString: to } }] })
  const p = await setup([editStep("= 1", "= 2"), { text: "edited" }, editStep("= 2", "= 3"), { text: "edited" }], { permission: { edit: "allow" } })
  // no reins.json: nothing to trust, and nothing said; the repo's own typescript-language-server leaves a marker when run
  fs.writeFileSync(path.join(p.cwd, "package.json"), "{}")
  fs.writeFileSync(path.join(p.cwd, "a.ts"), "export const count: number = 1\n")
  const marker = path.join(p.cwd, "ran")
  fs.mkdirSync(path.join(p.cwd, "node_modules", ".bin"), { recursive: true })
  fs.writeFileSync(path.join(p.cwd, "node_modules", ".bin", "typescript-language-server"), `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 })
  fs.mkdirSync(path.join(p.cwd, "node_modules", "typescript", "lib"), { recursive: true })
  fs.writeFileSync(path.join(p.cwd, "node_modules", "typescript", "lib", "tsserver.js"), "")
  const r = await reins(["run", "edit it"], p)
  expect(r.code).toBe(0)
  expect(fs.readFileSync(path.join(p.cwd, "a.ts"), "utf8")).toBe("export const count: number = 2\n")
  expect(fs.existsSync(marker)).toBe(false)
  const tools = (p.server.requests.at(-1)!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)
  expect(tools).not.toContain("diagnostics")
  // the user's word: now the repo's own server runs
  await trust(p)
  const again = await reins(["run", "edit it again"], p)
  expect(again.code).toBe(0)
  expect(fs.existsSync(marker)).toBe(true)
})
