// McpServers with real SDK servers over stdio (test/fixtures/named-server.ts): tool ids that come out
// the same are offered once, and a server interrupted while it connects leaves no process behind.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { Bus, DataDir, Ids, type McpConfig } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { eventually, waitFor } from "@reins/testkit"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { McpCallTimeout } from "../src/McpNames.ts"
import { McpServers, McpSettings } from "../src/McpServers.ts"

const FIXTURE = path.join(import.meta.dir, "fixtures", "named-server.ts")
const local = (...args: ReadonlyArray<string>) => ({ type: "local" as const, command: [process.execPath, FIXTURE, ...args] })
const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-mcp-")))

/** The servers with real Permission and Truncate services, as the runtime builds them. */
const layerFor = (servers: McpConfig, cwd: string, callTimeout = 60_000) =>
  McpServers.layer.pipe(
    Layer.provide(Layer.succeed(McpCallTimeout, callTimeout)),
    Layer.provide(
      Layer.mergeAll(Permission.layer, Truncate.layer).pipe(
        Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
        Layer.provide(Layer.succeed(DataDir, tmp())),
        Layer.provide(Layer.succeed(PermissionSettings, { rules: defaultRules, nonInteractive: "deny" as const })),
        Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
      )
    ),
    Layer.provide(Layer.succeed(McpSettings, { servers, env: process.env, cwd }))
  )

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("MCP servers", () => {
  test("tools whose ids come out the same (in one server, or across two) are offered once, the first kept, so a request never names a tool twice", async () => {
    const cwd = tmp()
    const servers = { "my.srv": local("t", "fi.nd", "fi_nd"), my_srv: local("t", "other") }
    const { ids, ran } = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* McpServers
        const tools = yield* mcp.tools("ses_1")
        const first = tools.find((t) => t.id === "my_srv_fi_nd")!
        const ran = yield* first.execute({}, { sessionID: "ses_1", messageID: "m", callID: "c", cwd })
        return { ids: tools.map((t) => t.id), ran: ran.output }
      }).pipe(Effect.provide(layerFor(servers, cwd)), Effect.scoped)
    )
    expect(ids).toEqual(["my_srv_t", "my_srv_fi_nd", "my_srv_other"])
    expect(new Set(ids).size).toBe(ids.length)
    expect(ran).toBe("fi.nd ran")
  })

  test("a server interrupted while it connects is killed at once: no process is left", async () => {
    const cwd = tmp()
    const pidFile = path.join(cwd, "hung.pid")
    const pid = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* McpServers
        const fiber = yield* Effect.forkChild(mcp.tools("ses_1"))
        yield* eventually(
          Effect.sync(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8") !== ""),
          "the server to write its pid"
        )
        const pid = Number(fs.readFileSync(pidFile, "utf8"))
        yield* Fiber.interrupt(fiber)
        return pid
      }).pipe(Effect.provide(layerFor({ hung: { ...local("--hang"), timeout: 60_000 } }, cwd)), Effect.scoped)
    )
    // the kill is sent when the interrupt lands; the process is gone once the system has reaped it
    expect(await waitFor(() => !alive(pid), `the hung server (pid ${pid}) to be gone`)).toBe(true)
  })

  test("a server interrupted while it lists its tools is closed, not left running beside the one the next step starts", async () => {
    const cwd = tmp()
    const pidFile = path.join(cwd, "listing.pid")
    const { first, ids } = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* McpServers
        const fiber = yield* Effect.forkChild(mcp.tools("ses_1"))
        yield* eventually(
          Effect.sync(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8") !== ""),
          "the server to write its pid"
        )
        const first = Number(fs.readFileSync(pidFile, "utf8"))
        yield* Fiber.interrupt(fiber)
        // the next step starts it again (this time it answers)
        const ids = (yield* mcp.tools("ses_1")).map((t) => t.id)
        // while the runtime still runs, the first process ends (its stdin closed; SIGTERM after 2 s)
        yield* eventually(
          Effect.sync(() => !alive(first)),
          `the interrupted server (pid ${first}) to end`
        )
        return { first: alive(first), ids }
      }).pipe(Effect.provide(layerFor({ srv: local("t", "--hang-list") }, cwd)), Effect.scoped)
    )
    expect(ids).toEqual(["srv_t"])
    expect(first).toBe(false)
  })

  test("a changed tool list whose reading was interrupted is read again at the next step", async () => {
    const cwd = tmp()
    const pidFile = path.join(cwd, "relist.pid")
    const ctx = { sessionID: "ses_1", messageID: "m", callID: "c", cwd }
    const { before, after } = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* McpServers
        const tools = yield* mcp.tools("ses_1")
        yield* tools.find((t) => t.id === "srv_grow")!.execute({}, ctx)
        // the list-changed notification may follow the call's answer: steps go on (one every 20 ms, a
        // pace, not a wait) until one of them has seen it and relists
        const fiber = yield* Effect.forkChild(Effect.repeat(mcp.tools("ses_1"), Schedule.spaced("20 millis")))
        yield* eventually(
          Effect.sync(() => fs.existsSync(pidFile)),
          "the step that relists"
        )
        yield* Fiber.interrupt(fiber)
        return { before: tools.map((t) => t.id), after: (yield* mcp.tools("ses_1")).map((t) => t.id) }
      }).pipe(Effect.provide(layerFor({ srv: local("t", "--grow") }, cwd)), Effect.scoped)
    )
    expect(before).toEqual(["srv_t", "srv_grow"])
    expect(after).toEqual(["srv_t", "srv_grow", "srv_late"])
  })

  test("a tool call the server does not answer within McpCallTimeout is a timeout the model is told about; the server stays in use", async () => {
    const cwd = tmp()
    const ctx = { sessionID: "ses_1", messageID: "m", callID: "c", cwd }
    // wall time: the timeout is the MCP SDK's own timer, here against a server that would answer in an hour
    const { timedOut, ids } = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* McpServers
        const [slow] = yield* mcp.tools("ses_1")
        const timedOut = yield* Effect.flip(slow!.execute({}, ctx))
        return { timedOut, ids: (yield* mcp.tools("ses_1")).map((t) => t.id) }
      }).pipe(Effect.provide(layerFor({ sluggish: local("work", "--slow", "3600000") }, cwd, 200)), Effect.scoped)
    )
    expect(timedOut.reason).toBe("timeout")
    expect(timedOut.message).toBe("The sluggish MCP server did not answer the work call within 200 ms. Try again with less to do, or go on without it.")
    expect(ids).toEqual(["sluggish_work"])
  })
})

// Each test starts a bun process that starts an MCP server (another bun process): wall time, and on
// a busy machine seconds of it, which the package's hang guard (bun test --timeout) allows for.
describe("a broken install", () => {
  const start = async (preload: ReadonlyArray<string>) => {
    const proc = Bun.spawn([process.execPath, ...preload, path.join(import.meta.dir, "fixtures", "start-servers.ts")], { stdout: "pipe", stderr: "pipe" })
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    return { code: await proc.exited, out, err }
  }

  test("an MCP client that cannot be loaded fails each server with why, not the step (the run goes on without their tools)", async () => {
    const broken = await start(["--preload", path.join(import.meta.dir, "fixtures", "broken-sdk.ts")])
    expect(broken.code, broken.err).toBe(0)
    const result = JSON.parse(broken.out.trim().split("\n").pop()!)
    expect(result.tools).toEqual([])
    expect(result.status[0].status).toBe("failed")
    expect(result.status[0].error).toContain('MCP server "one" could not start: the MCP client did not load')
    expect(result.status[0].error).toContain("Cannot find module './chunks/McpConnect.js'")
  })

  test("the same check sees a working install as working", async () => {
    const fine = await start([])
    expect(fine.code, fine.err).toBe(0)
    expect(JSON.parse(fine.out.trim().split("\n").pop()!)).toEqual({ tools: ["one_t"], status: [{ status: "connected" }] })
  })
})
