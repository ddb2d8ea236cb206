import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { defaultSettings, loadSettings, settingsFromConfig } from "../src/index.ts"

describe("compaction settings", () => {
  test("defaults: auto, 2 tail turns, skill protected, no partial prune", () => {
    expect(settingsFromConfig(undefined)).toEqual(defaultSettings)
    expect(defaultSettings).toEqual({ auto: true, tailTurns: 2, protectedTools: ["skill"], pruneKeepLines: 0 })
  })
  test("config values replace the defaults", () => {
    expect(settingsFromConfig({ auto: false, reserved: 5_000, tail_turns: 3, protected_tools: ["skill", "read"], prune_keep_lines: 10 })).toEqual({
      auto: false,
      reserved: 5_000,
      tailTurns: 3,
      protectedTools: ["skill", "read"],
      pruneKeepLines: 10
    })
  })
  test("the template file is read relative to the directory; a missing one is a clear error", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-compaction-"))
    fs.writeFileSync(path.join(dir, "summary.md"), "MY SECTIONS")
    const loaded = await Effect.runPromise(loadSettings({ template: "summary.md" }, dir))
    expect(loaded.template).toBe("MY SECTIONS")
    const missing = await Effect.runPromise(Effect.flip(loadSettings({ template: "nope.md" }, dir)))
    expect(missing.reason).toBe("template")
    expect(missing.message).toContain(path.join(dir, "nope.md"))
    expect(missing.message).toContain('"compaction.template"')
  })
})
