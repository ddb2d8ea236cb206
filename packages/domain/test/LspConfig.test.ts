// `lsp` in reins.json: decoded with a clear error when malformed, and a project's commands inert until trusted.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { loadConfig } from "../src/ConfigLoader.ts"
import type { LspConfig } from "../src/LspConfig.ts"
import { splitProjectConfig } from "../src/Trust.ts"

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-lsp-cfg-")))

const load = (lsp: unknown) => {
  const root = tmp()
  fs.writeFileSync(path.join(root, "reins.json"), JSON.stringify({ lsp }))
  return Effect.runPromise(Effect.result(loadConfig({ cwd: root, env: {}, home: tmp() })))
}

describe("lsp config", () => {
  test("false, a disabled built-in, a changed command and a server of one's own decode", async () => {
    const configs: ReadonlyArray<LspConfig> = [
      false,
      { typescript: { disabled: true } },
      { go: { command: ["gopls", "-remote=auto"], timeout: 8000 } },
      { vue: { command: ["vue-language-server", "--stdio"], extensions: [".vue"] } }
    ]
    for (const lsp of configs) {
      const loaded = await load(lsp)
      expect(loaded._tag).toBe("Success")
      if (loaded._tag === "Success") expect(loaded.success.config.lsp).toEqual(lsp)
    }
  })

  test("a timeout above 2 minutes is refused (an untrusted project's config must not hold every edit)", async () => {
    for (const key of ["timeout", "startup_timeout"]) {
      expect((await load({ typescript: { [key]: 120_000 } }))._tag).toBe("Success")
      const over = await load({ typescript: { [key]: 120_001 } })
      expect(over._tag).toBe("Failure")
      if (over._tag === "Failure") expect(over.failure.message).toContain("Expected at most 120000 milliseconds")
    }
  })

  test("malformed entries are named with what to write", async () => {
    const own = await load({ vue: { extensions: [".vue"] } })
    expect(own._tag).toBe("Failure")
    if (own._tag === "Failure") expect(own.failure.message).toContain('"lsp.vue" is not a built-in language server')
    const ext = await load({ typescript: { extensions: ["vue"] } })
    if (ext._tag === "Failure") expect(ext.failure.message).toContain('Expected an extension with its dot, e.g. ".ts"')
    expect(ext._tag).toBe("Failure")
    const empty = await load({ rust: { command: [] } })
    expect(empty._tag).toBe("Failure")
    const wrong = await load(true)
    expect(wrong._tag).toBe("Failure")
  })

  test("a project's commands need trust; switching off, timeouts and extensions do not", () => {
    const split = splitProjectConfig({
      lsp: {
        typescript: { command: ["./evil", "--stdio"], extensions: [".vue"], timeout: 9000 },
        python: { disabled: true },
        mine: { command: ["x"], extensions: [".x"] }
      }
    })
    expect(split.items.filter((i) => i.kind === "lsp")).toEqual([
      { kind: "lsp", name: "lsp.typescript.command", detail: "./evil --stdio" },
      { kind: "lsp", name: "lsp.mine.command", detail: "x" }
    ])
    expect(split.inert.lsp).toEqual({ typescript: { extensions: [".vue"], timeout: 9000 }, python: { disabled: true } })
    expect(splitProjectConfig({ lsp: false }).inert.lsp).toBe(false)
  })
})
