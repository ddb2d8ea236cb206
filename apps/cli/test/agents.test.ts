// Agents and sub-agents through the real CLI (T19): `run --agent`, a task's child session under its
// parent in `sessions list` / `sessions show`, and `debug config` (issue 18, items 1 and 5).
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { editConfig, ensureBuilt, projects, reins, events, trust } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const toolNames = (body: any): Array<string> => (body?.tools ?? []).map((t: any) => t.function?.name)

describe("reins run --agent", () => {
  test("an unknown agent, or a sub-agent, is one line naming the agents and exit 2, before any request", async () => {
    const p = await setup([{ text: "never" }])
    const unknown = await reins(["run", "--agent", "nope", "hi"], p)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('No agent named "nope". Agents: build, plan.')
    const sub = await reins(["run", "--agent", "explore", "hi"], p)
    expect(sub.code).toBe(2)
    expect(sub.stderr).toContain('"explore" is a sub-agent')
    expect(p.server.requests).toHaveLength(0)
  })

  test("plan: the editing tools are not offered and a writing command is denied, even with --yolo", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo x > made.txt" } }] }, { text: "planned" }])
    const out = await reins(["run", "--yolo", "--agent", "plan", "make a plan"], p)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain("planned")
    const tools = toolNames(p.server.requests[0]!.body)
    expect(tools).toContain("read")
    expect(tools).not.toContain("edit")
    expect(tools).not.toContain("write")
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("deny edit")
    expect(fs.existsSync(path.join(p.cwd, "made.txt"))).toBe(false)
  })

  test("a session keeps its agent: continued without --agent it runs plan again; --agent build switches back", async () => {
    const p = await setup([{ text: "planned" }, { text: "still planning" }, { text: "building" }])
    const first = await reins(["run", "--agent", "plan", "make a plan"], p)
    expect(first.code).toBe(0)
    const sessionID = JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout)[0].id as string
    const again = await reins(["run", "--session", sessionID, "go on"], p)
    expect(again.code).toBe(0)
    expect(toolNames(p.server.requests[1]!.body)).not.toContain("edit")
    const build = await reins(["run", "--session", sessionID, "--agent", "build", "now build"], p)
    expect(build.code).toBe(0)
    expect(toolNames(p.server.requests[2]!.body)).toContain("edit")
    expect(JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout)[0].agent).toBe("build")
  })

  test("an agent from ~/.config/reins/agents/*.md: its body is the system prompt's header", async () => {
    const p = await setup([{ text: "helped" }])
    const dir = path.join(p.env.HOME!, ".config", "reins", "agents")
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, "helper.md"), "---\ndescription: Helps\nmode: primary\n---\nHELPER-HEADER: you help.\n")
    const out = await reins(["run", "--agent", "helper", "help me"], p)
    expect(out.code).toBe(0)
    const system = p.server.requests[0]!.body.messages[0]
    expect(system.role).toBe("system")
    expect(String(system.content).startsWith("HELPER-HEADER: you help.")).toBe(true)
  })
})

describe("sub-agent sessions", () => {
  test("a task's child session: the text answer is the parent's alone; sessions list (text, json) and show put the child under its parent", async () => {
    const p = await setup([
      {
        toolCalls: [{ name: "task", arguments: { description: "look around", prompt: "CHILD-PROMPT list the files", subagent_type: "explore" } }],
        usage: { prompt_tokens: 100, completion_tokens: 10 }
      },
      { text: "child says 42", usage: { prompt_tokens: 1000, completion_tokens: 20 } },
      { text: "parent done", usage: { prompt_tokens: 200, completion_tokens: 5 } }
    ])
    const run = await reins(["run", "--yolo", "go"], p)
    expect(run.code).toBe(0)
    // the closing line counts the sub-agent's tokens: 10 + 20 + 5 out
    expect(run.stderr).toContain(" 35 out")
    expect(run.stdout).toContain("parent done")
    expect(run.stdout).not.toContain("child says 42")
    // the child's answer and id reached the parent's second request
    const last = JSON.stringify(p.server.requests.at(-1)!.body.messages)
    expect(last).toContain("child says 42")
    const list = JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout) as Array<any>
    expect(list).toHaveLength(2)
    const parent = list.find((s) => s.parentID === null)
    const child = list.find((s) => s.parentID !== null)
    expect(child.parentID).toBe(parent.id)
    expect(last).toContain(`task_id: ${child.id}`)
    expect(child.title).toContain("look around (@explore sub-agent)")
    // the parent's tokens and cost count the child's in, also given apart; the child's row has its own
    expect(parent.tokens.output).toBe(35)
    expect(parent.subAgents).toMatchObject({ sessions: 1, tokens: { output: 20 } })
    expect(child.tokens.output).toBe(20)
    expect(child.subAgents).toBeNull()
    const text = (await reins(["sessions", "list"], p)).stdout.split("\n").filter((l) => l.trim() !== "")
    const at = text.findIndex((l) => l.startsWith(parent.id))
    expect(at).toBeGreaterThanOrEqual(0)
    expect(text[at + 1]!.startsWith(`└ ${child.id}`)).toBe(true)
    const shown = (await reins(["sessions", "show", parent.id], p)).stdout
    expect(shown).toContain("35 out")
    expect(shown).toContain("including sub-agents: 1 session · 1k in / 20 out")
    expect(shown).toContain("sub-agents:")
    expect(shown).toContain(`└ ${child.id}`)
    const childShown = (await reins(["sessions", "show", child.id], p)).stdout
    expect(childShown).toContain(`sub-agent session of ${parent.id}`)
    expect(childShown).toContain("child says 42")
  })

  test("--format json carries the child's events on the parent's stream", async () => {
    const p = await setup([
      { toolCalls: [{ name: "task", arguments: { description: "look", prompt: "CHILD", subagent_type: "general" } }] },
      { text: "from the child" },
      { text: "from the parent" }
    ])
    const run = await reins(["run", "--yolo", "--format", "json", "go"], p)
    expect(run.code).toBe(0)
    const all = events(run.stdout)
    const created = all.filter((e) => e.type === "session.created")
    expect(created).toHaveLength(2)
    const childID = created.find((e) => e.session.parentID !== undefined)!.session.id
    expect(all.some((e) => e.type === "part.updated" && e.part.sessionID === childID && e.part.type === "text" && e.part.text === "from the child")).toBe(true)
  })
})

describe("reins debug config", () => {
  test("each value with the file it came from (global then project), secrets hidden; agents found and skipped", async () => {
    const p = await setup([])
    const global = p.configFile
    fs.mkdirSync(path.join(path.dirname(global), "agents"), { recursive: true })
    editConfig(p, (config) => {
      config.model = "local/other"
      config.permission_timeout = 7
      config.provider.local.apiKey = "sk-secret-value"
      config.mcp = {
        files: { type: "local", command: ["files-mcp", "--root", "."] },
        off: { type: "remote", url: "https://example.invalid/mcp", enabled: false }
      }
      return config
    })
    const projectFile = path.join(p.cwd, "reins.json")
    fs.writeFileSync(projectFile, JSON.stringify({ model: "local/scripted" }))
    fs.mkdirSync(path.join(p.cwd, ".reins", "agents"), { recursive: true })
    fs.writeFileSync(path.join(p.cwd, ".reins", "agents", "reviewer.md"), "---\ndescription: Reviews diffs\nmode: subagent\n---\nReview.\n")
    fs.writeFileSync(path.join(p.cwd, ".reins", "agents", "broken.md"), "---\nmode: sometimes\n---\nx\n")
    // the project's agents are read once the directory is trusted
    await trust(p)
    const out = await reins(["debug", "config"], p)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain(`model = "local/scripted"  ← ${projectFile}`)
    expect(out.stdout).toContain(`permission_timeout = 7  ← ${global}`)
    expect(out.stdout).not.toContain("sk-secret-value")
    expect(out.stdout).toContain(`provider.local.apiKey = "***"`)
    expect(out.stdout).toContain(`reviewer (subagent) ← ${path.join(p.cwd, ".reins", "agents", "reviewer.md")}: Reviews diffs`)
    expect(out.stdout).toMatch(/skipped .*broken\.md: mode: /)
    expect(out.stdout).toContain("  files (local): files-mcp --root .")
    expect(out.stdout).toContain('  skipped off: "enabled": false')
    const json = JSON.parse((await reins(["debug", "config", "--format", "json"], p)).stdout)
    expect(json.files).toEqual([global, projectFile])
    expect(json.agents.map((a: any) => a.name)).toContain("plan")
    expect(json.skills).toEqual({ found: [], skipped: [] })
  })
})
