// Git code-running files a sandboxed command creates (bubblewrap can only keep read-only what exists at
// start): real commands in real bubblewrap, then the sandbox's watch takes away what appeared and says so.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Places, probeBwrap, Sandbox } from "../src/index.ts"
import { spawned } from "./support.ts"

const available = probeBwrap()
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-gitguard-test-")))
const home = path.join(root, "home")
const dataDir = path.join(home, ".local", "share", "reins")
fs.mkdirSync(dataDir, { recursive: true })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const gitEnv = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_CONFIG_NOSYSTEM: "1" }
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C", ...gitEnv }

/** A fresh repository with one commit and no hooks directory (as after a clone with an empty template). */
const repository = (name: string) => {
  const repo = path.join(root, name)
  fs.mkdirSync(repo)
  const git = (...args: ReadonlyArray<string>) => spawnSync("git", [...args], { cwd: repo, env: { ...process.env, ...env }, encoding: "utf8" })
  git("init", "-q", "--template=", ".")
  fs.writeFileSync(path.join(repo, "a.txt"), "a\n")
  git("add", ".")
  git("commit", "-qm", "first")
  return { repo, git }
}

/** Runs `script` sandboxed in `cwd`, watched as the bash tool watches it: the output and the note. */
const run = (script: string, cwd: string, places: Omit<Places, "home" | "dataDir">) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const launch = yield* sandbox.wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd, env })
      const settle = sandbox.watchGit()
      const r = yield* Effect.promise(() => spawned(launch.file, launch.args, cwd, launch.env, launch.readFds))
      return { ...r, sandboxed: launch.sandboxed, note: settle() }
    }).pipe(Effect.provide(Sandbox.layer({ config: {}, places: { ...places, home, dataDir } })), Effect.scoped)
  )

describe.skipIf(process.platform !== "linux" || !available.available)("git code-running files a sandboxed command creates", () => {
  test("a new commondir, config.worktree, info/attributes and hooks/ are created in the sandbox, then taken away and told", async () => {
    const { repo, git } = repository("new-files")
    const evil = path.join(root, "evil")
    const r = await run(
      [
        `mkdir -p ${evil}/hooks && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > ${evil}/config`,
        `echo ${evil} > .git/commondir`,
        "printf '[core]\\n\\thooksPath = /tmp\\n' > .git/config.worktree",
        "mkdir -p .git/info && echo '* filter=x' > .git/info/attributes",
        "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "echo made"
      ].join(" && "),
      repo,
      { project: repo }
    )
    // bubblewrap let the command make them (they did not exist to be bound read-only)
    expect(r).toMatchObject({ code: 0, sandboxed: true })
    expect(r.output).toContain("made")
    for (const p of [".git/commondir", ".git/config.worktree", ".git/info/attributes", ".git/hooks"]) {
      expect([p, fs.existsSync(path.join(repo, p))]).toEqual([p, false])
      expect(r.note).toContain(p)
    }
    expect(r.note).toContain("reins's sandbox undid")
    // git on the host is as before: no commondir to follow, no hook
    expect(git("status", "--porcelain").status).toBe(0)
    git("commit", "-q", "--allow-empty", "-m", "second")
    expect(fs.existsSync(path.join(repo, "pwned"))).toBe(false)
  })

  test("ordinary git work inside leaves nothing to undo", async () => {
    const { repo, git } = repository("ordinary")
    const r = await run("echo b > b.txt && git add b.txt && git commit -qm second && git branch side && git tag v1 && git log --oneline | wc -l", repo, {
      project: repo
    })
    expect(r.output.trim()).toBe("2")
    expect(r.note).toBeUndefined()
    expect(git("log", "--oneline").stdout.trim().split("\n")).toHaveLength(2)
  })

  test("a hooks directory holding only git's samples (git init run again) stays", async () => {
    const { repo } = repository("samples")
    const r = await run("mkdir .git/hooks && touch .git/hooks/pre-commit.sample", repo, { project: repo })
    expect(r.note).toBeUndefined()
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "pre-commit.sample"))).toBe(true)
  })

  test("a submodule's git dir without hooks: a hook planted there is taken away", async () => {
    const { repo } = repository("with-module")
    const module = path.join(repo, ".git", "modules", "sub")
    fs.mkdirSync(module, { recursive: true })
    fs.writeFileSync(path.join(module, "config"), "[core]\n")
    const r = await run("mkdir -p .git/modules/sub/hooks && echo 'touch pwned' > .git/modules/sub/hooks/post-checkout", repo, { project: repo })
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(module, "hooks"))).toBe(false)
    expect(r.note).toContain(".git/modules/sub/hooks")
  })

  test("a .git file (a worktree, a submodule's checkout) pointed elsewhere is put back", async () => {
    const { repo } = repository("main-of-worktree")
    const checkout = path.join(root, "checkout")
    fs.mkdirSync(checkout)
    fs.writeFileSync(path.join(checkout, ".git"), `gitdir: ${repo}/.git\n`)
    const r = await run(`echo 'gitdir: ${root}/evil' > .git && cat .git`, checkout, { project: checkout })
    expect(r.output).toContain("evil")
    expect(fs.readFileSync(path.join(checkout, ".git"), "utf8")).toBe(`gitdir: ${repo}/.git\n`)
    expect(r.note).toContain(".git")
  })

  test("from a subdirectory of a repository: a .git made there (it would shadow the repository's) is taken away", async () => {
    const { repo } = repository("outer")
    const sub = path.join(repo, "sub")
    fs.mkdirSync(sub)
    const r = await run("git init -q . && echo made", sub, { project: sub, repository: repo })
    expect(r.output).toContain("made")
    expect(fs.existsSync(path.join(sub, ".git"))).toBe(false)
    expect(r.note).toContain(".git")
  })
})
