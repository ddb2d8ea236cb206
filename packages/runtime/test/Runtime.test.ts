import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { Bus, type Event } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { eventually, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { runIn, scriptedRuntimes, sessionTurns, tmp } from "./support.ts"

const runtime = scriptedRuntimes()
let server: ScriptedServer | undefined

const setup = async (steps: ReadonlyArray<ScriptedStep>, extra: { maxSteps?: number } = {}) => {
  const made = await runtime(steps, {
    config: { retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5 }, ...(extra.maxSteps ? { agent: { steps: extra.maxSteps } } : {}) }
  })
  server = made.server
  return made
}

const model = { providerID: "local", modelID: "m" }

/** One turn on a new session. */
const runTurn = (layer: Awaited<ReturnType<typeof setup>>["layer"]) => runIn(layer, sessionTurns([{ text: "go", model }])).then((out) => out.results[0]!)

describe("spill files", () => {
  test("a session reads its own spill files without a prompt; another session is asked; nobody writes there", async () => {
    const dataDir = tmp()
    const spill = path.join(dataDir, "tool-output")
    let file = ""
    // the path comes from the truncation notice the model was shown
    const own = (body: any) => {
      file ||= /saved in (\S+?\.txt)/.exec(JSON.stringify(body.messages))?.[1] ?? ""
      return file
    }
    const script: Array<(body: any) => ScriptedStep> = [
      () => ({ toolCalls: [{ name: "bash", arguments: { command: "seq 1 300000" } }] }),
      (body) => ({ toolCalls: [{ name: "grep", arguments: { pattern: "^299999$", path: path.dirname(own(body)) } }] }),
      () => ({ toolCalls: [{ name: "read", arguments: { filePath: file, offset: 150000, limit: 2 } }] }),
      () => ({ toolCalls: [{ name: "grep", arguments: { pattern: "^12345$", path: file } }] }),
      () => ({ toolCalls: [{ name: "list", arguments: { path: path.dirname(file) } }] }),
      () => ({ toolCalls: [{ name: "write", arguments: { filePath: path.join(path.dirname(file), "forged.txt"), content: "x" } }] }),
      () => ({ toolCalls: [{ name: "edit", arguments: { filePath: file, oldString: "299999", newString: "forged" } }] }),
      () => ({ text: "found it" }),
      // a second session
      () => ({ toolCalls: [{ name: "read", arguments: { filePath: file } }] }),
      () => ({ toolCalls: [{ name: "grep", arguments: { pattern: "^1$", path: file } }] }),
      () => ({ toolCalls: [{ name: "grep", arguments: { pattern: "^1$", path: spill } }] }),
      () => ({ toolCalls: [{ name: "list", arguments: { path: spill } }] }),
      () => ({ toolCalls: [{ name: "glob", arguments: { pattern: "**/*.txt", path: spill } }] }),
      () => ({ text: "not mine" })
    ]
    const made = await runtime([], {
      dataDir,
      config: { permission: { bash: "allow", edit: "allow" } },
      permission: { nonInteractive: "deny" },
      server: { respond: (body, index) => script[index]?.(body) }
    })
    const { cwd, layer } = made
    server = made.server
    const asked: Array<Event & { type: "permission.asked" }> = []
    const [mine, theirs, secondID] = await Effect.runPromise(
      Effect.gen(function* () {
        const bus = yield* Bus
        yield* bus.listen((e) => Effect.sync(() => void (e.type === "permission.asked" && asked.push(e))))
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const tools = (id: string) => Effect.map(store.messages(id), (ms) => ms.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : [])))
        const first = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: first.id, text: "count", model })
        const second = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: second.id, text: "peek", model })
        return [yield* tools(first.id), yield* tools(second.id), second.id] as const
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(path.dirname(path.dirname(file))).toBe(spill)
    const status = (t: (typeof mine)[number]) => `${t.tool}:${t.state.status}`
    expect(mine.map(status)).toEqual(["bash:completed", "grep:completed", "read:completed", "grep:completed", "list:completed", "write:error", "edit:error"])
    const output = (i: number) => (mine[i]!.state.status === "completed" ? (mine[i]!.state as { output: string }).output : "")
    expect(output(1)).toContain("Line 299999: 299999")
    expect(output(2)).toContain("150000| 150000")
    expect(output(3)).toContain("Line 12345: 12345")
    // writing there is denied by a rule even though edit is allowed: never asked
    for (const t of mine.slice(5)) expect(t.state.status === "error" && t.state.error).toContain("deny edit")
    expect(fs.existsSync(path.join(path.dirname(file), "forged.txt"))).toBe(false)
    expect(asked.length).toBeGreaterThan(0)
    expect(asked.every((a) => a.sessionID === secondID)).toBe(true)
    // another session: every look at the first one's output, or at the whole spill directory, asks
    expect(theirs.map(status)).toEqual(["read:error", "grep:error", "grep:error", "list:error", "glob:error"])
    for (const t of theirs) expect(t.state.status === "error" && t.state.error).toContain("needs approval")
    expect(asked.map((a) => a.permission)).toEqual([
      "external_directory",
      "external_directory",
      "external_directory",
      "external_directory",
      "external_directory"
    ])
  })
})

describe("spill files under --yolo", () => {
  test("writing into the spill directory is denied even when everything is allowed", async () => {
    const dataDir = tmp()
    const spill = path.join(dataDir, "tool-output")
    const made = await runtime(
      [
        { toolCalls: [{ name: "write", arguments: { filePath: path.join(spill, "ses_other", "call_1.txt"), content: "forged" } }] },
        { toolCalls: [{ name: "edit", arguments: { filePath: path.join(spill, "x.txt"), oldString: "", newString: "forged" } }] },
        { text: "done" }
      ],
      { dataDir, permission: { yolo: true } }
    )
    server = made.server
    const parts = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: made.cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "forge", model })
        return (yield* (yield* SessionStore).messages(session.id)).flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : []))
      }).pipe(Effect.provide(made.layer), Effect.scoped)
    )
    expect(parts.map((p) => p.state.status)).toEqual(["error", "error"])
    for (const p of parts) expect(p.state.status === "error" && p.state.error).toContain("deny edit")
    expect(fs.existsSync(spill) ? fs.readdirSync(spill, { recursive: true }) : []).toEqual([])
  })
})

describe("agent loop through the composed runtime", () => {
  test("runs tool steps until a text answer, storing every part", async () => {
    const { cwd, layer } = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo hello > out.txt && cat out.txt" } }] },
      { text: "The file says hello." }
    ])
    const events: Array<Event> = []
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const bus = yield* Bus
        yield* bus.listen((e) => Effect.sync(() => void events.push(e)))
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        const turn = yield* sessions.prompt({ sessionID: session.id, text: "write and read", model })
        const messages = yield* (yield* SessionStore).messages(session.id)
        return { turn, messages }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(result.turn.steps).toBe(2)
    expect(result.turn.text).toBe("The file says hello.")
    expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8")).toBe("hello\n")
    const roles = result.messages.map((m) => m.info.role)
    expect(roles).toEqual(["user", "assistant", "assistant"])
    const tool = result.messages[1]!.parts.find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state.status).toBe("completed")
    expect(tool?.type === "tool" && tool.state.status === "completed" && tool.state.output).toContain("hello")
    // a running call's progress (bash: its process group, at once) repeats its state: counted once
    const states = events
      .flatMap((e) => (e.type === "part.updated" && e.part.type === "tool" ? [e.part.state.status] : []))
      .filter((state, i, all) => state !== all[i - 1])
    expect(states).toEqual(["pending", "running", "completed"])
    // the second request carried the tool result back to the model
    const second = server!.requests[1]!.body.messages as Array<{ role: string; content: unknown }>
    expect(second.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("hello"))).toBe(true)
  })

  test("a provider that says stop with tool calls does not end the loop", async () => {
    const { layer } = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "true" } }], finishReason: "stop" }, { text: "done" }])
    const turn = await runTurn(layer)
    expect(turn.steps).toBe(2)
    expect(turn.text).toBe("done")
  })

  test("the step limit ends with a final step that has no tools", async () => {
    const { layer } = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "true" } }] }, { text: "summary" }], { maxSteps: 2 })
    const turn = await runTurn(layer)
    expect(turn.steps).toBe(2)
    expect(turn.text).toBe("summary")
    const last = server!.requests[1]!.body
    expect(last.tools).toBeUndefined()
    expect(JSON.stringify(last.messages)).toContain("maximum number of steps")
  })

  test("interrupting a running tool leaves no part pending or running", async () => {
    const { cwd, layer } = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "sleep 20.25" } }] }])
    const messages = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const fiber = yield* Effect.forkChild(sessions.prompt({ sessionID: session.id, text: "sleep", model }))
        yield* eventually(
          Effect.map(store.messages(session.id), (messages) => messages.some((m) => m.parts.some((p) => p.type === "tool" && p.state.status === "running"))),
          "the tool to run"
        )
        yield* Fiber.interrupt(fiber)
        return yield* store.messages(session.id)
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const tool = messages.flatMap((m) => m.parts).find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state).toMatchObject({ status: "error", interrupted: true })
    const assistant = messages.find((m) => m.info.role === "assistant")!.info
    expect(assistant.role === "assistant" && assistant.error?.reason).toBe("interrupted")
  })

  test("an invalid tool call becomes an error result the model sees, and the loop goes on", async () => {
    const { layer } = await setup([{ toolCalls: [{ name: "bash", arguments: { timeout: "soon" } }] }, { text: "fixed" }])
    const turn = await runTurn(layer)
    expect(turn.text).toBe("fixed")
    const second = JSON.stringify(server!.requests[1]!.body.messages)
    expect(second).toContain("The bash tool was called with invalid arguments")
  })
})
