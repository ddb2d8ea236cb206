// `reins mcp list` and `reins run` with MCP servers: the real CLI, a real SDK server (the runtime's test fixture) over stdio.
import { beforeAll, describe, expect, test } from "bun:test"
import * as path from "node:path"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const project = projects()

const FIXTURE = path.join(import.meta.dir, "..", "..", "..", "packages", "runtime", "test", "fixtures", "mcp-server.ts")
const local = (...args: ReadonlyArray<string>) => ({ type: "local", command: [process.execPath, FIXTURE, ...args] })
const servers = { fx: local(), broken: local("--exit-on-start"), off: { type: "remote", url: "http://127.0.0.1:9/mcp", enabled: false } }

describe("reins mcp list", () => {
  test("text: each server with its status, and the tools of a connected one", async () => {
    const p = await project([], { mcp: servers })
    const r = await reins(["mcp", "list"], p)
    expect(r.code).toBe(0)
    const blocks = r.stdout.trim().split("\n\n")
    expect(blocks[0]!.split("\n").map((l) => l.trim().split(/\s+/)[0])).toEqual(["fx", "fx_echo", "fx_fail", "fx_crash", "fx_grow", "fx_image"])
    // a local server runs in the OS sandbox (where bubblewrap runs: .ci/run installs it)
    expect(blocks[0]).toStartWith("fx  local  connected (stdio, sandboxed)")
    expect(blocks[1]).toStartWith('broken  local  failed: MCP server "broken" could not start')
    expect(blocks[1]).toContain("missing API key")
    expect(blocks[2]).toBe("off  remote  disabled")
  })

  test("json: the same as data; no servers says how to add one", async () => {
    const p = await project([], { mcp: servers })
    const r = await reins(["mcp", "list", "--format", "json"], p)
    expect(r.code).toBe(0)
    const { servers: listed } = JSON.parse(r.stdout)
    expect(listed.map((s: any) => [s.name, s.status])).toEqual([
      ["fx", "connected"],
      ["broken", "failed"],
      ["off", "disabled"]
    ])
    expect(listed[0].tools[0]).toEqual({ id: "fx_echo", name: "echo", description: "Echoes the text back." })
    expect(listed[1].error).toContain("missing API key")
    const none = await reins(["mcp", "list"], await project([]))
    expect(none.stdout).toContain('No MCP servers configured. Add them under "mcp" in reins.json')
  })

  test("a bad server entry is one clear line, exit 2", async () => {
    const p = await project([], { mcp: { fx: { type: "local", command: [] } } })
    const r = await reins(["mcp", "list"], p)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('mcp.fx.command: Expected "command" to name the program')
  })
})

describe("reins run with MCP servers", () => {
  test("the tool's result reaches the model; a server that cannot start is one warning on stderr and the run goes on", async () => {
    const p = await project([{ toolCalls: [{ name: "fx_echo", arguments: { text: "from cli" } }] }, { text: "all done" }], { mcp: servers })
    const r = await reins(["run", "--format", "json", "go"], p)
    expect(r.code).toBe(0)
    const warnings = r.stderr.split("\n").filter((l) => l.includes('MCP server "broken"'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("going on without its tools")
    const failed = events(r.stdout).filter((e) => e.type === "mcp.failed")
    expect(failed.map((e) => e.server)).toEqual(["broken"])
    const tool = p.server.requests[1]!.body.messages.find((m: any) => m.role === "tool")
    expect(tool.content).toBe("echo: from cli")
  })
})
