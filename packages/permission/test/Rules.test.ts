import { describe, expect, test } from "bun:test"
import { defaultRules, evaluate, fromConfig, isDisabled } from "../src/Rules.ts"
import { match } from "../src/Wildcard.ts"

describe("wildcard", () => {
  test("SPEC facts", () => {
    expect(match("ls -la", "ls *")).toBe(true)
    expect(match("ls", "ls *")).toBe(true)
    expect(match("lstmeval", "ls *")).toBe(false)
    expect(match("lstmeval", "ls*")).toBe(true)
    expect(match("git", "git *")).toBe(true)
    expect(match("gitx", "git *")).toBe(false)
    expect(match("file1.txt", "file?.txt")).toBe(true)
    expect(match("file12.txt", "file?.txt")).toBe(false)
  })
  test("* crosses slashes and newlines; backslash equals slash", () => {
    expect(match("src/a/b.ts", "src/*")).toBe(true)
    expect(match("echo a\necho b", "echo *")).toBe(true)
    expect(match("C:\\repo\\x", "C:/repo/*")).toBe(true)
    expect(match("a.b", "a?b")).toBe(true)
    expect(match("a+b", "a+b")).toBe(true)
  })
})

describe("rules", () => {
  test("last match wins", () => {
    const a = fromConfig({ bash: { "*": "allow", rm: "deny" } })
    expect(evaluate(a, "bash", "rm").action).toBe("deny")
    const b = fromConfig({ bash: { rm: "deny", "*": "allow" } })
    expect(evaluate(b, "bash", "rm").action).toBe("allow")
  })
  test("no match asks", () => {
    expect(evaluate([], "bash", "ls").action).toBe("ask")
  })
  test("defaults: .env asks, .env.example allowed, doom_loop asks", () => {
    expect(evaluate(defaultRules, "read", "/repo/.env").action).toBe("ask")
    expect(evaluate(defaultRules, "read", "/repo/.env.local").action).toBe("ask")
    expect(evaluate(defaultRules, "read", "/repo/.env.example").action).toBe("allow")
    expect(evaluate(defaultRules, "read", "/repo/src/a.ts").action).toBe("allow")
    expect(evaluate(defaultRules, "doom_loop", "bash").action).toBe("ask")
  })
  test("string config and home expansion", () => {
    expect(fromConfig("deny")).toEqual([{ permission: "*", pattern: "*", action: "deny" }])
    expect(fromConfig({ read: { "~/secret/*": "deny", "$HOME/x": "ask" } }, "/home/u")).toEqual([
      { permission: "read", pattern: "/home/u/secret/*", action: "deny" },
      { permission: "read", pattern: "/home/u/x", action: "ask" }
    ])
  })
  test("a tool whose last rule is * deny is disabled", () => {
    const rules = [...defaultRules, ...fromConfig({ bash: "deny", edit: { "*": "deny", "src/*": "allow" } })]
    expect(isDisabled(rules, "bash")).toBe(true)
    expect(isDisabled(rules, "write")).toBe(false)
    expect(isDisabled(rules, "read")).toBe(false)
  })
})
