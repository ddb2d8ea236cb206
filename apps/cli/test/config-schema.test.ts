import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, reins, type Project, writeUserConfig } from "./support.ts"

beforeAll(() => ensureBuilt())

const COMMITTED = path.resolve(import.meta.dir, "../../../schema/reins.schema.json")

/** An empty project and a user config holding `config` (written as given). */
const plain = (config: string | undefined): Project => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cfgschema-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cfgschema-data-")))
  if (config !== undefined) writeUserConfig(dataDir, config)
  return { cwd, dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" } }
}

describe("reins config schema", () => {
  test("prints the JSON Schema of reins.json: what the repository ships in schema/reins.schema.json", async () => {
    const r = await reins(["config", "schema"], plain(undefined))
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(fs.readFileSync(COMMITTED, "utf8")))
    expect(JSON.parse(r.stdout).properties.sandbox.properties.network.properties.allow.type).toBe("array")
  })

  test('a config with "$schema" runs; one with a typo stops with one line naming the file, the key and the likely fix (exit 2)', async () => {
    const ok = plain(JSON.stringify({ $schema: JSON.parse(fs.readFileSync(COMMITTED, "utf8")).$id, model: "anthropic/claude-sonnet-4-5" }))
    const listed = await reins(["models", "anthropic", "--format", "json"], { ...ok, env: { ...ok.env, ANTHROPIC_API_KEY: "k" } })
    expect(listed.stderr).toBe("")
    expect(listed.code).toBe(0)

    const typo = plain(JSON.stringify({ sandbox: { netwrok: { mode: "none" } } }))
    const r = await reins(["run", "hi"], typo)
    expect(r.code).toBe(2)
    const file = path.join(typo.dataDir, ".config", "reins", "reins.json")
    expect(r.stderr.trim()).toBe(`reins: ${file}: sandbox.netwrok: unknown key "netwrok"; did you mean "network"?`)
  })
})
