import { describe, expect, test } from "bun:test"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Config } from "../src/Config.ts"
import { readConfigFile } from "../src/ConfigLoader.ts"
import { PermissionGrant } from "../src/Grant.ts"

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cfg-")))

const writeConfig = (value: unknown) => {
  const file = path.join(tmp(), "reins.json")
  fs.writeFileSync(file, JSON.stringify(value))
  return file
}

describe("permission config keys", () => {
  test("permission_persist, permission_mode and permission_timeout parse", async () => {
    const file = writeConfig({ permission_persist: "project", permission_mode: "deny-wins", permission_timeout: 30 })
    const config = await Effect.runPromise(readConfigFile(file))
    expect(config.permission_persist).toBe("project")
    expect(config.permission_mode).toBe("deny-wins")
    expect(config.permission_timeout).toBe(30)
    const other = Schema.decodeUnknownSync(Config)({ permission_persist: "session", permission_mode: "last-match", permission_timeout: 0 })
    expect(other).toEqual({ permission_persist: "session", permission_mode: "last-match", permission_timeout: 0 })
    // All three are optional.
    expect(Schema.decodeUnknownSync(Config)({})).toEqual({})
  })

  test("a bad value is rejected and names the field", async () => {
    const persist = await Effect.runPromise(Effect.flip(readConfigFile(writeConfig({ permission_persist: "forever" }))))
    expect(persist.field).toBe("permission_persist")
    expect(persist.message.split("\n").length).toBe(1)
    const mode = await Effect.runPromise(Effect.flip(readConfigFile(writeConfig({ permission_mode: "first-match" }))))
    expect(mode.field).toBe("permission_mode")
    const timeout = await Effect.runPromise(Effect.flip(readConfigFile(writeConfig({ permission_timeout: -1 }))))
    expect(timeout.field).toBe("permission_timeout")
    const notANumber = await Effect.runPromise(Effect.flip(readConfigFile(writeConfig({ permission_timeout: "30s" }))))
    expect(notANumber.field).toBe("permission_timeout")
  })
})

describe("PermissionGrant", () => {
  test("decodes a grant and rejects one without a project", () => {
    const grant = { id: "grt_1", project: "/work/p", permission: "bash", pattern: "git status*", time: { created: 5 } }
    expect(Schema.decodeUnknownSync(PermissionGrant)(grant)).toEqual(grant)
    const { project: _project, ...missing } = grant
    expect(() => Schema.decodeUnknownSync(PermissionGrant)(missing)).toThrow()
  })
})

describe("edit_tool", () => {
  test("auto, edit and apply_patch parse; anything else names the field", async () => {
    for (const value of ["auto", "edit", "apply_patch"] as const) {
      expect(await Effect.runPromise(readConfigFile(writeConfig({ edit_tool: value })))).toEqual({ edit_tool: value })
    }
    const bad = await Effect.runPromise(Effect.flip(readConfigFile(writeConfig({ edit_tool: "patch" }))))
    expect(bad.field).toBe("edit_tool")
  })
})
