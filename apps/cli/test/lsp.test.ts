// Diagnostics after edits through the built CLI: a scripted model edits a TypeScript file into a type error, and
// the next request to the model carries the language server's TS2322 (typescript-language-server from the lsp
// package's devDependencies, found on PATH as a user would have it).
import { beforeAll, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, lastToolResult, projects, reins } from "./support.ts"

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
