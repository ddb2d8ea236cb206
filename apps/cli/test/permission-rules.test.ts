// Permission rules through the real CLI: the bash scan in a non-interactive run, and
// `reins debug permission` as a script would use it.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

describe("bash permissions in a run", () => {
  test("a denied command hidden behind sudo in a list fails the whole call; nothing runs", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "touch ran.txt && sudo /bin/rm -rf victim" } }] }, { text: "could not" }], {
      permission: { bash: { "*": "allow", "rm *": "deny" } }
    })
    fs.mkdirSync(path.join(p.cwd, "victim"))
    const r = await reins(["run", "--format", "json", "clean"], p)
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, "victim"))).toBe(true)
    expect(fs.existsSync(path.join(p.cwd, "ran.txt"))).toBe(false)
    const failed = events(r.stdout).find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "error")
    expect(failed!.part.state.error).toContain(`deny bash for "rm -rf victim"`)
    // the model was told, in the next request
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("rm -rf victim")
  })

  test("a command that is asked is rejected by the non-interactive policy, with the events", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `eval "echo hi"` } }] }, { text: "ok" }], { permission: { bash: "allow" } })
    const r = await reins(["run", "--format", "json", "go"], p)
    expect(r.code).toBe(0)
    const evs = events(r.stdout)
    const asked = evs.find((e) => e.type === "permission.asked")
    expect(asked).toMatchObject({
      permission: "bash",
      patterns: [`eval "echo hi"`, "eval echo hi"],
      always: [`eval "echo hi"`, "eval echo hi"],
      opaque: "eval runs a string as shell code"
    })
    expect(evs.find((e) => e.type === "permission.replied")).toMatchObject({ reply: "reject", by: "policy" })
  })
})

describe("reins debug permission", () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-debug-perm-")))
  const config = path.join(dir, "rules.json")
  fs.writeFileSync(config, JSON.stringify({ permission: { bash: { "*": "allow", "rm *": "deny", "git push *": "ask" } } }))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, REINS_DATA_DIR: dir, NO_COLOR: "1" }
  const run = (...args: Array<string>) => reins(["debug", "permission", ...args], { cwd: dir, dataDir: dir, env })

  test("one request per command; deny if any is denied; the deciding rule is named", async () => {
    const r = await run("--config", config, "git status && rm -rf x")
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.decision).toBe("deny")
    expect(out.requests).toEqual([
      {
        permission: "bash",
        patterns: ["git status"],
        always: ["git status *"],
        action: "allow",
        rule: { permission: "bash", pattern: "*", action: "allow" },
        directory: dir
      },
      {
        permission: "bash",
        patterns: ["rm -rf x"],
        always: ["rm *"],
        action: "deny",
        rule: { permission: "bash", pattern: "rm *", action: "deny" },
        directory: dir
      }
    ])
  })

  test("ask wins over allow; allow when everything is allowed", async () => {
    expect(JSON.parse((await run("--config", config, "git status; git push origin main")).stdout).decision).toBe("ask")
    expect(JSON.parse((await run("--config", config, "ls | wc -l")).stdout).decision).toBe("allow")
  })

  test("file tools: paths outside the project and .env reads ask", async () => {
    const env = JSON.parse((await run("--tool", "read", ".env")).stdout)
    expect(env.decision).toBe("ask")
    expect(env.requests).toEqual([expect.objectContaining({ permission: "read", patterns: [path.join(dir, ".env")], action: "ask" })])
    const outside = JSON.parse((await run("--tool", "edit", "/etc/hosts")).stdout)
    expect(outside.requests.map((q: any) => [q.permission, q.action])).toEqual([
      ["external_directory", "ask"],
      ["edit", "allow"]
    ])
  })

  test("a link to .env gets the read tool's verdict, for read and for bash's cat (issue 25 item 4)", async () => {
    const denyEnv = path.join(dir, "deny-env.json")
    fs.writeFileSync(denyEnv, JSON.stringify({ permission: { bash: { "*": "allow" }, read: { "*.env": "deny" } } }))
    fs.writeFileSync(path.join(dir, ".env"), "S=1")
    fs.symlinkSync(".env", path.join(dir, "link"))
    for (const args of [["--tool", "read", "link"], ["cat link"], ["cat < link"], ["git show HEAD:.env"]]) {
      const out = JSON.parse((await run("--config", denyEnv, ...args)).stdout)
      expect([args, out.decision]).toEqual([args, "deny"])
    }
    const read = JSON.parse((await run("--config", denyEnv, "--tool", "read", "link")).stdout)
    const cat = JSON.parse((await run("--config", denyEnv, "cat link")).stdout)
    expect(cat.requests.find((q: any) => q.permission === "read").patterns).toEqual(read.requests.find((q: any) => q.permission === "read").patterns)
    // a tree read whole that holds the file is denied too, naming it; one without it, and other files, are allowed
    fs.mkdirSync(path.join(dir, "lib"), { recursive: true })
    fs.writeFileSync(path.join(dir, "lib", "a.txt"), "x")
    expect(JSON.parse((await run("--config", denyEnv, "cat rules.json", "grep -r x lib", "grep -r x .")).stdout).map((o: any) => o.decision)).toEqual([
      "allow",
      "allow",
      "deny"
    ])
  })

  test("bad input: a missing config file or --cwd exits 2 with a message", async () => {
    const missing = await run("--config", path.join(dir, "nope.json"), "ls")
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("nope.json")
    const badCwd = await run("--cwd", path.join(dir, "nowhere"), "ls")
    expect(badCwd.code).toBe(2)
    expect(badCwd.stderr).toContain("not a directory")
  })
})
