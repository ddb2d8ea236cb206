// MCP servers end to end: a real server (test/fixtures/mcp-server.ts, the SDK's Server) over stdio
// and over streamable HTTP, its tools called by the scripted model through the whole runtime.
import { afterEach, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import type { Event } from "@reins/domain"
import { McpServers } from "@reins/mcp"
import { SessionService } from "@reins/session"
import { waitFor, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { runIn, scriptedRuntimes, sessionTurns } from "./support.ts"

const FIXTURE = path.join(import.meta.dir, "fixtures", "mcp-server.ts")
const BUN = process.execPath
const local = (...args: ReadonlyArray<string>) => ({ type: "local" as const, command: [BUN, FIXTURE, ...args] })
const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }

type Failed = Event & { type: "mcp.failed" }

/** Runs prompts (one turn each) on one session; returns the `mcp.failed` events seen. */
const turns = (layer: Awaited<ReturnType<typeof runtime>>["layer"], prompts: number) =>
  runIn(layer, sessionTurns(Array.from({ length: prompts }, (_, i) => ({ text: `go ${i}`, model })))).then(({ results, events }) => ({
    failed: events.filter((e): e is Failed => e.type === "mcp.failed"),
    texts: results.map((r) => r.text)
  }))

const toolNames = (body: any): ReadonlyArray<string> => (body.tools ?? []).map((t: any) => t.function.name)
const toolMessages = (body: any): ReadonlyArray<string> =>
  body.messages.filter((m: any) => m.role === "tool").map((m: any) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))

let http: ReturnType<typeof Bun.spawn> | undefined
afterEach(() => {
  http?.kill()
  http = undefined
})

describe("MCP over stdio", () => {
  test("servers start on the first turn, not when the runtime is built, and stop with it", async () => {
    // the shell marks the start, then becomes the server (exec) with a mark on its command line: the server runs in the
    // sandbox's own pid namespace, so it is found by the mark, not by a pid it could see
    const mark = `reins-mcp-mark-${process.pid}-${Date.now()}`
    const { cwd, layer } = await runtime([{ text: "ok" }], {
      config: { mcp: { fx: { type: "local", command: ["sh", "-c", `echo $$ > started && exec ${BUN} ${FIXTURE} ${mark}`] } } }
    })
    const started = path.join(cwd, "started")
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        expect(yield* Effect.sync(() => fs.existsSync(started))).toBe(false)
        yield* sessions.prompt({ sessionID: session.id, text: "go", model })
        expect(fs.existsSync(started)).toBe(true)
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const alive = () =>
      fs.readdirSync("/proc").some((pid) => {
        try {
          return /^\d+$/.test(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(mark)
        } catch {
          return false
        }
      })
    // closing sends SIGTERM after stdin ends; the child is gone once it has been reaped
    expect(await waitFor(() => !alive(), "the server to be gone")).toBe(true)
  })

  test("the server's tool is offered as <server>_<tool> with its schema, called, and its result reaches the next request", async () => {
    const steps: Array<ScriptedStep> = [{ toolCalls: [{ name: "fx_echo", arguments: { text: "hi there" } }] }, { text: "done" }]
    const { server, layer } = await runtime(steps, { config: { mcp: { fx: local() } } })
    const { texts, failed } = await turns(layer, 1)
    expect(texts).toEqual(["done"])
    expect(failed).toEqual([])
    const offered = server.requests[0]!.body.tools.find((t: any) => t.function.name === "fx_echo")
    expect(offered.function.description).toBe("Echoes the text back.")
    expect(offered.function.parameters.properties.text).toEqual({ type: "string" })
    expect(offered.function.parameters.required).toEqual(["text"])
    expect(toolMessages(server.requests[1]!.body)).toEqual(["echo: hi there"])
  })

  test("invalid arguments get the built-ins' answer; isError is a tool error; the turn goes on", async () => {
    const steps: Array<ScriptedStep> = [
      { toolCalls: [{ name: "fx_echo", arguments: { text: 5 } }] },
      { toolCalls: [{ name: "fx_fail", arguments: {} }] },
      { text: "ok" }
    ]
    const { server, layer } = await runtime(steps, { config: { mcp: { fx: local() } } })
    await turns(layer, 1)
    const [invalid] = toolMessages(server.requests[1]!.body)
    expect(invalid).toContain("The fx_echo tool was called with invalid arguments")
    expect(invalid).toContain("must be string")
    expect(toolMessages(server.requests[2]!.body)[1]).toContain("it broke")
  })

  test("a permission rule on <server>_<tool> denies it: deny removes it, ask is refused without a person", async () => {
    const steps: Array<ScriptedStep> = [
      { toolCalls: [{ name: "fx_echo", arguments: { text: "x" } }] },
      { toolCalls: [{ name: "fx_fail", arguments: {} }] },
      { text: "ok" }
    ]
    const { server, layer } = await runtime(steps, {
      config: { mcp: { fx: local() }, permission: { fx_echo: "deny", fx_fail: "ask" } },
      permission: { nonInteractive: "deny" }
    })
    await turns(layer, 1)
    const names = toolNames(server.requests[0]!.body)
    expect(names).not.toContain("fx_echo")
    expect(names).toContain("fx_fail")
    expect(names).toContain("fx_grow")
    expect(toolMessages(server.requests[1]!.body)[0]).toContain('There is no tool named "fx_echo"')
    const asked = toolMessages(server.requests[2]!.body)[1]!
    expect(asked).not.toContain("it broke")
    expect(asked.toLowerCase()).toContain("fx_fail")
  })

  test("a server that cannot start and one that crashes are each reported once; the turns go on without them", async () => {
    const steps: Array<ScriptedStep> = [{ toolCalls: [{ name: "fx_crash", arguments: {} }] }, { text: "after crash" }, { text: "second turn" }]
    const { server, layer } = await runtime(steps, { config: { mcp: { fx: local(), broken: local("--exit-on-start") } } })
    const { texts, failed } = await turns(layer, 2)
    expect(texts).toEqual(["after crash", "second turn"])
    expect(failed.map((e) => e.server).sort()).toEqual(["broken", "fx"])
    expect(failed.find((e) => e.server === "broken")!.error).toContain("missing API key")
    expect(failed.find((e) => e.server === "fx")!.error).toContain('MCP server "fx" stopped')
    expect(toolNames(server.requests[0]!.body).filter((n) => n.startsWith("broken_"))).toEqual([])
    expect(toolNames(server.requests[0]!.body)).toContain("fx_crash")
    expect(toolMessages(server.requests[1]!.body)[0]).toContain("The fx MCP server could not run crash")
    expect(toolNames(server.requests[2]!.body).filter((n) => n.startsWith("fx_"))).toEqual([])
  })

  test("a server that never answers times out (its timeout) and the others are used", async () => {
    const steps: Array<ScriptedStep> = [{ toolCalls: [{ name: "fx_echo", arguments: { text: "still here" } }] }, { text: "ok" }]
    const { server, layer } = await runtime(steps, { config: { mcp: { fx: local(), slow: { ...local("--delay", "60000"), timeout: 300 } } } })
    const { failed } = await turns(layer, 1)
    expect(failed.map((e) => e.error)).toEqual([
      'MCP server "slow" did not connect within 300 ms (raise "timeout" under mcp.slow in reins.json if it is slow to start)'
    ])
    expect(toolMessages(server.requests[1]!.body)).toEqual(["echo: still here"])
  })

  test("a changed tool list is picked up at the next step", async () => {
    const steps: Array<ScriptedStep> = [
      { toolCalls: [{ name: "fx_grow", arguments: {} }] },
      { toolCalls: [{ name: "fx_late", arguments: {} }] },
      { text: "ok" }
    ]
    const { server, layer } = await runtime(steps, { config: { mcp: { fx: local() } } })
    await turns(layer, 1)
    expect(toolNames(server.requests[0]!.body)).not.toContain("fx_late")
    expect(toolNames(server.requests[1]!.body)).toContain("fx_late")
    expect(toolMessages(server.requests[2]!.body)).toEqual(["grown", "late tool ran"])
  })

  test("status: connected with tools, failed with the reason, disabled", async () => {
    const { layer } = await runtime([], { config: { mcp: { fx: local(), off: { ...local(), enabled: false }, broken: local("--exit-on-start") } } })
    const status = await Effect.runPromise(
      Effect.gen(function* () {
        const servers = yield* McpServers
        return yield* servers.status
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const byName = Object.fromEntries(status.map((s) => [s.name, s]))
    expect(byName.fx!.status).toBe("connected")
    expect(byName.fx!.transport).toBe("stdio")
    expect(byName.fx!.tools.map((t) => t.id)).toEqual(["fx_echo", "fx_fail", "fx_crash", "fx_grow", "fx_image"])
    expect(byName.off!.status).toBe("disabled")
    expect(byName.broken!.status).toBe("failed")
    expect(byName.broken!.error).toContain("missing API key")
  })
})

/** Starts the fixture as an HTTP server (`--http` or `--sse`); its port. */
const serve = async (mode: "--http" | "--sse") => {
  http = Bun.spawn([BUN, FIXTURE, mode], { stdout: "pipe", stderr: "inherit" })
  const reader = (http.stdout as ReadableStream<Uint8Array>).getReader()
  let out = ""
  while (!/PORT \d+\n/.test(out)) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  return /PORT (\d+)/.exec(out)![1]
}

describe("MCP over HTTP", () => {
  test("an SSE-only server is reached through the fallback", async () => {
    const port = await serve("--sse")
    const steps: Array<ScriptedStep> = [{ toolCalls: [{ name: "old_echo", arguments: { text: "over sse" } }] }, { text: "done" }]
    const { server, layer } = await runtime(steps, { config: { mcp: { old: { type: "remote", url: `http://127.0.0.1:${port}/mcp` } } } })
    const { failed } = await turns(layer, 1)
    expect(failed).toEqual([])
    expect(toolMessages(server.requests[1]!.body)).toEqual(["echo: over sse"])
  })

  test("a remote server's tool is called and its result reaches the next request", async () => {
    const port = await serve("--http")
    const steps: Array<ScriptedStep> = [
      { toolCalls: [{ name: "web_echo", arguments: { text: "over http" } }] },
      { toolCalls: [{ name: "web_image", arguments: {} }] },
      { text: "done" }
    ]
    const { server, layer } = await runtime(steps, {
      config: { mcp: { web: { type: "remote", url: `http://127.0.0.1:${port}/mcp`, headers: { "x-test": "1" } } } }
    })
    const { failed } = await turns(layer, 1)
    expect(failed).toEqual([])
    expect(toolMessages(server.requests[1]!.body)).toEqual(["echo: over http"])
    expect(toolMessages(server.requests[2]!.body)[1]).toContain("a pixel")
  })
})
