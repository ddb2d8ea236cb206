// `budget` in reins.json: a cap every config file can only lower (a cloned project never raises the
// user's), and a malformed cap named with what to write instead.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Config } from "../src/Config.ts"
import { effectiveConfig, readConfigFile } from "../src/ConfigLoader.ts"
import { splitProjectConfig } from "../src/Trust.ts"

const merged = (global: Config, project: Config, named: Config = {}) => effectiveConfig({ global, named }, project).budget

describe("budget across config files", () => {
  test.each([
    ["the user's alone", { session: 5 }, {}, {}, { session: 5 }],
    ["a project lowers the user's cap", { session: 5 }, { session: 1 }, {}, { session: 1 }],
    ["a project cannot raise it", { session: 5, turn: 1 }, { session: 500, turn: 100 }, {}, { session: 5, turn: 1 }],
    ["a project adds a cap the user has not set", { session: 5 }, { subagent: 0.5 }, {}, { session: 5, subagent: 0.5 }],
    ["--config FILE lowers too, never raises", { turn: 2 }, {}, { turn: 9, session: 3 }, { turn: 2, session: 3 }],
    ["empty everywhere", {}, {}, {}, {}]
  ] as const)("%s", (_, user, project, named, expected) => {
    expect(merged({ budget: user }, { budget: project }, { budget: named })).toEqual(expected)
  })

  test("an untrusted project's budget applies (it only tightens) and asks nothing of trust", () => {
    const split = splitProjectConfig({ budget: { session: 0.5 } })
    expect(split.inert.budget).toEqual({ session: 0.5 })
    expect(split.items).toEqual([])
  })
})

describe("a malformed budget", () => {
  const load = async (text: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-budget-"))
    const file = path.join(dir, "reins.json")
    fs.writeFileSync(file, text)
    const exit = await Effect.runPromise(Effect.exit(readConfigFile(file)))
    fs.rmSync(dir, { recursive: true, force: true })
    return exit
  }

  test.each([
    ["a negative cap", '{"budget": {"session": -1}}', "budget.session"],
    ["a zero cap", '{"budget": {"turn": 0}}', "budget.turn"],
    ["a string", '{"budget": {"subagent": "1$"}}', "budget.subagent"],
    ["a misspelt key", '{"budget": {"sesion": 1}}', "session"]
  ])("%s is refused naming the field", async (_, text, named) => {
    const exit = await load(text)
    expect(exit._tag).toBe("Failure")
    expect(String(exit._tag === "Failure" ? exit.cause.reasons[0] && JSON.stringify(exit.cause.reasons[0]) : "")).toContain(named)
  })

  test("a good one loads", async () => {
    const exit = await load('{"budget": {"session": 2.5, "turn": 0.75, "subagent": 0.2}}')
    expect(exit._tag === "Success" && exit.value.budget).toEqual({ session: 2.5, turn: 0.75, subagent: 0.2 })
  })
})
