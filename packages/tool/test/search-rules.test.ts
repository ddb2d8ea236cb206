// Issue 13 item 4: grep and glob apply the read rules and .gitignore.
import { describe, expect, test } from "bun:test"
import { defaultRules, type Rule } from "@reins/permission"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { glob } from "../src/builtin/glob.ts"
import { grep } from "../src/builtin/grep.ts"
import { read } from "../src/builtin/read.ts"
import { runTool, tempDir } from "./helpers.ts"

const put = (cwd: string, rel: string, content: string) => {
  const file = path.join(cwd, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/** A project whose protected files all hold a secret the model must not see unasked. */
const project = () => {
  const cwd = tempDir()
  put(cwd, ".env", "TOKEN=secret-dotenv\n")
  put(cwd, ".env.local", "TOKEN=secret-local\n")
  put(cwd, "config/.env.production", "TOKEN=secret-production\n")
  put(cwd, "keys/deploy.txt", "TOKEN=secret-custom\n")
  put(cwd, ".env.example", "TOKEN=placeholder\n")
  put(cwd, "src/app.ts", "const TOKEN = process.env.TOKEN\n")
  const rules: ReadonlyArray<Rule> = [...defaultRules, { permission: "read", pattern: path.join(cwd, "keys", "*"), action: "deny" }]
  return { cwd, rules }
}

describe("grep and glob follow the read rules", () => {
  test("a project-wide grep leaves out every protected file and says which and why", async () => {
    const { cwd, rules } = project()
    // asks would be allowed here: the walk must still not read them without a question
    for (const nonInteractive of ["deny", "allow"] as const) {
      const r = await runTool(grep, { pattern: "TOKEN" }, { cwd, rules, nonInteractive })
      expect(r._tag).toBe("Success")
      const out: string = r.success.output
      expect(out).not.toContain("secret-")
      expect(out).toContain("Found 2 matches")
      expect(out).toContain(`${path.join(cwd, ".env.example")}:\n  Line 1: TOKEN=placeholder`)
      expect(out).toContain(path.join(cwd, "src/app.ts"))
      expect(out).toContain("3 files were left out because the permission rules ask before reading them")
      expect(out).toContain('read "*.env"')
      expect(out).toContain('read "*.env.*"')
      for (const name of [".env", ".env.local", "config/.env.production"]) expect(out).toContain(name)
      expect(out).toContain("1 file was left out because the permission rules deny reading it")
      expect(out).not.toContain("keys/deploy.txt")
      expect(r.success.metadata.skippedByRules).toBe(4)
    }
  })

  test("a protected file given as the path asks read like the read tool; a denied one fails", async () => {
    const { cwd, rules } = project()
    for (const file of [".env", ".env.local", "config/.env.production"]) {
      const denied = await runTool(grep, { pattern: "TOKEN", path: file }, { cwd, rules, nonInteractive: "deny" })
      expect(denied._tag).toBe("Failure")
      expect(denied.failure.reason).toBe("permission")
      expect(denied.failure.message).toContain("read")
      const viaRead = await runTool(read, { filePath: file }, { cwd, rules, nonInteractive: "deny" })
      expect(viaRead.failure.reason).toBe("permission")
      // the question answered yes: the file is searched
      const allowed = await runTool(grep, { pattern: "TOKEN", path: file }, { cwd, rules, nonInteractive: "allow" })
      expect(allowed.success.output).toContain("TOKEN=secret-")
    }
    const custom = await runTool(grep, { pattern: "TOKEN", path: "keys/deploy.txt" }, { cwd, rules, nonInteractive: "allow" })
    expect(custom.failure.reason).toBe("permission")
    expect(custom.failure.message).toContain("deny")
    const example = await runTool(grep, { pattern: "TOKEN", path: ".env.example" }, { cwd, rules, nonInteractive: "deny" })
    expect(example.success.output).toContain("TOKEN=placeholder")
  })

  test("a symlink to a protected file is judged as that file, by read and by grep", async () => {
    const { cwd, rules } = project()
    fs.symlinkSync(path.join(cwd, ".env"), path.join(cwd, "innocent.txt"))
    fs.symlinkSync(path.join(cwd, "keys"), path.join(cwd, "docs"))
    for (const [tool, args] of [
      [read, { filePath: "innocent.txt" }],
      [grep, { pattern: "TOKEN", path: "innocent.txt" }],
      [grep, { pattern: "TOKEN", path: "docs" }]
    ] as const) {
      const r = await runTool(tool, args, { cwd, rules, nonInteractive: "deny" })
      if (r._tag === "Success") expect(r.success.output).not.toContain("secret-")
      else expect(r.failure.reason).toBe("permission")
    }
  })

  test("a grep on a directory under a broad read ask asks once for the search; a broad read deny fails it", async () => {
    const { cwd } = project()
    const ask: ReadonlyArray<Rule> = [...defaultRules, { permission: "read", pattern: "*", action: "ask" }]
    const denied = await runTool(grep, { pattern: "TOKEN", path: "src" }, { cwd, rules: ask, nonInteractive: "deny" })
    expect(denied.failure.reason).toBe("permission")
    const approved = await runTool(grep, { pattern: "TOKEN", path: "src" }, { cwd, rules: ask, nonInteractive: "allow" })
    expect(approved.success.output).toContain("src/app.ts")
    const off: ReadonlyArray<Rule> = [...defaultRules, { permission: "read", pattern: "*", action: "deny" }]
    const none = await runTool(grep, { pattern: "TOKEN" }, { cwd, rules: off, nonInteractive: "allow" })
    expect(none.failure.reason).toBe("permission")
  })

  test("glob leaves protected files out of its listing and names the asked ones", async () => {
    const { cwd, rules } = project()
    const r = await runTool(glob, { pattern: "**/*" }, { cwd, rules })
    const out: string = r.success.output
    const listed = out.split("\n\n")[0]!.split("\n")
    expect(listed.sort()).toEqual([path.join(cwd, ".env.example"), path.join(cwd, "src/app.ts")])
    expect(out).toContain("3 files were left out because the permission rules ask")
    expect(out).toContain("1 file was left out because the permission rules deny")
    // a pattern that matches none of them says nothing about them
    const ts = await runTool(glob, { pattern: "**/*.ts" }, { cwd, rules })
    expect(ts.success.output).toBe(path.join(cwd, "src/app.ts"))
  })

  test("an ordinary project search stays quiet: no notes", async () => {
    const cwd = tempDir()
    put(cwd, "a.ts", "needle\n")
    put(cwd, ".gitignore", "dist/\n")
    put(cwd, "dist/a.js", "needle\n")
    const g = await runTool(grep, { pattern: "needle" }, { cwd })
    expect(g.success.output).toBe(`Found 1 match\n\n${path.join(cwd, "a.ts")}:\n  Line 1: needle`)
    const l = await runTool(glob, { pattern: "**/*.ts" }, { cwd })
    expect(l.success.output).toBe(path.join(cwd, "a.ts"))
  })
})

const git = (cwd: string, ...args: Array<string>) => spawnSync("git", args, { cwd, encoding: "utf8" })

/** A git repository with every kind of ignore rule; each file holds "needle". */
const ignoredProject = () => {
  const cwd = tempDir()
  git(cwd, "init", "-q")
  put(cwd, ".gitignore", "*.log\nbuild/\n!keep.log\n/rootonly.txt\n")
  put(cwd, ".git/info/exclude", "excluded.txt\n")
  put(cwd, "sub/.gitignore", "local.txt\n!important.log\n")
  const files: Record<string, boolean> = {
    "a.log": false, // *.log
    "keep.log": true, // negation re-includes it
    "build/out.js": false, // ignored directory
    "sub/local.txt": false, // nested .gitignore
    "local.txt": true, // the nested rule holds only below sub/
    "sub/important.log": true, // a deeper negation wins over the root's *.log
    "excluded.txt": false, // .git/info/exclude
    "rootonly.txt": false, // anchored pattern
    "sub/rootonly.txt": true,
    "src/main.ts": true
  }
  for (const rel of Object.keys(files)) put(cwd, rel, "needle\n")
  return { cwd, files }
}

describe("grep and glob skip what .gitignore ignores", () => {
  test("nested .gitignore files, negations, anchors and .git/info/exclude, as git sees them", async () => {
    const { cwd, files } = ignoredProject()
    // git itself agrees with the table
    const ignoredByGit = git(cwd, "check-ignore", ...Object.keys(files))
      .stdout.split("\n")
      .filter(Boolean)
      .sort()
    expect(ignoredByGit).toEqual(
      Object.keys(files)
        .filter((f) => !files[f])
        .sort()
    )
    const g = await runTool(grep, { pattern: "needle" }, { cwd })
    const l = await runTool(glob, { pattern: "**/*" }, { cwd })
    for (const [rel, kept] of Object.entries(files)) {
      expect([rel, g.success.output.includes(`${path.join(cwd, rel)}:`)]).toEqual([rel, kept])
      expect([rel, l.success.output.split("\n").includes(path.join(cwd, rel))]).toEqual([rel, kept])
    }
  })

  test("include_ignored searches ignored files too; an ignored directory given as the path is searched", async () => {
    const { cwd, files } = ignoredProject()
    const g = await runTool(grep, { pattern: "needle", include_ignored: true }, { cwd })
    for (const rel of Object.keys(files)) expect(g.success.output).toContain(`${path.join(cwd, rel)}:`)
    const l = await runTool(glob, { pattern: "**/*.log", include_ignored: true }, { cwd })
    expect(l.success.output).toContain(path.join(cwd, "a.log"))
    const build = await runTool(grep, { pattern: "needle", path: "build" }, { cwd })
    expect(build.success.output).toContain(path.join(cwd, "build/out.js"))
  })

  test("an empty result says that ignored files were not searched and how to search them", async () => {
    const { cwd } = ignoredProject()
    const r = await runTool(grep, { pattern: "needle", include: "*.js" }, { cwd })
    expect(r.success.output).toContain("No files found")
    expect(r.success.output).toContain("include_ignored: true")
  })
})
