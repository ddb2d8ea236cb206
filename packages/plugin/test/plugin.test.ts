// The published @reins/plugin and the module reins's loader serves under that name export the same things, and inside
// reins the loader's copy wins over an installed package (a user's `npm i -D @reins/plugin` only brings the types).
import { expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { registerPluginModule, Tool as Tools } from "@reins/tool"
import * as Published from "../src/index.ts"

test("the loader's @reins/plugin is the published module's shape, and is what a tool file gets", async () => {
  await registerPluginModule()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-plugin-"))
  // an installed @reins/plugin next to the tool file, as `npm i -D @reins/plugin` leaves it
  const installed = path.join(dir, "node_modules", "@reins", "plugin")
  fs.mkdirSync(installed, { recursive: true })
  fs.writeFileSync(path.join(installed, "package.json"), JSON.stringify({ name: "@reins/plugin", type: "module", exports: "./index.js" }))
  fs.writeFileSync(path.join(installed, "index.js"), "export const installed = true\n")
  const file = path.join(dir, "probe.ts")
  fs.writeFileSync(file, `import * as M from "@reins/plugin"\nexport const served = M\n`)
  const { served } = (await import(pathToFileURL(file).href)) as { served: Record<string, unknown> & { Tool: Record<string, unknown> } }
  fs.rmSync(dir, { recursive: true, force: true })
  expect(Object.keys(served).sort()).toEqual(Object.keys(Published).sort())
  expect(Object.keys(served.Tool).sort()).toEqual(Object.keys(Published.Tool).sort())
  // the loader's define records the tool's id; the published one is the plain Tool.define
  expect(served.Tool.define).not.toBe(Tools.define)
  expect(Published.Tool.define).toBe(Tools.define)
  expect(served.Schema).toBe(Published.Schema)
  expect(served.ToolError).toBe(Published.ToolError)
})
