// Repositories a sandboxed command makes — a `git init` where there was none, a nested repository the
// project then links, a new submodule's git dir — keep what the command made, but not what runs code
// later outside the sandbox: their hooks and the config keys that name a command. Real git, real bubblewrap.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { probeBwrap, Sandbox, stripCodeKeys } from "../src/index.ts"
import { spawned } from "./support.ts"

const available = probeBwrap()
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-newrepos-test-")))
const home = path.join(root, "home")
const dataDir = path.join(home, ".local", "share", "reins")
fs.mkdirSync(dataDir, { recursive: true })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// a stand-in for the permission scan's table (the runtime gives the real one)
const codeKey = (key: string) => /^(core\.(fsmonitor|hookspath|pager)|filter\..*|include\..*|includeif\..*|alias\..*|diff\..*\.textconv)$/.test(key)

const gitEnv = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_CONFIG_NOSYSTEM: "1" }
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C", ...gitEnv }
const hostGit = (cwd: string, ...args: ReadonlyArray<string>) => spawnSync("git", [...args], { cwd, env: { ...process.env, ...env }, encoding: "utf8" })

/** Runs `script` sandboxed in `project`, watched as the bash tool watches it. */
const run = (script: string, project: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const launch = yield* sandbox.wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd: project, env })
      const settle = sandbox.watchGit()
      const r = yield* Effect.promise(() => spawned(launch.file, launch.args, project, launch.env, launch.readFds))
      return { ...r, note: settle() }
    }).pipe(Effect.provide(Sandbox.layer({ config: {}, places: { project, home, dataDir }, gitCodeKey: codeKey })), Effect.scoped)
  )

const PAYLOAD = "touch PWNED; false"

describe("stripCodeKeys", () => {
  const rows: ReadonlyArray<[string, string, ReadonlyArray<string>]> = [
    ["[core]\n\tbare = false\n\tfsmonitor = touch x\n", "[core]\n\tbare = false\n", ["core.fsmonitor"]],
    [
      '[filter "lfs"]\n\tclean = evil %f\n\tsmudge = evil\n[user]\n\tname = t\n',
      '[filter "lfs"]\n[user]\n\tname = t\n',
      ["filter.lfs.clean", "filter.lfs.smudge"]
    ],
    ["[include]\n\tpath = /tmp/x\n", "[include]\n", ["include.path"]],
    ['[includeIf "gitdir:/"]\n\tpath = /tmp/x\n', '[includeIf "gitdir:/"]\n', ["includeif.gitdir:/.path"]],
    ["[core] fsmonitor = evil\n", "[core]\n", ["core.fsmonitor"]],
    ["[CORE]\n\tFsMonitor = evil\n", "[CORE]\n", ["core.fsmonitor"]],
    ["[core]\n\tpager = a \\\n  b\n\tbare = false\n", "[core]\n\tbare = false\n", ["core.pager"]],
    ['[remote "origin"]\n\turl = https://x\n', '[remote "origin"]\n\turl = https://x\n', []]
  ]
  for (const [text, stripped, removed] of rows) {
    test(JSON.stringify(text), () => {
      expect(stripCodeKeys(text, codeKey)).toEqual({ text: stripped, removed })
    })
  }
})

describe.skipIf(process.platform !== "linux" || !available.available)("repositories a sandboxed command makes", () => {
  test("git init where there was none: the repository stays, its planted hook and fsmonitor go; git on the host runs nothing", async () => {
    const project = path.join(root, "plain")
    fs.mkdirSync(project)
    const r = await run(
      `git init -q . && git config core.fsmonitor '${PAYLOAD}' && git config user.name me && mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch HOOKED\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
      project
    )
    expect(r.code).toBe(0)
    expect(r.note).toContain(".git/hooks/pre-commit")
    expect(r.note).toContain("core.fsmonitor")
    const config = fs.readFileSync(path.join(project, ".git", "config"), "utf8")
    expect(config).not.toContain("fsmonitor")
    expect(config).toContain("name = me")
    fs.writeFileSync(path.join(project, "a.txt"), "a\n")
    hostGit(project, "add", ".")
    hostGit(project, "commit", "-qm", "x")
    hostGit(project, "status")
    expect(fs.existsSync(path.join(project, "PWNED"))).toBe(false)
    expect(fs.existsSync(path.join(project, "HOOKED"))).toBe(false)
    // a later ordinary command in it is told nothing
    expect((await run("git status --short", project)).note).toBeUndefined()
  })

  test("a nested repository the project links: its planted config goes, so git status in the project runs nothing", async () => {
    const project = path.join(root, "outer")
    fs.mkdirSync(project)
    hostGit(project, "init", "-q", ".")
    hostGit(project, "commit", "-q", "--allow-empty", "-m", "first")
    const r = await run(
      `git init -q sub && git -C sub commit -q --allow-empty -m x && printf '[core]\\n\\tfsmonitor = ${PAYLOAD}\\n' >> sub/.git/config && git add sub`,
      project
    )
    expect(r.code).toBe(0)
    expect(r.note).toContain("sub/.git/config (core.fsmonitor)")
    fs.rmSync(path.join(project, "sub", "PWNED"), { force: true })
    hostGit(project, "status")
    expect(fs.existsSync(path.join(project, "PWNED"))).toBe(false)
    expect(fs.existsSync(path.join(project, "sub", "PWNED"))).toBe(false)
  })

  test("a new submodule git dir under .git/modules: its planted config goes", async () => {
    const project = path.join(root, "modules")
    fs.mkdirSync(project)
    hostGit(project, "init", "-q", ".")
    hostGit(project, "commit", "-q", "--allow-empty", "-m", "first")
    const r = await run(
      `mkdir -p .git/modules && git init -q --separate-git-dir=.git/modules/x x && git -C x config core.fsmonitor '${PAYLOAD}' && git -C x commit -q --allow-empty -m x && git add x`,
      project
    )
    expect(r.code).toBe(0)
    expect(r.note).toContain(".git/modules/x/config (core.fsmonitor)")
    expect(fs.readFileSync(path.join(project, ".git", "modules", "x", "config"), "utf8")).not.toContain("fsmonitor")
    // the command's own git ran it inside the sandbox; what counts is git on the host afterwards
    fs.rmSync(path.join(project, "x", "PWNED"), { force: true })
    hostGit(project, "status")
    expect(fs.existsSync(path.join(project, "x", "PWNED"))).toBe(false)
  })
})
