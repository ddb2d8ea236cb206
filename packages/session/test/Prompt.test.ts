import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { envBlock, findInstructions, systemPrompt, worktreeRoot } from "../src/Prompt.ts"

describe("system prompt", () => {
  test("instructions are found walking up to the worktree root, first name wins per directory", () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-prompt-")))
    const root = path.join(outside, "repo")
    const sub = path.join(root, "pkg", "src")
    fs.mkdirSync(sub, { recursive: true })
    fs.mkdirSync(path.join(root, ".git"))
    fs.writeFileSync(path.join(outside, "AGENTS.md"), "outside the repo")
    fs.writeFileSync(path.join(root, "AGENTS.md"), "root rules")
    fs.writeFileSync(path.join(root, "CLAUDE.md"), "ignored: AGENTS.md wins")
    fs.writeFileSync(path.join(root, "pkg", "CLAUDE.md"), "package rules")
    expect(worktreeRoot(sub)).toBe(root)
    expect(findInstructions(sub)).toEqual([path.join(root, "AGENTS.md"), path.join(root, "pkg", "CLAUDE.md")])
    const [header, rest] = systemPrompt(sub, new Date(0))
    expect(header).toContain("reins")
    expect(rest).toContain("root rules")
    expect(rest).toContain("package rules")
    expect(rest).not.toContain("outside the repo")
    expect(rest).not.toContain("ignored")
  })
  test("the env block names the directory and git status", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-env-")))
    expect(envBlock(dir, new Date(0))).toContain("Not a git repository")
    Bun.spawnSync(["git", "init", "-q"], { cwd: dir })
    fs.writeFileSync(path.join(dir, "new.txt"), "x")
    const block = envBlock(dir, new Date(0))
    expect(block).toContain(`Working directory: ${dir}`)
    expect(block).toContain("?? new.txt")
  })
})
