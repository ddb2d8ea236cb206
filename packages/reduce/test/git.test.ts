import { describe, expect, test } from "bun:test"
import { MAX_BYTES, MAX_LINES } from "@reins/truncate"
import * as fs from "node:fs"
import * as path from "node:path"
import { builtinReducers, runReducers } from "../src/index.ts"
import type { ReduceInput } from "../src/Reducer.ts"
import { gitDiff, gitLog, gitStatus } from "../src/reducers/git/index.ts"
import { PATCH_COMMITS } from "../src/reducers/git/diff.ts"
import { LOG_COMMITS, ONELINE_COMMITS } from "../src/reducers/git/log.ts"
import { PATHS_PER_STATE } from "../src/reducers/git/status.ts"

const dir = path.join(import.meta.dir, "..", "fixtures", "git")
const fixture = (name: string) => fs.readFileSync(path.join(dir, `${name}.txt`), "utf8")
const input = (text: string, command?: string, budget: Partial<ReduceInput> = {}): ReduceInput => ({
  text,
  command,
  maxLines: MAX_LINES,
  maxBytes: MAX_BYTES,
  ...budget
})
const pick = (text: string, command?: string) => runReducers(builtinReducers, input(text, command), { minBytes: 0 })

describe("git reducer choice", () => {
  test.each([
    ["git-status", "git -C shop status", "git_status"],
    ["git-status-short", "cd shop && git status -sb", "git_status"],
    ["git-diff", "git --no-pager diff", "git_diff"],
    ["git-log-p", "git log -p -12", "git_diff"],
    ["git-log", "git log", "git_log"],
    ["git-log-oneline", "git log --oneline -n 400", "git_log"]
  ])("%s with %s", (name, command, reducer) => {
    expect(pick(fixture(name), command)?.evidence.reducer).toBe(reducer)
  })

  test.each([
    ["git-status", "git_status"],
    ["git-diff", "git_diff"],
    ["git-log-p", "git_diff"],
    ["git-log", "git_log"],
    ["git-status-porcelain", "git_status"]
  ])("%s without a command", (name, reducer) => {
    expect(pick(fixture(name))?.evidence.reducer).toBe(reducer)
  })

  test("other output is not taken for git", () => {
    const text = "total 12\ndrwxr-xr-x 2 me me 4096 .\n-rw-r--r-- 1 me me 12 a.txt\n".repeat(100)
    for (const r of [gitStatus, gitDiff, gitLog]) expect(r.matches(input(text, "ls -la"))).toBe(false)
  })
})

describe("git_status", () => {
  test("long format: counts per state, a sample of each, hints dropped", () => {
    const r = gitStatus.reduce(input(fixture("git-status"), "git status"))!
    expect(r.reasons).toEqual(["paths_sampled", "noise_dropped"])
    expect(r.text).toContain("Changes not staged for commit: 92 (modified 80, deleted 12)\n")
    expect(r.text).toContain("\t… and 70 more modified\n")
    expect(r.text).toContain("Untracked files: 70 (untracked 70)\n")
    expect(r.text.match(/^\tsrc\/orders\/scratch_\d+\.tmp$/gm)).toHaveLength(PATHS_PER_STATE)
    expect(r.text).not.toContain('(use "git')
    expect(r.text).toStartWith("On branch main\nYour branch and 'origin/main' have diverged,\n")
  })

  test("every conflicted path is kept, however many", () => {
    const conflicts = Array.from({ length: 40 }, (_, i) => `\tboth modified:   src/c${i}.ts`)
    const modified = Array.from({ length: 40 }, (_, i) => `\tmodified:   src/m${i}.ts`)
    const text = [
      "On branch main",
      "You have unmerged paths.",
      "",
      "Unmerged paths:",
      '  (use "git add <file>..." to mark resolution)',
      ...conflicts,
      "",
      "Changes not staged for commit:",
      ...modified,
      ""
    ].join("\n")
    const r = gitStatus.reduce(input(text))!
    for (const c of conflicts) expect(r.text).toContain(c)
    expect(r.text).toContain("Unmerged paths: 40 (both modified 40)")
    expect(r.text).toContain("\t… and 30 more modified")
  })

  test("short format: a tally, conflicts first, a sample per XY code", () => {
    const r = gitStatus.reduce(input(fixture("git-status-short"), "git status -sb"))!
    const lines = r.text.split("\n")
    expect(lines[0]).toBe("## main...origin/main [ahead 10, behind 1]")
    expect(lines[1]).toBe("[3 conflicted, 77 staged, 80 modified, 19 deleted, 23 renamed, 70 untracked]")
    expect(lines.slice(2, 5)).toEqual(["UU src/shared/config.ts", "UU src/shared/routes.ts", "UU src/shared/schema.ts"])
    expect(r.text).toContain('… and 60 more "??"')
    expect(lines.filter((l) => l.startsWith("?? "))).toHaveLength(PATHS_PER_STATE)
  })

  test("porcelain v2", () => {
    const entries = Array.from({ length: 30 }, (_, i) => `1 .M N... 100644 100644 100644 1111111 2222222 src/f${i}.ts`)
    const text = [
      "# branch.oid 1234567",
      "# branch.head main",
      "# branch.ab +2 -0",
      ...entries,
      "u UU N... 100644 100644 100644 100644 a b c src/x.ts",
      "? notes.txt",
      ""
    ].join("\n")
    const r = gitStatus.reduce(input(text, "git status --porcelain=v2 --branch"))!
    expect(r.text).toStartWith("# branch.oid 1234567\n# branch.head main\n# branch.ab +2 -0\n[1 conflicted, 30 modified, 1 untracked]\nu UU ")
    expect(r.text).toContain('… and 20 more " M"')
  })

  test("CRLF gives the same result", () => {
    const text = fixture("git-status")
    expect(gitStatus.reduce(input(text.replace(/\n/g, "\r\n")))!.text).toBe(gitStatus.reduce(input(text))!.text)
  })
})

describe("git_diff", () => {
  const text = fixture("git-diff")
  const r = gitDiff.reduce(input(text, "git diff"))!

  test("file headers and hunk starts are all kept, index/---/+++ lines dropped", () => {
    const kept = new Set(r.text.split("\n"))
    for (const line of text.split("\n")) if (/^(?:diff --|@@)/.test(line)) expect(kept.has(line)).toBe(true)
    expect(r.text).not.toMatch(/^index [0-9a-f]/m)
    expect(r.text).not.toMatch(/^\+\+\+ b\//m)
    expect(r.reasons).toEqual(["hunks_cut", "noise_dropped"])
  })

  test("each long hunk keeps its first and last lines and says how many it cut", () => {
    const hunks = (s: string) => s.split(/^(?=@@|diff --)/m).filter((h) => h.startsWith("@@"))
    const before = hunks(text)
    const after = hunks(r.text)
    expect(after).toHaveLength(before.length)
    let total = 0
    let cut = 0
    for (let i = 0; i < before.length; i++) {
      const orig = before[i]!.split("\n")
        .slice(1)
        .filter((l) => /^[ +\-\\]/.test(l))
      const kept = after[i]!.split("\n")
        .slice(1)
        .filter((l) => l !== "" && !l.startsWith("["))
      total += orig.length
      const marker = kept.find((l) => l.startsWith("… "))
      if (!marker) {
        expect(kept).toEqual(orig)
        continue
      }
      const n = Number(/^… (\d+) lines cut/.exec(marker)![1])
      cut += n
      expect(kept.length - 1 + n).toBe(orig.length)
      expect(kept.slice(0, 6)).toEqual(orig.slice(0, 6))
      expect(kept.slice(-4)).toEqual(orig.slice(-4))
    }
    expect(r.text).toContain(`${cut.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} hunk lines cut`)
  })

  test("a small budget keeps only headers and hunk starts", () => {
    const small = gitDiff.reduce(input(text, "git diff", { maxLines: 400 }))!
    expect(small.text.split("\n").length).toBeLessThanOrEqual(400)
    expect(small.text.match(/^diff --/gm)).toHaveLength(95)
    expect(small.text).not.toMatch(/^[+-]/m)
  })

  test("a wide diff mid-merge (195 files): every changed line and conflict marker that fits is kept, the budget used, never exceeded", () => {
    const files = Array.from({ length: 195 }, (_, f) => {
      const context = (n: number) => Array.from({ length: n }, (_, i) => ` context ${f}.${i} ${"c".repeat(40)}`)
      const conflict = f % 20 === 0
      const body = conflict
        ? [...context(8), "++<<<<<<< HEAD", `+ ours ${f}`, "++=======", `+ theirs ${f}`, "++>>>>>>> topic", ...context(8)]
        : [...context(8), `-old line ${f}`, `+new line ${f}`, ...context(8)]
      const header = conflict ? `diff --cc src/f${f}.ts` : `diff --git a/src/f${f}.ts b/src/f${f}.ts`
      const hunk = conflict ? "@@@ -1,16 -1,16 +1,21 @@@" : "@@ -1,17 +1,17 @@"
      return [header, "index 1111111..2222222 100644", `--- a/src/f${f}.ts`, `+++ b/src/f${f}.ts`, hunk, ...body].join("\n")
    })
    const wide = `${files.join("\n")}\n`
    const budget = { maxLines: MAX_LINES, maxBytes: 40 * 1024 }
    expect(wide.length).toBeGreaterThan(budget.maxBytes * 2)
    const r = gitDiff.reduce(input(wide, "git diff", budget))!
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(budget.maxBytes)
    // more than the headers: most of the budget goes to what changed
    expect(Buffer.byteLength(r.text)).toBeGreaterThan(budget.maxBytes * 0.75)
    for (let f = 0; f < 195; f++) {
      if (f % 20 === 0) for (const marker of ["++<<<<<<< HEAD", "++=======", "++>>>>>>> topic"]) expect(r.text).toContain(`${marker}\n`)
      else {
        expect(r.text).toContain(`-old line ${f}\n`)
        expect(r.text).toContain(`+new line ${f}\n`)
      }
    }
    expect(r.text).toContain("lines cut (+0 -0)")
  })

  test("more budget never keeps fewer changed lines; context goes around every change, not after the first", () => {
    const files = Array.from({ length: 60 }, (_, f) => {
      const ctx = (n: number, at: string) => Array.from({ length: n }, (_, i) => ` ctx ${f}.${at}${i} ${"c".repeat(30)}`)
      return [
        `diff --git a/f${f} b/f${f}`,
        "index 1..2 100644",
        `--- a/f${f}`,
        `+++ b/f${f}`,
        "@@ -1,62 +1,62 @@",
        ...ctx(20, "a"),
        `-old ${f}a`,
        `+new ${f}a`,
        ...ctx(20, "b"),
        `-old ${f}b`,
        `+new ${f}b`,
        ...ctx(20, "c")
      ].join("\n")
    })
    const wide = `${files.join("\n")}\n`
    const kept = (kb: number) => {
      const r = gitDiff.reduce(input(wide, "git diff", { maxLines: MAX_LINES, maxBytes: kb * 1024 }))!
      expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(kb * 1024)
      return r.text
    }
    const small = kept(20)
    const large = kept(40)
    expect((small.match(/^[+-](?:old|new) /gm) ?? []).length).toBe(240)
    expect((large.match(/^[+-](?:old|new) /gm) ?? []).length).toBe(240)
    // the second change of a hunk has context before it too
    expect(large).toMatch(/ ctx 7\.b19 c+\n-old 7b\n/)
  })

  test("git log -p: commit headers kept, messages cut, commits bounded", () => {
    const logp = fixture("git-log-p")
    const one = gitDiff.reduce(input(logp, "git log -p -12"))!
    expect(one.text.match(/^commit [0-9a-f]{40}$/gm)).toHaveLength(12)
    expect(one.reasons).toContain("commits_cut")
    const commits = logp.split(/^(?=commit )/m)
    const many = Array.from({ length: 30 }, (_, i) => commits[i % commits.length]!.replace(/^commit [0-9a-f]{6}/, `commit ${String(i).padStart(6, "0")}`)).join(
      ""
    )
    const bounded = gitDiff.reduce(input(many, "git log -p"))!
    expect(bounded.text.match(/^commit /gm)).toHaveLength(PATCH_COMMITS)
    expect(bounded.text).toContain(`… ${30 - PATCH_COMMITS} more commits not shown; oldest: 000029`)
  })
})

describe("git_log", () => {
  test("the newest commits with their headers, bodies cut, the rest counted", () => {
    const text = fixture("git-log")
    const r = gitLog.reduce(input(text, "git log"))!
    const all = text.match(/^commit [0-9a-f]{40}$/gm)!
    const shown = r.text.match(/^commit [0-9a-f]{40}$/gm)!
    expect([...shown]).toEqual(all.slice(0, LOG_COMMITS))
    expect(r.text.match(/^Author: /gm)).toHaveLength(LOG_COMMITS)
    expect(r.text.match(/^Date: {3}/gm)).toHaveLength(LOG_COMMITS)
    expect(r.text).toMatch(/^ {4}… \d+ more lines$/m)
    expect(r.text).toContain(`… ${all.length - LOG_COMMITS} more commits not shown; oldest: ${all.at(-1)!.slice(7, 19)} "initial import of the shop sources"`)
    expect(r.reasons).toEqual(["commits_cut"])
  })

  test("one line per commit", () => {
    const text = fixture("git-log-oneline")
    const lines = text.trimEnd().split("\n")
    const r = gitLog.reduce(input(text, "git log --oneline"))!
    expect(r.text).toStartWith(`${lines.slice(0, ONELINE_COMMITS).join("\n")}\n`)
    expect(r.text).toContain(`… ${lines.length - ONELINE_COMMITS} more commits`)
  })

  test("a short log is left alone", () => {
    const text = fixture("git-log")
      .split(/^(?=commit )/m)
      .slice(0, 5)
      .join("")
      .replace(/\n {4}The .*$/gm, "")
    expect(gitLog.reduce(input(text, "git log"))).toBeUndefined()
  })
})
