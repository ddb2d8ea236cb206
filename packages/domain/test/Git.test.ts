// Issue 24 item 6: the git commands reins runs by itself never run a cloned repository's code.
// Each row is a repository whose config makes plain `git status` run a program (the control proves
// the trap is live); through safeGit, nothing runs and the status is still right.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { filterOverrides, safeGit } from "../src/Git.ts"

const git = (cwd: string, ...args: Array<string>) => execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" })

/** A repository with one committed file, `a.txt`, whose contents are then changed (same size, new mtime: git must look inside). */
const repository = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-git-")))
  git(dir, "init", "-q", "-b", "main")
  fs.writeFileSync(path.join(dir, "a.txt"), "one\n")
  fs.writeFileSync(path.join(dir, "b.txt"), "same\n")
  git(dir, "add", "a.txt", "b.txt")
  git(dir, "commit", "-qm", "init")
  return dir
}

/** A command that leaves a marker file when it runs (and, as a filter, passes its input through). */
const marker = (dir: string) => path.join(dir, "..", `${path.basename(dir)}-ran`)
const leaves = (dir: string) => `sh -c 'touch ${marker(dir)}; cat'`
const ran = (dir: string) => fs.existsSync(marker(dir))
const appendConfig = (dir: string, text: string) => fs.appendFileSync(path.join(dir, ".git", "config"), text)
const hook = (dir: string, hooks: string, name: string) => {
  fs.mkdirSync(hooks, { recursive: true })
  fs.writeFileSync(path.join(hooks, name), `#!/bin/sh\ntouch ${marker(dir)}\n`, { mode: 0o755 })
}
/**
 * Rewrites a.txt with the same size and a later mtime, so status has to hash it (through any filter),
 * and gives b.txt a later mtime alone, so status refreshes its entry and writes the index (which runs
 * post-index-change) — unless it is told not to.
 */
let bump = 0
const touchSameSize = (dir: string) => {
  const later = new Date(Date.now() + 5_000 + ++bump * 1_000)
  fs.writeFileSync(path.join(dir, "a.txt"), "two\n")
  for (const name of ["a.txt", "b.txt"]) fs.utimesSync(path.join(dir, name), later, later)
}

const traps: ReadonlyArray<{ readonly name: string; readonly plant: (dir: string) => void }> = [
  { name: "core.fsmonitor", plant: (dir) => appendConfig(dir, `[core]\n\tfsmonitor = "${leaves(dir)}"\n`) },
  { name: "a post-index-change hook", plant: (dir) => hook(dir, path.join(dir, ".git", "hooks"), "post-index-change") },
  {
    name: "core.hooksPath to a folder the repository ships",
    plant: (dir) => {
      hook(dir, path.join(dir, "tools", "hooks"), "post-index-change")
      appendConfig(dir, "[core]\n\thooksPath = tools/hooks\n")
    }
  },
  {
    name: "a filter's clean command named by .gitattributes",
    plant: (dir) => {
      fs.writeFileSync(path.join(dir, ".gitattributes"), "a.txt filter=lfs2\n")
      appendConfig(dir, `[filter "lfs2"]\n\tclean = "${leaves(dir)}"\n`)
    }
  },
  {
    name: "a filter's long-running process",
    plant: (dir) => {
      fs.writeFileSync(path.join(dir, ".gitattributes"), "*.txt filter=proc\n")
      appendConfig(dir, `[filter "proc"]\n\tprocess = "${leaves(dir)}"\n\trequired = true\n`)
    }
  },
  {
    name: "core.fsmonitor from an included file",
    plant: (dir) => {
      fs.writeFileSync(path.join(dir, "extra.gitconfig"), `[core]\n\tfsmonitor = "${leaves(dir)}"\n`)
      appendConfig(dir, "[include]\n\tpath = ../extra.gitconfig\n")
    }
  },
  {
    name: "a submodule whose own config has core.fsmonitor",
    plant: (dir) => {
      const sub = path.join(dir, "sub")
      fs.mkdirSync(sub)
      git(sub, "init", "-q")
      fs.writeFileSync(path.join(sub, "s.txt"), "s\n")
      git(sub, "add", "s.txt")
      git(sub, "commit", "-qm", "s")
      const sha = git(sub, "rev-parse", "HEAD").trim()
      fs.writeFileSync(path.join(dir, ".gitmodules"), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n')
      git(dir, "update-index", "--add", "--cacheinfo", `160000,${sha},sub`)
      fs.appendFileSync(path.join(sub, ".git", "config"), `[core]\n\tfsmonitor = "${leaves(dir)}"\n`)
      fs.writeFileSync(path.join(sub, "s.txt"), "changed\n")
    }
  }
]

const status = (dir: string) => Effect.runPromise(safeGit(dir, ["status", "--short", "--branch", "--ignore-submodules=all"], { timeoutMs: 30_000 }))

describe("safeGit: a repository's config runs nothing", () => {
  for (const trap of traps) {
    test(trap.name, async () => {
      const dir = repository()
      trap.plant(dir)
      touchSameSize(dir)
      // the control: plain git status runs the trap
      spawnSync("git", ["status", "--short"], { cwd: dir })
      expect(ran(dir)).toBe(true)
      fs.rmSync(marker(dir))
      touchSameSize(dir)
      const out = await status(dir)
      expect(ran(dir)).toBe(false)
      expect(out).toContain("## main")
      expect(out).toContain(" M a.txt")
      // and the branch, as the terminal UI reads it
      expect(await Effect.runPromise(safeGit(dir, ["symbolic-ref", "--short", "-q", "HEAD"], { timeoutMs: 30_000 }))).toBe("main\n")
      expect(ran(dir)).toBe(false)
    })
  }

  test("an ordinary repository: the same status plain git gives", async () => {
    const dir = repository()
    fs.writeFileSync(path.join(dir, "new.txt"), "n\n")
    touchSameSize(dir)
    const plain = spawnSync("git", ["status", "--short", "--branch"], { cwd: dir, encoding: "utf8" }).stdout
    expect(await status(dir)).toBe(plain)
  })

  test("outside a repository, or with git failing: undefined, no error", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-nogit-")))
    expect(await status(dir)).toBeUndefined()
  })

  test("filterOverrides blanks every command of every filter driver named in the config", () => {
    const list = ["core.bare\nfalse", "filter.a.clean\nx", "filter.b.process\ny", "filter.with.dots.smudge\nz", "diff.a.textconv\nq", ""].join("\0")
    const args = filterOverrides(list)
    for (const name of ["a", "b", "with.dots"]) {
      for (const key of ["clean", "smudge", "process"]) expect(args).toContain(`filter.${name}.${key}=`)
      expect(args).toContain(`filter.${name}.required=false`)
    }
    expect(args.filter((a) => a.startsWith("filter.")).length).toBe(12)
  })
})
