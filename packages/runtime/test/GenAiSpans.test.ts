// The spans a turn leaves, per the OpenTelemetry GenAI conventions: the runtime over the real
// AI SDK provider talking HTTP to the testkit's scripted server, its spans caught by a tracer
// installed as the runtime's telemetry (the filter for the trace level sits on top of it).
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Layer, Option, Tracer } from "effect"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { tmp } from "./support.ts"

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

const MODEL = { providerID: "local", modelID: "m" }

/** One turn on a new session; every span the runtime's tracer was asked for, ended. */
const traced = async (
  script: ReadonlyArray<ScriptedStep>,
  tracing: RuntimeOptions["tracing"] = {},
  retry?: { attempts: number },
  more: {
    readonly config?: Record<string, unknown>
    readonly permission?: RuntimeOptions["permission"]
    /** Told of each span as it starts and as it ends. */
    readonly watch?: (span: Tracer.NativeSpan, event: "start" | "end") => void
  } = {}
) => {
  const server = await startScriptedServer(script)
  stops.push(() => server.stop())
  const spans: Array<Tracer.NativeSpan> = []
  const capture = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      const watch = more.watch
      if (watch) {
        const end = span.end.bind(span)
        span.end = (endTime, exit) => {
          end(endTime, exit)
          watch(span, "end")
        }
        watch(span, "start")
      }
      return span
    }
  })
  const runtime = makeRuntime({
    cwd: tmp(),
    dataDir: tmp(),
    env: {},
    config: {
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } },
      retry: { attempts: retry?.attempts ?? 1, initial_delay_ms: 1, max_delay_ms: 1 },
      ...more.config
    } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: more.permission ?? { yolo: true },
    telemetry: Layer.succeed(Tracer.Tracer, capture),
    tracing
  })
  const exit = await Effect.runPromiseExit(
    Effect.gen(function* () {
      const sessions = yield* SessionService
      const session = yield* sessions.create({ directory: "/" })
      const turn = yield* sessions.prompt({ sessionID: session.id, text: "list the files", model: MODEL })
      return { sessionID: session.id, turn }
    }).pipe(Effect.withSpan("reins run"), Effect.provide(runtime), Effect.scoped)
  )
  return { spans, exit, server }
}

const named = (spans: ReadonlyArray<Tracer.NativeSpan>, prefix: string) => spans.filter((s) => s.name.startsWith(prefix))
const parentOf = (span: Tracer.NativeSpan) => Option.getOrUndefined(span.parent)?.spanId
const ended = (span: Tracer.NativeSpan) => {
  if (span.status._tag !== "Ended") throw new Error(`span ${span.name} did not end`)
  return span.status
}
const durationMs = (span: Tracer.NativeSpan) => {
  const status = ended(span)
  return Number(status.endTime - status.startTime) / 1e6
}

const twoSteps: ReadonlyArray<ScriptedStep> = [
  {
    toolCalls: [{ name: "bash", arguments: { command: "echo traced", description: "echo" } }],
    usage: { prompt_tokens: 120, completion_tokens: 7, cached_tokens: 20 }
  },
  { text: "All listed.", usage: { prompt_tokens: 150, completion_tokens: 3 } }
]

describe("GenAI spans of a turn", () => {
  test("invoke_agent → chat ×2 (CLIENT) and execute_tool bash, with the conventions' attributes; internal spans hidden, links kept", async () => {
    const { spans, exit } = await traced(twoSteps)
    expect(exit._tag).toBe("Success")
    const [root] = named(spans, "reins run")
    const [agent] = named(spans, "invoke_agent ")
    const chats = named(spans, "chat ")
    const tools = named(spans, "execute_tool ")
    expect(root).toBeDefined()
    expect(agent!.name).toBe("invoke_agent build")
    expect(chats.map((s) => s.name)).toEqual(["chat m", "chat m"])
    expect(tools.map((s) => s.name)).toEqual(["execute_tool bash"])
    // the tree: run → agent → (chat, chat, tool); the hidden spans between them do not break it
    expect(parentOf(agent!)).toBe(root!.spanId)
    for (const s of [...chats, ...tools]) expect(parentOf(s)).toBe(agent!.spanId)
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
    // nothing but the GenAI spans and the root is exported at the default level
    expect(spans.map((s) => s.name).filter((n) => !/^(reins run|invoke_agent |chat |execute_tool )/.test(n))).toEqual([])
    expect(agent!.kind).toBe("internal")
    expect(tools[0]!.kind).toBe("internal")
    for (const chat of chats) expect(chat.kind).toBe("client")

    const a = Object.fromEntries(agent!.attributes)
    expect(a["gen_ai.operation.name"]).toBe("invoke_agent")
    expect(a["gen_ai.agent.name"]).toBe("build")
    expect(a["gen_ai.conversation.id"]).toMatch(/^ses/)
    expect(a["gen_ai.provider.name"]).toBe("openai")
    expect(a["gen_ai.request.model"]).toBe("m")
    expect(a["reins.provider.id"]).toBe("local")
    // summed over the two steps: input counts cached tokens too
    expect(a["gen_ai.usage.input_tokens"]).toBe(270)
    expect(a["gen_ai.usage.output_tokens"]).toBe(10)

    const c = Object.fromEntries(chats[0]!.attributes)
    expect(c["gen_ai.operation.name"]).toBe("chat")
    expect(c["gen_ai.provider.name"]).toBe("openai")
    expect(c["reins.provider.id"]).toBe("local")
    expect(c["gen_ai.request.model"]).toBe("m")
    expect(c["gen_ai.request.max_tokens"]).toBe(2_000)
    expect(c["gen_ai.response.model"]).toBeString()
    expect(c["gen_ai.response.id"]).toBeString()
    expect(c["gen_ai.response.finish_reasons"]).toEqual(["tool_call"])
    expect(Object.fromEntries(chats[1]!.attributes)["gen_ai.response.finish_reasons"]).toEqual(["stop"])
    expect(c["gen_ai.usage.input_tokens"]).toBe(120)
    expect(c["gen_ai.usage.output_tokens"]).toBe(7)
    expect(c["gen_ai.usage.cache_read.input_tokens"]).toBe(20)
    expect(c["gen_ai.usage.reasoning.output_tokens"]).toBe(0)
    expect(c["server.address"]).toBe("127.0.0.1")
    expect(c["server.port"]).toBeNumber()
    expect(c["gen_ai.response.time_to_first_chunk"]).toBeNumber()
    expect(c["error.type"]).toBeUndefined()
    expect(ended(chats[0]!).exit._tag).toBe("Success")

    const t = Object.fromEntries(tools[0]!.attributes)
    expect(t["gen_ai.operation.name"]).toBe("execute_tool")
    expect(t["gen_ai.tool.name"]).toBe("bash")
    expect(t["gen_ai.tool.type"]).toBe("function")
    expect(t["gen_ai.tool.call.id"]).toBeString()
    expect(t["gen_ai.tool.description"]).toBeString()
    expect(t["reins.tool.truncated"]).toBe(false)
    // content is off by default
    for (const s of spans) {
      for (const key of [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result"
      ]) {
        expect(s.attributes.has(key)).toBe(false)
      }
    }
    // no gen_ai attribute on a span that is not a GenAI operation
    expect([...root!.attributes.keys()].filter((k) => k.startsWith("gen_ai."))).toEqual([])
  })

  test("with content capture on: system instructions, input and output messages, tool arguments and result in the conventions' shapes", async () => {
    const { spans, exit } = await traced(twoSteps, { captureContent: true })
    expect(exit._tag).toBe("Success")
    const chats = named(spans, "chat ")
    const [tool] = named(spans, "execute_tool ")
    const first = Object.fromEntries(chats[0]!.attributes)
    const system = JSON.parse(first["gen_ai.system_instructions"] as string) as Array<{ type: string; content: string }>
    expect(system[0]!.type).toBe("text")
    expect(system.map((s) => s.content).join("\n").length).toBeGreaterThan(100)
    const input = JSON.parse(first["gen_ai.input.messages"] as string) as Array<{ role: string; parts: Array<{ type: string; content?: string }> }>
    expect(input.at(-1)).toEqual({ role: "user", parts: [{ type: "text", content: "list the files" }] })
    const output = JSON.parse(first["gen_ai.output.messages"] as string) as Array<{
      role: string
      finish_reason: string
      parts: Array<{ type: string; name?: string; arguments?: unknown }>
    }>
    expect(output[0]!.role).toBe("assistant")
    expect(output[0]!.finish_reason).toBe("tool_call")
    expect(output[0]!.parts).toContainEqual(
      expect.objectContaining({ type: "tool_call", name: "bash", arguments: { command: "echo traced", description: "echo" } })
    )
    // the second call sees the tool's answer as a tool_call_response
    const second = JSON.parse(Object.fromEntries(chats[1]!.attributes)["gen_ai.input.messages"] as string) as Array<{
      role: string
      parts: Array<{ type: string }>
    }>
    expect(second.flatMap((m) => m.parts.map((p) => p.type))).toContain("tool_call_response")
    const answer = JSON.parse(Object.fromEntries(chats[1]!.attributes)["gen_ai.output.messages"] as string)
    expect(answer[0].parts).toEqual([{ type: "text", content: "All listed." }])
    const t = Object.fromEntries(tool!.attributes)
    expect(JSON.parse(t["gen_ai.tool.call.arguments"] as string)).toEqual({ command: "echo traced", description: "echo" })
    expect(t["gen_ai.tool.call.result"]).toContain("traced")
  })

  test("a failed call: the chat span fails with error.type (the HTTP status), and so does the agent's", async () => {
    const { spans, exit } = await traced([{ error: { status: 400, message: "bad request: no such thing" } }])
    expect(exit._tag).toBe("Failure")
    const [chat] = named(spans, "chat ")
    const [agent] = named(spans, "invoke_agent ")
    expect(Object.fromEntries(chat!.attributes)["error.type"]).toBe("400")
    expect(ended(chat!).exit._tag).toBe("Failure")
    expect(Object.fromEntries(agent!.attributes)["error.type"]).toBe("invalid")
    expect(ended(agent!).exit._tag).toBe("Failure")
  })

  test("a retried call is one chat span per attempt: the failed one with error.type, numbered by reins.attempt", async () => {
    const { spans, exit } = await traced([{ error: { status: 503, message: "overloaded" } }, { text: "fine now" }], {}, { attempts: 2 })
    expect(exit._tag).toBe("Success")
    const chats = named(spans, "chat ")
    expect(chats.map((s) => [s.attributes.get("reins.attempt"), s.attributes.get("error.type")])).toEqual([
      [1, "503"],
      [2, undefined]
    ])
  })

  test("model latency is the chat span's alone: a 300 ms answer and a tool that outlasts it", async () => {
    // The tool finishes once the chat span has ended and the tool has run longer than the chat took:
    // the spans' order is then the events', whatever the machine's speed.
    const release = path.join(tmp(), "release")
    let chatMs: number | undefined
    let toolStarted = false
    let released = false
    const releaseOnce = () => {
      if (released || chatMs === undefined || !toolStarted) return
      released = true
      // wall time: spans measure it, so the tool is held on for longer than the chat took
      setTimeout(() => fs.writeFileSync(release, ""), chatMs + 5)
    }
    const { spans, exit } = await traced(
      [
        { toolCalls: [{ name: "bash", arguments: { command: `until [ -e ${release} ]; do sleep 0.01; done`, description: "wait" } }], delayMs: 300 },
        { text: "waited" }
      ],
      {},
      undefined,
      {
        watch: (span, event) => {
          if (event === "end" && span.name.startsWith("chat ")) chatMs ??= durationMs(span)
          else if (event === "start" && span.name.startsWith("execute_tool ")) toolStarted = true
          else return
          releaseOnce()
        }
      }
    )
    expect(exit._tag).toBe("Success")
    const [chat] = named(spans, "chat ")
    const [tool] = named(spans, "execute_tool ")
    // the chat span ends with the answer's stream, before the tool it started has finished
    expect(durationMs(chat!)).toBeLessThan(durationMs(tool!))
    expect(ended(chat!).endTime).toBeLessThan(ended(tool!).endTime)
  })

  test("a failed tool call: its execute_tool span fails with error.type, the turn goes on", async () => {
    const { spans, exit } = await traced([{ toolCalls: [{ name: "bash", arguments: { description: "no command" } }] }, { text: "sorry" }])
    expect(exit._tag).toBe("Success")
    const [tool] = named(spans, "execute_tool ")
    expect(Object.fromEntries(tool!.attributes)["error.type"]).toBe("invalid-arguments")
    expect(ended(tool!).exit._tag).toBe("Failure")
    const [agent] = named(spans, "invoke_agent ")
    expect(agent!.attributes.has("error.type")).toBe(false)
  })

  test("a permission question is a child span of its execute_tool span", async () => {
    const asked: Array<string> = []
    const { spans, exit } = await traced(twoSteps, {}, undefined, {
      config: { permission: { bash: "ask" } },
      permission: { prompter: { ask: (request) => Effect.sync(() => void asked.push(request.permission)).pipe(Effect.as({ reply: "once" as const })) } }
    })
    expect(exit._tag).toBe("Success")
    expect(asked).toEqual(["bash"])
    const [tool] = named(spans, "execute_tool ")
    const [question] = named(spans, "Permission.ask")
    expect(parentOf(question!)).toBe(tool!.spanId)
    expect(Object.fromEntries(question!.attributes)).toMatchObject({ "permission.name": "bash", "permission.action": "ask" })
    expect([...question!.attributes.keys()].filter((k) => k.startsWith("gen_ai."))).toEqual([])
  })

  test("REINS_TRACE_LEVEL=debug (level: debug) keeps every span: storage, services, the step", async () => {
    const { spans } = await traced(twoSteps, { level: "debug" })
    const names = new Set(spans.map((s) => s.name))
    expect(names.has("session.step")).toBe(true)
    expect(names.has("SessionService.prompt")).toBe(true)
    expect([...names].some((n) => n.startsWith("SessionStore."))).toBe(true)
    // the step holds its chat span: the step's attributes are reins's own
    for (const step of named(spans, "session.step")) expect([...step.attributes.keys()].filter((k) => k.startsWith("gen_ai."))).toEqual([])
  })
})
