import { describe, expect, test } from "bun:test"
import { Effect, Layer, Random } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { loadConfig } from "../src/ConfigLoader.ts"
import { Ids, makeAscending } from "../src/Id.ts"

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cfg-")))

describe("config loader", () => {
  test("walks up from cwd, jsonc allowed, closer file wins, global is lowest", async () => {
    const root = tmp()
    const home = tmp()
    fs.mkdirSync(path.join(home, ".config", "reins"), { recursive: true })
    fs.writeFileSync(path.join(home, ".config", "reins", "reins.json"), JSON.stringify({ model: "g/m", agent: { steps: 3 } }))
    fs.writeFileSync(path.join(root, "reins.jsonc"), `{\n // comment\n "model": "a/b",\n}`)
    const sub = path.join(root, "x", "y")
    fs.mkdirSync(sub, { recursive: true })
    fs.writeFileSync(path.join(root, "x", "reins.json"), JSON.stringify({ model: "c/d" }))
    const { config, files } = await Effect.runPromise(loadConfig({ cwd: sub, env: {}, home }))
    expect(config.model).toBe("c/d")
    expect(config.agent?.steps).toBe(3)
    expect(files.length).toBe(3)
  })
  test("REINS_CONFIG wins over project files", async () => {
    const root = tmp()
    fs.writeFileSync(path.join(root, "reins.json"), JSON.stringify({ model: "a/b" }))
    fs.writeFileSync(path.join(root, "other.json"), JSON.stringify({ model: "x/y" }))
    const { config } = await Effect.runPromise(loadConfig({ cwd: root, env: { REINS_CONFIG: "other.json" }, home: tmp() }))
    expect(config.model).toBe("x/y")
  })
  test("a bad field names the file, the field and the problem", async () => {
    const root = tmp()
    const file = path.join(root, "reins.json")
    fs.writeFileSync(file, JSON.stringify({ provider: { local: { type: "ollama-ish" } } }))
    const error = await Effect.runPromise(Effect.flip(loadConfig({ cwd: root, env: {}, home: tmp() })))
    expect(error.file).toBe(file)
    expect(error.field).toBe("provider.local.type")
    expect(error.message.split("\n").length).toBe(1)
    expect(error.message).toContain(file)
  })
  test("unknown keys and syntax errors are reported with a position", async () => {
    const root = tmp()
    const file = path.join(root, "reins.json")
    fs.writeFileSync(file, `{"modle": "a/b"}`)
    const unknown = await Effect.runPromise(Effect.flip(loadConfig({ cwd: root, env: {}, home: tmp() })))
    expect(unknown.field).toBe("modle")
    fs.writeFileSync(file, `{\n  "model": "a/b"\n  "x": 1\n}`)
    const syntax = await Effect.runPromise(Effect.flip(loadConfig({ cwd: root, env: {}, home: tmp() })))
    expect(syntax.file).toBe(`${file}:3:3`)
  })
})

describe("ids", () => {
  test("sort by creation time, even within one millisecond", () => {
    const next = makeAscending()
    const a = next("msg", 1000, Math.random)
    const b = next("msg", 1000, Math.random)
    const c = next("msg", 999, Math.random)
    const d = next("msg", 2000, Math.random)
    expect(a.startsWith("msg_")).toBe(true)
    expect([d, c, b, a].sort()).toEqual([a, b, c, d])
  })

  test("the random part comes from Effect's Random service: a seed repeats it, another seed changes it", async () => {
    const two = Effect.gen(function* () {
      const ids = yield* Ids
      return [yield* ids.next("ses"), yield* ids.next("ses")]
    }).pipe(Effect.provide(Layer.merge(Ids.layer, TestClock.layer())))
    const [a, b, c] = await Promise.all([
      Effect.runPromise(two.pipe(Random.withSeed("reins"))),
      Effect.runPromise(two.pipe(Random.withSeed("reins"))),
      Effect.runPromise(two.pipe(Random.withSeed("other")))
    ])
    expect(a).toEqual(b)
    expect(a![0]).not.toBe(a![1])
    expect(c![0]!.slice(0, 16)).toBe(a![0]!.slice(0, 16))
    expect(c![0]).not.toBe(a![0])
  })
})
