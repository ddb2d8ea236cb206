import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { Bus, type Event } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import type { ScriptedServer, ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { scriptedRuntimes, tmp } from "./support.ts"

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
const runTurn = (layer: Awaited<ReturnType<typeof setup>>["layer"]) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* SessionService
      const session = yield* sessions.create({ directory: "/" })
      return yield* sessions.prompt({ sessionID: session.id, text: "go", model })
    }).pipe(Effect.provide(layer), Effect.scoped)
  )

describe("spill files", () => {
  test("a spilled output can be grepped and read back without a prompt, even when asks are denied", async () => {
    const dataDir = tmp()
    const spill = path.join(dataDir, "tool-output")
    const made = await runtime(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "seq 1 300000" } }] },
        { toolCalls: [{ name: "grep", arguments: { pattern: "^299999$", path: spill } }] },
        { toolCalls: [{ name: "read", arguments: { filePath: path.join(spill, "SPILLED"), offset: 150000, limit: 2 } }] },
        { text: "found it" }
      ],
      { dataDir, config: { permission: { bash: "allow" } }, permission: { nonInteractive: "deny" } }
    )
    const { cwd, layer } = made
    server = made.server
    const asked: Array<Event> = []
    const messages = await Effect.runPromise(
      Effect.gen(function* () {
        const bus = yield* Bus
        yield* bus.listen((e) => Effect.sync(() => void (e.type === "permission.asked" && asked.push(e))))
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "count", model })
        return yield* (yield* SessionStore).messages(session.id)
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const tools = messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : []))
    expect(tools.map((t) => `${t.tool}:${t.state.status}`)).toEqual(["bash:completed", "grep:completed", "read:error"])
    const grep = tools[1]!.state
    expect(grep.status === "completed" && grep.output).toContain("Line 299999: 299999")
    // the read failed only because the script cannot know the file's name: not for permission
    const read = tools[2]!.state
    expect(read.status === "error" && read.error).toContain("not found")
    expect(asked).toEqual([])
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
    const states = events.flatMap((e) => (e.type === "part.updated" && e.part.type === "tool" ? [e.part.state.status] : []))
    expect(states).toEqual(["pending", "running", "completed"])
    // the second request carried the tool result back to the model
    const second = server!.requests[1]!.body.messages as Array<{ role: string; content: unknown }>
    expect(second.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("hello"))).toBe(true)
  })

  test("a provider that says stop with tool calls does not end the loop", async () => {
    const { layer } = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "true" } }], finishReason: "stop" },
      { text: "done" }
    ])
    const turn = await runTurn(layer)
    expect(turn.steps).toBe(2)
    expect(turn.text).toBe("done")
  })

  test("the step limit ends with a final step that has no tools", async () => {
    const { layer } = await setup(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "true" } }] },
        { text: "summary" }
      ],
      { maxSteps: 2 }
    )
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
        yield* Effect.sleep(400)
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
    const { layer } = await setup([
      { toolCalls: [{ name: "bash", arguments: { timeout: "soon" } }] },
      { text: "fixed" }
    ])
    const turn = await runTurn(layer)
    expect(turn.text).toBe("fixed")
    const second = JSON.stringify(server!.requests[1]!.body.messages)
    expect(second).toContain("The bash tool was called with invalid arguments")
  })
})
