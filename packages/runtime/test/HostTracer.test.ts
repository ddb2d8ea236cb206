// The host-tracer mode: a process that runs the OpenTelemetry SDK (here its trace SDK with an
// in-memory exporter and the AsyncLocalStorage context manager, as NodeSDK sets up) wraps a
// makeRuntime turn in its own span; reins's spans arrive through the host's exporter as its
// descendants, and the AI SDK's own spans (a registered telemetry integration) nest under `chat`.
import { afterAll, expect, test } from "bun:test"
import { context, trace, SpanKind, SpanStatusCode, type Span } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { registerTelemetry } from "ai"
import { Effect } from "effect"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { startScriptedServer } from "@reins/testkit"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { tmp } from "./support.ts"

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const contextManager = new AsyncLocalStorageContextManager().enable()
context.setGlobalContextManager(contextManager)
trace.setGlobalTracerProvider(provider)
afterAll(async () => {
  await provider.shutdown()
  contextManager.disable()
  trace.disable()
  context.disable()
})

// What an OpenTelemetry integration of the AI SDK does: a span per model call, under the active span.
const open = new Map<string, Span>()
registerTelemetry({
  onLanguageModelCallStart: (event) => {
    open.set(String(event.callId), trace.getTracer("ai-sdk-test").startSpan("ai.streamText.doStream", {}, context.active()))
  },
  onLanguageModelCallEnd: (event) => {
    open.get(String(event.callId))?.end()
  }
})

test("reins's spans are children of the host's active span, through the host's exporter; the AI SDK's nest under chat", async () => {
  const server = await startScriptedServer([{ toolCalls: [{ name: "bash", arguments: { command: "echo hosted", description: "echo" } }] }, { text: "done" }])
  const runtime = makeRuntime({
    cwd: tmp(),
    dataDir: tmp(),
    env: {},
    config: { provider: { local: { type: "openai-compatible", baseURL: server.url } } } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: { yolo: true },
    tracing: { host: true, aiSdkSpans: true }
  })
  const turn = Effect.gen(function* () {
    const sessions = yield* SessionService
    const session = yield* sessions.create({ directory: "/" })
    return yield* sessions.prompt({ sessionID: session.id, text: "hello", model: { providerID: "local", modelID: "m" } })
  })
  const host = trace.getTracer("host-app")
  await host.startActiveSpan("handle request", async (span) => {
    await Effect.runPromise(turn.pipe(Effect.provide(runtime), Effect.scoped))
    span.end()
  })
  await server.stop()

  const spans = exporter.getFinishedSpans()
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const parent = (s: ReadableSpan) => byId.get(s.parentSpanContext?.spanId ?? "")
  const ancestors = (s: ReadableSpan): Array<string> => {
    const p = parent(s)
    return p ? [p.name, ...ancestors(p)] : []
  }
  const root = spans.find((s) => s.name === "handle request")!
  const agent = spans.find((s) => s.name === "invoke_agent build")!
  const chats = spans.filter((s) => s.name === "chat m")
  const tool = spans.find((s) => s.name === "execute_tool bash")!
  expect(root).toBeDefined()
  expect(agent).toBeDefined()
  expect(chats.length).toBe(2)
  expect(tool).toBeDefined()
  // every reins span is in the host's trace, under its span; hidden spans left no gap
  for (const s of spans) expect(s.spanContext().traceId).toBe(root.spanContext().traceId)
  expect(ancestors(agent)).toEqual(["handle request"])
  for (const s of [...chats, tool]) expect(parent(s)?.name).toBe("invoke_agent build")
  expect(spans.some((s) => s.name.startsWith("SessionStore."))).toBe(false)
  // kinds and attributes as the conventions have them; a success leaves the status unset
  expect(agent.kind).toBe(SpanKind.INTERNAL)
  expect(tool.kind).toBe(SpanKind.INTERNAL)
  for (const chat of chats) {
    expect(chat.kind).toBe(SpanKind.CLIENT)
    expect(chat.status.code).toBe(SpanStatusCode.UNSET)
    expect(chat.attributes["gen_ai.operation.name"]).toBe("chat")
    expect(chat.attributes["gen_ai.provider.name"]).toBe("openai")
    expect(chat.attributes["gen_ai.request.model"]).toBe("m")
  }
  expect(agent.attributes["gen_ai.agent.name"]).toBe("build")
  expect(tool.attributes["gen_ai.tool.name"]).toBe("bash")
  // the AI SDK's own span of each model call sits under the chat span that made it
  const sdk = spans.filter((s) => s.name === "ai.streamText.doStream")
  expect(sdk.length).toBe(2)
  for (const s of sdk) expect(parent(s)?.name).toBe("chat m")
})
