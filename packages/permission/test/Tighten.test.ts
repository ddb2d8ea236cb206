// Issue 24: what the scan asks `edit` for (a writer command's targets, `git config` writes), and how an
// untrusted project's rules (checkLimit), protected paths (checkProtected) and the strictest verdict combine.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { scanBash } from "../src/BashScan.ts"
import { check, checkLimit, checkProtected, strictest } from "../src/Permission.ts"
import { fromConfig } from "../src/Rules.ts"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-tighten-")))
const wt = path.join(root, "wt")
const home = path.join(root, "home")
fs.mkdirSync(path.join(wt, ".git", "hooks"), { recursive: true })
fs.mkdirSync(path.join(wt, "src"), { recursive: true })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const edits = async (command: string) =>
  (await Effect.runPromise(scanBash(command, { cwd: wt, worktree: wt, home }))).filter((r) => r.permission === "edit").flatMap((r) => r.patterns)

describe("the scan asks edit for what a command writes", () => {
  const rows: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["cp a.txt .git/hooks/pre-commit", [".git/hooks/pre-commit"]],
    ["mv x .reins/plugins/p.ts", [".reins/plugins/p.ts"]],
    ["echo '{}' | tee reins.json", ["reins.json"]],
    ["touch src/new.ts", ["src/new.ts"]],
    ["echo x > AGENTS.md", ["AGENTS.md"]],
    ["ln -s /tmp/x .git/hooks/post-checkout", [".git/hooks/post-checkout"]],
    ["sed -i s/a/b/ AGENTS.md", ["AGENTS.md"]],
    ["install -m 755 s.sh .git/hooks/pre-push", [".git/hooks/pre-push"]],
    // the grammar hangs this redirection on the whole list; bash runs it after the cd
    ["cd .git && printf '[core]' >> config", [".git/config"]],
    ["cd .git/hooks && echo x > pre-commit", [".git/hooks/pre-commit"]],
    // a hard link makes its source writable under another name
    ["ln .git/config cfg", [".git/config", "cfg"]],
    ["cp -l .git/config cfg", [".git/config"]],
    ["printf x | sponge .git/config", [".git/config"]]
  ]
  for (const [command, targets] of rows) {
    test(command, async () => {
      const asked = await edits(command)
      for (const target of targets) expect(asked).toContain(path.join(wt, target))
    })
  }
})

describe("git config: a key that can run a program is an edit of the config file; an ordinary key is not", () => {
  const config = path.join(wt, ".git", "config")
  const dangerous = [
    "git config core.fsmonitor 'touch x'",
    "git config core.hooksPath .h",
    "git config core.pager 'sh -c x'",
    "git config alias.st '!rm -rf .'",
    "git config filter.x.clean 'sh x'",
    "git config diff.x.textconv ./conv",
    "git config credential.helper '!cat ~/.ssh/id_rsa'",
    "git config include.path ../evil",
    "git config --add core.sshCommand 'sh x'",
    "git config set core.editor 'sh x'",
    "git -C . config core.fsmonitor x",
    "git --no-pager config core.fsmonitor x",
    "git config -e",
    "git config --edit",
    "git config --remove-section user",
    "git config --unset core.hooksPath",
    "git config USER.NAME.x.fsmonitor x"
  ]
  for (const command of dangerous) {
    test(`asks: ${command}`, async () => {
      expect(await edits(command)).toContain(config)
    })
  }
  test("asks for the file it names: -f, --global", async () => {
    expect(await edits("git config -f .gitmodules submodule.x.update '!sh x'")).toContain(path.join(wt, ".gitmodules"))
    expect(await edits("git config --global core.fsmonitor x")).toContain(path.join(home, ".gitconfig"))
  })
  const ordinary = [
    "git config user.name 'Ada Lovelace'",
    "git config user.email ada@example.com",
    "git config --global user.email ada@example.com",
    "git config pull.rebase true",
    "git config branch.main.remote origin",
    "git config Color.UI auto",
    "git config --unset user.name",
    "git config --get core.fsmonitor",
    "git config --list",
    "git config core.fsmonitor",
    "git status"
  ]
  for (const command of ordinary) {
    test(`quiet: ${command}`, async () => {
      expect(await edits(command)).toEqual([])
    })
  }
})

describe("an untrusted project's rules only tighten; a protected path asks, under --yolo is denied", () => {
  const user = fromConfig({ bash: { "*": "allow", "rm *": "deny" }, edit: "allow" }, home)
  const project = fromConfig({ bash: { "rm *": "allow", "curl *": "deny", "git push *": "ask" }, edit: "allow" }, home)
  const judged = (permission: string, pattern: string) =>
    strictest([check(user, { permission, patterns: [pattern] }), checkLimit(project, { permission, patterns: [pattern] })]).action
  test.each([
    ["bash", "rm victim.txt", "deny"],
    ["bash", "curl -s x", "deny"],
    ["bash", "git push origin", "ask"],
    ["bash", "ls", "allow"],
    ["edit", path.join(wt, "src/a.ts"), "allow"]
  ] as const)("%s %s: %s", (permission, pattern, action) => {
    expect(judged(permission, pattern)).toBe(action)
  })

  const protect = [{ pattern: path.join(wt, ".git", "hooks", "*"), why: "git hooks run on git commands" }]
  test("a written glob that the shell expands to a protected path is protected; one that cannot reach it is not", () => {
    fs.writeFileSync(path.join(wt, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
    const edit = (p: string) => checkProtected(protect, { permission: "edit", patterns: [path.join(wt, p)] }, false).action
    expect(edit(".git/hook?/pre-commit.sample")).toBe("ask")
    expect(edit(".git/*/pre-commit.sample")).toBe("ask")
    expect(edit(".git/{hooks,x}/pre-commit")).toBe("ask")
    expect(edit("**/pre-commit.sample")).toBe("ask")
    expect(edit("src/*.ts")).toBe("allow")
    expect(edit("src/{a,b}.ts")).toBe("allow")
    expect(edit("nothing-here/*")).toBe("allow")
  })

  test("a protected edit asks with its reason; --yolo denies it; other paths and other permissions pass", () => {
    const hook = { permission: "edit", patterns: [path.join(wt, ".git", "hooks", "pre-commit")] }
    expect(checkProtected(protect, hook, false)).toEqual({ action: "ask", pattern: hook.patterns[0]!, why: "git hooks run on git commands" })
    expect(checkProtected(protect, hook, true).action).toBe("deny")
    expect(checkProtected(protect, { permission: "edit", patterns: [path.join(wt, "src", "a.ts")] }, true).action).toBe("allow")
    expect(checkProtected(protect, { permission: "read", patterns: hook.patterns }, true).action).toBe("allow")
    // an allow rule for edit does not outvote it
    expect(strictest([check(user, hook), checkProtected(protect, hook, false)]).action).toBe("ask")
  })
})
