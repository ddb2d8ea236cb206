import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { editConfigFile, userConfigFile } from "../src/ConfigWrite.ts"
import { readConfigFile } from "../src/ConfigLoader.ts"

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "reins-cfgwrite-"))

describe("editing the user's config", () => {
  test("a new file is made; an existing one keeps its other keys and comments", async () => {
    const dir = temp()
    const file = path.join(dir, "sub", "reins.json")
    await Effect.runPromise(editConfigFile(file, [{ path: ["model"], value: "anthropic/claude-sonnet-4-5" }]))
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ model: "anthropic/claude-sonnet-4-5" })
    fs.writeFileSync(file, '{\n  // my timeout\n  "permission_timeout": 30,\n  "model": "old/one"\n}\n')
    await Effect.runPromise(
      editConfigFile(file, [
        { path: ["provider", "ollama"], value: { type: "openai-compatible", baseURL: "http://127.0.0.1:11434/v1" } },
        { path: ["model"], value: "ollama/qwen3:8b" }
      ])
    )
    const text = fs.readFileSync(file, "utf8")
    expect(text).toContain("// my timeout")
    expect(await Effect.runPromise(readConfigFile(file))).toEqual({
      permission_timeout: 30,
      model: "ollama/qwen3:8b",
      provider: { ollama: { type: "openai-compatible", baseURL: "http://127.0.0.1:11434/v1" } }
    })
  })

  test("a file that does not parse is named and left as it was", async () => {
    const file = path.join(temp(), "reins.json")
    fs.writeFileSync(file, '{"model": ')
    const exit = await Effect.runPromise(Effect.result(editConfigFile(file, [{ path: ["model"], value: "a/b" }])))
    expect(exit._tag === "Failure" && exit.failure.message).toContain(`${file}: not a JSON object, so reins did not change it`)
    expect(fs.readFileSync(file, "utf8")).toBe('{"model": ')
  })

  test("the file changed is the one the loader reads last: reins.jsonc over reins.json, else a new reins.json", () => {
    const home = temp()
    const dir = path.join(home, ".config", "reins")
    expect(userConfigFile({}, home)).toBe(path.join(dir, "reins.json"))
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, "reins.jsonc"), "{}")
    expect(userConfigFile({}, home)).toBe(path.join(dir, "reins.jsonc"))
    expect(userConfigFile({ XDG_CONFIG_HOME: path.join(home, "x") }, home)).toBe(path.join(home, "x", "reins", "reins.json"))
  })
})
