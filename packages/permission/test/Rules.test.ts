import { describe, expect, test } from "bun:test"
import { defaultRules, evaluate, evaluateOpaque, fromConfig, isDisabled, permissionFor } from "../src/Rules.ts"
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

  test("issue facts: wildcard permissions, nested paths, mcp tools, map order", () => {
    const star = (a: "allow" | "deny", b: "allow" | "deny") => [
      { permission: "*", pattern: "*", action: a },
      { permission: "bash", pattern: "*", action: b }
    ]
    expect(evaluate(star("deny", "allow"), "bash", "ls").action).toBe("allow")
    expect(evaluate([...star("deny", "allow")].reverse(), "bash", "ls").action).toBe("deny")
    const edit = fromConfig({ edit: { "src/*": "deny", "src/components/*": "allow" } })
    expect(evaluate(edit, "edit", "src/components/Button.tsx").action).toBe("allow")
    expect(evaluate(edit, "edit", "src/index.ts").action).toBe("deny")
    const mcp = fromConfig({ "*": "ask", "mcp_*": "allow", mcp_dangerous: "deny" })
    expect(evaluate(mcp, "mcp_dangerous", "x").action).toBe("deny")
    expect(evaluate(mcp, "mcp_files", "x").action).toBe("allow")
    expect(evaluate(mcp, "webfetch", "x").action).toBe("ask")
    expect(evaluate(fromConfig({ "*": "deny", bash: "allow" }), "bash", "ls").action).toBe("allow")
    expect(evaluate(fromConfig({ bash: "allow", "*": "deny" }), "bash", "ls").action).toBe("deny")
  })
  test("deny-wins: any matching deny beats later allows; no deny falls back to last match", () => {
    const rules = fromConfig({ bash: { "rm *": "deny", "*": "allow", "git *": "ask" } })
    expect(evaluate(rules, "bash", "rm -rf x").action).toBe("allow")
    expect(evaluate(rules, "bash", "rm -rf x", "deny-wins").action).toBe("deny")
    expect(evaluate(rules, "bash", "rm -rf x", "deny-wins").rule?.pattern).toBe("rm *")
    expect(evaluate(rules, "bash", "git push", "deny-wins").action).toBe("ask")
    expect(evaluate(rules, "bash", "ls", "deny-wins").action).toBe("allow")
    const disabled = [...defaultRules, ...fromConfig({ bash: { "*": "deny" } }), ...fromConfig({ bash: { "git *": "allow" } })]
    expect(isDisabled(disabled, "bash")).toBe(false)
    expect(isDisabled(disabled, "bash", "deny-wins")).toBe(true)
  })
  test("edit covers write, edit and apply_patch; a tool denied only by * deny is not offered", () => {
    const rules = [...defaultRules, ...fromConfig({ edit: "deny" })]
    for (const tool of ["edit", "write", "apply_patch"]) expect(isDisabled(rules, tool)).toBe(true)
    expect(permissionFor("apply_patch")).toBe("edit")
    expect(isDisabled([...defaultRules, ...fromConfig({ edit: { "*.lock": "deny" } })], "edit")).toBe(false)
  })
  test("an opaque subject is never allowed by a broad rule", () => {
    expect(evaluateOpaque(fromConfig({ bash: "allow" }), "bash", "eval x").action).toBe("ask")
    expect(evaluateOpaque(fromConfig("allow"), "bash", "eval x").action).toBe("ask")
    expect(evaluateOpaque(fromConfig({ bash: { "eval x": "allow" } }), "bash", "eval x").action).toBe("allow")
    expect(evaluateOpaque(fromConfig({ bash: { "*": "allow", "eval *": "deny" } }), "bash", "eval x").action).toBe("deny")
    expect(evaluateOpaque([], "bash", "eval x").action).toBe("ask")
  })
})
