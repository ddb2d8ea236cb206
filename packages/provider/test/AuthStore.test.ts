import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { authFile, maskKey, readStoredKeys, removeKey, storeKey } from "../src/AuthStore.ts"
import { credentials } from "../src/Sdks.ts"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.result(effect))
const tempDir = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-auth-")), "data")

describe("the key store (auth.json)", () => {
  test("a stored key is written 0600 in a 0700 data dir it creates, read back, replaced and removed", async () => {
    const dir = tempDir()
    expect(await run(readStoredKeys(dir))).toMatchObject({ _tag: "Success", success: {} })
    await run(storeKey(dir, "anthropic", "sk-ant-1"))
    await run(storeKey(dir, "openai", "sk-oai-1"))
    await run(storeKey(dir, "anthropic", "sk-ant-2"))
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(authFile(dir)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(fs.readFileSync(authFile(dir), "utf8"))).toEqual({
      anthropic: { type: "api", key: "sk-ant-2" },
      openai: { type: "api", key: "sk-oai-1" }
    })
    expect(await run(removeKey(dir, "anthropic"))).toMatchObject({ success: true })
    expect(await run(removeKey(dir, "anthropic"))).toMatchObject({ success: false })
    expect(await run(readStoredKeys(dir))).toMatchObject({ success: { openai: { type: "api", key: "sk-oai-1" } } })
    // no temporary file left beside it
    expect(fs.readdirSync(dir)).toEqual(["auth.json"])
  })

  test("a damaged file is an error naming it and what to do, and is never overwritten", async () => {
    const dir = tempDir()
    fs.mkdirSync(dir, { recursive: true })
    for (const text of ["{not json", '{"anthropic": "sk-bare-string"}']) {
      fs.writeFileSync(authFile(dir), text)
      const read = await run(readStoredKeys(dir))
      expect(read._tag).toBe("Failure")
      expect(read._tag === "Failure" && read.failure.message).toContain(`The key store ${authFile(dir)} is not valid`)
      expect(read._tag === "Failure" && read.failure.message).toContain("reins auth login")
      expect((await run(storeKey(dir, "openai", "sk-new")))._tag).toBe("Failure")
      expect(fs.readFileSync(authFile(dir), "utf8")).toBe(text)
    }
  })

  test("a key is taken from reins.json, then the environment, then the store", () => {
    const stored = { anthropic: { type: "api" as const, key: "stored" }, local: { type: "api" as const, key: "stored-local" } }
    const key = (config: Parameters<typeof credentials>[1], env: Record<string, string>, id = "anthropic") => {
      const c = credentials(id, config, env, stored)
      return typeof c === "string" ? c : c.type === "aws" ? undefined : c.apiKey
    }
    expect(key({ type: "anthropic" }, {})).toBe("stored")
    expect(key({ type: "anthropic" }, { ANTHROPIC_API_KEY: "env" })).toBe("env")
    expect(key({ type: "anthropic", apiKey: "config" }, { ANTHROPIC_API_KEY: "env" })).toBe("config")
    expect(key({ type: "openai-compatible", baseURL: "http://127.0.0.1:1/v1" }, {}, "local")).toBe("stored-local")
    expect(key({ type: "openai" }, {}, "openai")).toContain("No API key for openai")
  })

  test("keys are shown masked", () => {
    expect(maskKey("sk-ant-api03-abcdefghijkl")).toBe("sk-…ijkl")
    expect(maskKey("short")).toBe("*****")
  })
})
