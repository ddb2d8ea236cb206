// Local MCP servers in the OS sandbox, with real bubblewrap and a real SDK server (test/fixtures/files-server.ts):
// its tools work, it cannot read the user's secrets nor write outside the project, it has the network unless its
// config says none, `sandbox: false` runs it as it is, and required mode without bubblewrap does not start it.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { Bus, DataDir, Ids, type McpConfig } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { probeBwrap, Sandbox, type SandboxConfig } from "@reins/sandbox"
import { waitFor } from "@reins/testkit"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpServers, McpSettings } from "../src/McpServers.ts"

const FIXTURE = path.join(import.meta.dir, "fixtures", "files-server.ts")
const available = probeBwrap()

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-mcp-sandbox-")))
// outside the project and outside /tmp: read-only inside the sandbox
const outside = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-mcp-outside-"))
const project = path.join(root, "project")
const home = path.join(root, "home")
const dataDir = path.join(home, ".local", "share", "reins")
fs.mkdirSync(path.join(project, ".git", "hooks"), { recursive: true })
fs.mkdirSync(path.join(home, ".ssh"), { recursive: true })
fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "PRIVATE-KEY-MATERIAL")
fs.mkdirSync(dataDir, { recursive: true })
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }
const local = (mark: string, more: Record<string, unknown> = {}) => ({ type: "local" as const, command: [process.execPath, FIXTURE, mark], ...more })

/** The servers as the runtime builds them, with the runtime's Sandbox for `config`. */
const layerFor = (servers: McpConfig, config: SandboxConfig = {}, sandboxEnv: Record<string, string> = env) =>
  McpServers.layer.pipe(
    Layer.provide(
      Layer.mergeAll(Permission.layer, Truncate.layer).pipe(
        Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
        Layer.provide(Layer.succeed(DataDir, dataDir)),
        Layer.provide(Layer.succeed(PermissionSettings, { rules: defaultRules, nonInteractive: "deny" as const })),
        Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
      )
    ),
    Layer.provide(Layer.succeed(McpSettings, { servers, env, cwd: project })),
    Layer.provide(Sandbox.layer({ config, places: { project, home, dataDir }, env: sandboxEnv }))
  )

/** Calls `tool` of the server `name` with `args` in a fresh runtime; the statuses come along. */
const call = (
  servers: McpConfig,
  calls: ReadonlyArray<readonly [string, Record<string, string>]>,
  config: SandboxConfig = {},
  sandboxEnv?: Record<string, string>
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const mcp = yield* McpServers
      const tools = yield* mcp.tools("ses_1")
      const outputs: Array<string> = []
      for (const [id, args] of calls) {
        const tool = tools.find((t) => t.id === id)
        if (tool === undefined) throw new Error(`no tool ${id} in ${tools.map((t) => t.id).join(", ")}`)
        outputs.push((yield* tool.execute(args, { sessionID: "ses_1", messageID: "m", callID: "c", cwd: project })).output)
      }
      return { outputs, status: yield* mcp.status }
    }).pipe(Effect.provide(layerFor(servers, config, sandboxEnv)), Effect.scoped)
  )

/** The processes whose command line holds `mark`. */
const running = (mark: string) =>
  fs.readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(mark)
    } catch {
      return false
    }
  })

describe.skipIf(process.platform !== "linux" || !available.available)("a local MCP server in the sandbox", () => {
  test("its tools work and it writes the project; it cannot read ~/.ssh nor write outside", async () => {
    const { outputs, status } = await call({ fs: local("m1") }, [
      ["fs_write", { path: path.join(project, "made.txt"), text: "made" }],
      ["fs_read", { path: path.join(project, "made.txt") }],
      ["fs_read", { path: path.join(home, ".ssh", "id_rsa") }],
      ["fs_write", { path: path.join(outside, "planted.txt"), text: "x" }],
      ["fs_write", { path: path.join(project, ".git", "hooks", "pre-commit"), text: "touch pwned" }]
    ])
    expect(status[0]).toMatchObject({ name: "fs", status: "connected", sandboxed: true })
    expect(outputs[0]).toBe("wrote")
    expect(outputs[1]).toBe("read: made")
    expect(outputs[2]).not.toContain("PRIVATE")
    expect(outputs[3]).toContain("error:")
    expect(outputs[4]).toContain("error:")
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false)
    expect(fs.existsSync(path.join(project, ".git", "hooks", "pre-commit"))).toBe(false)
  })

  test("the network is on by default (MCP servers call APIs); its config can turn it off", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("pong") })
    try {
      const url = `http://127.0.0.1:${server.port}/`
      const on = await call({ api: local("m2") }, [["api_fetch", { url }]])
      expect(on.outputs[0]).toBe("fetched: pong")
      const off = await call({ api: local("m3", { sandbox: { network: "none" } }) }, [["api_fetch", { url }]])
      expect(off.outputs[0]).toContain("error:")
    } finally {
      server.stop(true)
    }
  })

  test("its own writable directories are added to the project", async () => {
    const extra = fs.mkdtempSync("/var/tmp/reins-mcp-extra-")
    try {
      const { outputs } = await call({ fs: local("m4", { sandbox: { writable: [extra] } }) }, [["fs_write", { path: path.join(extra, "ok.txt"), text: "ok" }]])
      expect(outputs[0]).toBe("wrote")
      expect(fs.readFileSync(path.join(extra, "ok.txt"), "utf8")).toBe("ok")
    } finally {
      fs.rmSync(extra, { recursive: true, force: true })
    }
  })

  test("a program that does not exist is named, as outside the sandbox", async () => {
    const { status } = await call({ gone: { type: "local", command: ["no-such-mcp-program"] } }, [])
    expect(status[0]!.error).toContain('there is no program "no-such-mcp-program"')
  })

  test(`"sandbox": false runs it as it is`, async () => {
    const { outputs, status } = await call({ plain: local("m5", { sandbox: false }) }, [["plain_read", { path: path.join(home, ".ssh", "id_rsa") }]])
    expect(status[0]).toMatchObject({ status: "connected", sandboxed: false })
    expect(outputs[0]).toBe("read: PRIVATE-KEY-MATERIAL")
  })

  test("closed with the runtime: the server and its bubblewrap are gone", async () => {
    const mark = `reins-mark-${process.pid}-close`
    await call({ fs: local(mark) }, [["fs_read", { path: path.join(project, "made.txt") }]])
    expect(await waitFor(() => running(mark).length === 0, "the sandboxed server to be gone")).toBe(true)
  })

  test("reins killed outright (SIGKILL): the sandboxed server goes with it", async () => {
    const mark = `reins-mark-${process.pid}-killed`
    const holder = Bun.spawn([process.execPath, path.join(import.meta.dir, "fixtures", "hold-sandboxed.ts"), project, home, dataDir, mark], {
      stdout: "pipe",
      stderr: "inherit"
    })
    const reader = holder.stdout.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe("connected\n")
    expect(running(mark).length).toBeGreaterThan(0)
    holder.kill("SIGKILL")
    await holder.exited
    expect(await waitFor(() => running(mark).length === 0, "the sandboxed server to be gone")).toBe(true)
  })
})

describe.skipIf(process.platform !== "linux")("without bubblewrap", () => {
  const missing = { ...env, REINS_BWRAP: path.join(root, "no-bwrap") }
  test("mode required: the server does not start, and its error says why and what to do", async () => {
    const { status } = await call({ fs: local("m6") }, [], { mode: "required" }, missing)
    expect(status[0]!.status).toBe("failed")
    expect(status[0]!.error).toContain('MCP server "fs" not started: sandbox.mode is "required"')
    expect(status[0]!.error).toContain("REINS_BWRAP names")
    expect(status[0]!.error).toContain('give mcp.fs "sandbox": false')
  })

  test("mode auto: it runs outside, said once", async () => {
    const { outputs, status } = await call({ fs: local("m7") }, [["fs_read", { path: path.join(home, ".ssh", "id_rsa") }]], {}, missing)
    expect(status[0]).toMatchObject({ status: "connected", sandboxed: false })
    expect(outputs[0]).toBe("read: PRIVATE-KEY-MATERIAL")
  })
})
