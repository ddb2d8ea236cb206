// WorkDir and DataDir are required services (issue 14, item 4): leaving them out is a type error,
// and every value the library uses comes from makeRuntime's options, not from the process.
import { describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { DataDir, WorkDir } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore, Storage } from "@reins/storage"
import { Truncate } from "@reins/truncate"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeRuntime } from "../src/Runtime.ts"
import { scriptedRuntimes, tmp } from "./support.ts"

const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }

const directories = Effect.gen(function* () {
  return { cwd: yield* WorkDir, dataDir: yield* DataDir }
})

describe("WorkDir and DataDir are required", () => {
  test("an effect or layer that needs them and does not get them does not type-check", async () => {
    // @ts-expect-error WorkDir and DataDir have no default: running this without them is a type error
    const unprovided: Effect.Effect<{ cwd: string; dataDir: string }> = directories
    // @ts-expect-error the spill directory lives in the DataDir: Truncate.layer needs one
    const truncate: Layer.Layer<Truncate> = Truncate.layer
    // @ts-expect-error the SQLite store keeps reins.db in the DataDir: Storage.layer needs one
    const store: Layer.Layer<Storage.Services, unknown> = Storage.layer
    // @ts-expect-error the session loop resolves the worktree from the WorkDir: SessionService.layer needs it
    const session: Layer.Layer<SessionService, unknown> = SessionService.layer.pipe(Layer.provide(Layer.succeed(DataDir, "/data")))
    expect([unprovided, truncate, store, session].every((x) => x !== undefined)).toBe(true)
    // provided, the values are the ones given
    const given = await Effect.runPromise(directories.pipe(Effect.provideService(WorkDir, "/work"), Effect.provideService(DataDir, "/data")))
    expect(given).toEqual({ cwd: "/work", dataDir: "/data" })
  })
})

describe("the runtime provides them from its options", () => {
  test("tools resolve relative paths against the given cwd, not process.cwd(), and spill files land in the given dataDir", async () => {
    const cwd = tmp()
    const dataDir = tmp()
    expect(process.cwd()).not.toBe(cwd)
    fs.writeFileSync(path.join(cwd, "only-here.txt"), "the file in the given cwd\n")
    const { server, layer } = await runtime(
      [
        { toolCalls: [{ name: "read", arguments: { filePath: "only-here.txt" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "pwd" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "seq 1 300000" } }] },
        { text: "done" }
      ],
      { cwd, dataDir }
    )
    const parts = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "go", model })
        const messages = yield* (yield* SessionStore).messages(session.id)
        return messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p.state.output] : [])))
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(server.requests).toHaveLength(4)
    expect(parts).toHaveLength(3)
    expect(parts[0]).toContain("the file in the given cwd")
    expect(parts[1]).toContain(cwd)
    const spilled = /saved in (\S+?\.txt)/.exec(parts[2]!)?.[1]
    expect(spilled).toBeDefined()
    expect(spilled!.startsWith(path.join(dataDir, "tool-output") + path.sep)).toBe(true)
    expect(fs.readFileSync(spilled!, "utf8")).toContain("\n299999\n")
  })

  test("the default store keeps reins.db in the given dataDir", async () => {
    const dataDir = tmp()
    const { server } = await runtime([{ text: "hi" }], { dataDir })
    // makeRuntime without a store: SQLite in the DataDir the runtime provides
    const layer = makeRuntime({
      cwd: tmp(),
      dataDir,
      env: {},
      config: { provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } } }
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: "/" })
        yield* sessions.prompt({ sessionID: session.id, text: "go", model })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(server.requests).toHaveLength(1)
    expect(fs.existsSync(path.join(dataDir, "reins.db"))).toBe(true)
  })

  test("`~` in permission patterns and in scanned commands is the runtime's home option", async () => {
    const home = tmp("reins-home-")
    fs.mkdirSync(path.join(home, "open"))
    const { server, layer } = await runtime(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "echo hi > ~/guarded/a.txt" } }] },
        { toolCalls: [{ name: "write", arguments: { filePath: path.join(home, "guarded", "b.txt"), content: "x" } }] },
        { toolCalls: [{ name: "write", arguments: { filePath: path.join(home, "open", "c.txt"), content: "x" } }] },
        { text: "done" }
      ],
      { config: { permission: { "*": "allow", edit: { "*": "allow", "~/guarded/*": "deny" } } }, permission: { nonInteractive: "deny" }, home }
    )
    const states = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: "/" })
        yield* sessions.prompt({ sessionID: session.id, text: "go", model })
        const messages = yield* (yield* SessionStore).messages(session.id)
        return messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p.state] : [])))
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(server.requests).toHaveLength(4)
    expect(states.map((s) => s.status)).toEqual(["error", "error", "completed"])
    for (const s of states.slice(0, 2)) expect(s.status === "error" && s.error).toContain(path.join(home, "guarded"))
    expect(fs.existsSync(path.join(home, "guarded"))).toBe(false)
    expect(fs.readFileSync(path.join(home, "open", "c.txt"), "utf8")).toBe("x")
  })
})
