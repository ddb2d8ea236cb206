// reins init against the scripted model: the model looks and writes AGENTS.md with its write tool (a protected file:
// the user approves the write on the terminal, as for reins run), reins.json gets "$schema"; a second run keeps both
// without --force; off a terminal nobody can approve the write, and init says so.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { CONFIG_SCHEMA_URL } from "@reins/domain"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, projects, reins, type Project } from "./support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

const write = (content: string) => ({ toolCalls: [{ name: "write", arguments: { filePath: "AGENTS.md", content } }] })

/** `reins init ARGS` on a terminal, approving the write once when asked. */
const initOnTerminal = async (p: Project, args: ReadonlyArray<string> = []) => {
  await using pty = spawnPty([BIN, "init", ...args], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" }, cols: 160 })
  await pty.waitFor("[o]nce")
  expect(pty.screen()).toContain("edit")
  expect(pty.screen()).toContain("AGENTS.md")
  pty.type("o")
  await pty.press("enter")
  const code = await pty.waitExit()
  return { code, screen: pty.scrollback() }
}

describe("reins init", () => {
  test("writes reins.json with $schema and the AGENTS.md the model writes; a re-run skips both; --force revises", async () => {
    const p = await project([
      { toolCalls: [{ name: "list", arguments: {} }] },
      write("# AGENTS\n\n- Test: `bun test`\n"),
      { text: "Wrote AGENTS.md." },
      write("# AGENTS\n\n- Test: `bun test`\n- Build: `bun run build`\n"),
      { text: "Revised AGENTS.md." }
    ])
    const agents = path.join(p.cwd, "AGENTS.md")
    fs.writeFileSync(path.join(p.cwd, "package.json"), '{"scripts": {"test": "bun test"}}\n')
    const first = await initOnTerminal(p)
    expect(first.code).toBe(0)
    expect(first.screen).toContain(`Wrote ${path.join(p.cwd, "reins.json")}.`)
    expect(first.screen).toContain(`Wrote ${agents}.`)
    expect(fs.readFileSync(agents, "utf8")).toBe("# AGENTS\n\n- Test: `bun test`\n")
    expect(JSON.parse(fs.readFileSync(path.join(p.cwd, "reins.json"), "utf8"))).toEqual({ $schema: CONFIG_SCHEMA_URL })
    // the model was told to look and to write AGENTS.md at the project's root
    expect(JSON.stringify(p.server.requests[0]!.body)).toContain(`Write an AGENTS.md file for this project at ${agents}`)
    expect(p.server.requests).toHaveLength(3)

    // again: both kept, no model call
    const again = await reins(["init"], p)
    expect(again.code).toBe(0)
    expect(again.stderr).toContain("Skipped reins.json: it exists (--force replaces it).")
    expect(again.stderr).toContain("Skipped AGENTS.md: it exists (--force has the model revise it).")
    expect(p.server.requests).toHaveLength(3)

    // --force: the model is told to revise the file it reads
    const forced = await initOnTerminal(p, ["--force"])
    expect(forced.code).toBe(0)
    expect(fs.readFileSync(agents, "utf8")).toContain("bun run build")
    expect(JSON.stringify(p.server.requests[3]!.body)).toContain("exists already: read it first")
  })

  test("off a terminal the write cannot be approved: init says so and exits 1, reins.json written", async () => {
    const p = await project([write("# AGENTS\n"), { text: "done" }])
    const r = await reins(["init"], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`The model did not write ${path.join(p.cwd, "AGENTS.md")} (writing it needs your approval: run reins init on a terminal)`)
    expect(fs.existsSync(path.join(p.cwd, "AGENTS.md"))).toBe(false)
    expect(fs.existsSync(path.join(p.cwd, "reins.json"))).toBe(true)
  })
})
