import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test"
import { Context, Effect, Metric } from "effect"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { startOtlpReceiver, startScriptedServer, type OtlpReceiver, type ReceivedDataPoint, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { makeRecorder } from "../src/Metrics.ts"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import * as fs from "node:fs"
import * as path from "node:path"
import { tmp } from "./support.ts"

let receiver: OtlpReceiver
let server: ScriptedServer | undefined
beforeAll(async () => {
  receiver = await startOtlpReceiver()
})
afterAll(() => receiver.stop())
afterEach(async () => {
  await server?.stop()
  server = undefined
  receiver.clear()
})

/** One turn of a new session on a runtime exporting to the receiver; closing the runtime flushes. */
const turn = async (steps: ReadonlyArray<ScriptedStep>, env: Record<string, string>, options: Partial<RuntimeOptions> = {}) => {
  server = await startScriptedServer(steps)
  const layer = makeRuntime({
    cwd: tmp(),
    dataDir: tmp(),
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env },
    config: {
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } },
      retry: { attempts: 1, initial_delay_ms: 1, max_delay_ms: 1 }
    } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: { yolo: true },
    ...options
  })
  return Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* SessionService
      const session = yield* sessions.create({ directory: "/" })
      return yield* sessions.prompt({ sessionID: session.id, text: "go", model: { providerID: "local", modelID: "m" } })
    }).pipe(Effect.provide(layer), Effect.scoped, Effect.exit)
  )
}

const points = (metric: string, where: Record<string, unknown> = {}) =>
  receiver.dataPoints.filter((p) => p.metric === metric && Object.entries(where).every(([k, v]) => p.attributes[k] === v))
// cumulative export: the last point of a series holds its totals
const last = (metric: string, where: Record<string, unknown> = {}): ReceivedDataPoint => points(metric, where).at(-1)!

const twoSteps: ReadonlyArray<ScriptedStep> = [
  { toolCalls: [{ name: "bash", arguments: { command: "echo metrics" } }], usage: { prompt_tokens: 120, completion_tokens: 7 } },
  { text: "done", usage: { prompt_tokens: 150, completion_tokens: 3 } }
]

describe("metrics over OTLP", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    test(`a 2-step turn with a bash call (${protocol}): token usage, operation duration, tool duration`, async () => {
      const exit = await turn(twoSteps, { OTEL_EXPORTER_OTLP_PROTOCOL: protocol })
      expect(exit._tag).toBe("Success")
      await receiver.waitFor((r) => r.dataPoints.some((p) => p.metric === "reins.tool.duration"))
      expect(receiver.errors).toEqual([])
      expect(
        receiver.requests.some((r) => r.path === "/v1/metrics" && r.contentType === (protocol === "http/json" ? "application/json" : "application/x-protobuf"))
      ).toBe(true)

      const chat = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m" }
      const input = last("gen_ai.client.token.usage", { ...chat, "gen_ai.token.type": "input" })
      const output = last("gen_ai.client.token.usage", { ...chat, "gen_ai.token.type": "output" })
      for (const p of [input, output]) {
        expect(p.type).toBe("histogram")
        expect(p.unit).toBe("{token}")
        expect(p.count).toBe(2)
        expect(typeof p.attributes["gen_ai.response.model"]).toBe("string")
        // no `unit` attribute (it only carries the unit to the exporter) and no server or error attributes here
        expect(Object.keys(p.attributes).sort()).toEqual([
          "gen_ai.operation.name",
          "gen_ai.provider.name",
          "gen_ai.request.model",
          "gen_ai.response.model",
          "gen_ai.token.type"
        ])
      }
      expect(input.sum).toBe(270)
      expect(output.sum).toBe(10)

      const duration = last("gen_ai.client.operation.duration", chat)
      expect(duration.type).toBe("histogram")
      expect(duration.unit).toBe("s")
      expect(duration.count).toBe(2)
      expect(duration.sum).toBeGreaterThan(0)
      expect(duration.attributes["server.address"]).toBe("127.0.0.1")
      expect(duration.attributes["server.port"]).toBe(Number(new URL(server!.url).port))
      expect(duration.attributes["error.type"]).toBeUndefined()
      expect(duration.explicitBounds?.[0]).toBe(0.01)

      const tool = last("reins.tool.duration", { "gen_ai.tool.name": "bash" })
      expect(tool.unit).toBe("s")
      expect(tool.count).toBe(1)
      expect(tool.attributes["error.type"]).toBeUndefined()
      expect(input.resource["service.name"]).toBe("reins")
    })
  }

  test("a failed model call: the duration point carries error.type", async () => {
    const exit = await turn([{ error: { status: 400, message: "bad request" } }], {})
    expect(exit._tag).toBe("Failure")
    await receiver.waitFor((r) => r.dataPoints.some((p) => p.metric === "gen_ai.client.operation.duration"))
    const failed = last("gen_ai.client.operation.duration", { "gen_ai.operation.name": "chat" })
    expect(failed.count).toBe(1)
    expect(typeof failed.attributes["error.type"]).toBe("string")
    expect(points("gen_ai.client.token.usage")).toHaveLength(0)
  })

  test("a permission question answered by the non-interactive policy is counted by decision", async () => {
    // reading a .env file is a question by default
    const cwd = tmp()
    fs.writeFileSync(path.join(cwd, ".env"), "TOKEN=x\n")
    const exit = await turn(
      [{ toolCalls: [{ name: "read", arguments: { filePath: path.join(cwd, ".env") } }] }, { text: "ok" }],
      {},
      { cwd, permission: { nonInteractive: "deny" } }
    )
    expect(exit._tag).toBe("Success")
    await receiver.waitFor((r) => r.dataPoints.some((p) => p.metric === "reins.permission.asks"))
    const asks = last("reins.permission.asks")
    expect(asks.type).toBe("sum")
    expect(asks.unit).toBe("{ask}")
    expect(asks.isMonotonic).toBe(true)
    expect(asks.value).toBe(1)
    expect(asks.attributes).toEqual({ "reins.permission.decision": "reject", "reins.permission.by": "policy", "reins.permission": "read" })
    // the refused call still ends, as an error
    expect(last("reins.tool.duration", { "gen_ai.tool.name": "read" }).attributes["error.type"]).toBe("tool_error")
  })

  test("OTEL_METRICS_EXPORTER=none: spans still go, no metrics", async () => {
    const exit = await turn(twoSteps, { OTEL_METRICS_EXPORTER: "none" })
    expect(exit._tag).toBe("Success")
    expect(receiver.spans.length).toBeGreaterThan(0)
    expect(receiver.requests.filter((r) => r.path === "/v1/metrics")).toHaveLength(0)
  })

  test("OTEL_TRACES_EXPORTER=none: metrics still go, no spans", async () => {
    const exit = await turn(twoSteps, { OTEL_TRACES_EXPORTER: "none" })
    expect(exit._tag).toBe("Success")
    await receiver.waitFor((r) => r.dataPoints.some((p) => p.metric === "gen_ai.client.token.usage"))
    expect(receiver.requests.filter((r) => r.path === "/v1/traces")).toHaveLength(0)
  })
})

describe("the bus recorder", () => {
  const snapshot = (registry: Metric.MetricRegistry) =>
    Metric.snapshotUnsafe(Context.make(Metric.MetricRegistry, registry)).map((s) => ({ id: s.id, attributes: s.attributes, state: s.state }))

  test("compactions by reason: counted when they complete, with the reason they started for", () => {
    const registry: Metric.MetricRegistry = new Map()
    const recorder = makeRecorder(registry)
    const completed = (sessionID: string) =>
      ({ type: "compaction.completed", sessionID, messageID: "m", tokensBefore: 10, tokensAfter: 2, pruned: [], summarised: [], summary: "s" }) as const
    recorder.event({ type: "compaction.started", sessionID: "a", reason: "overflow", tokens: 10 })
    recorder.event({ type: "compaction.started", sessionID: "b", reason: "manual", tokens: 10 })
    recorder.event(completed("a"))
    recorder.event(completed("b"))
    recorder.event({ type: "compaction.started", sessionID: "a", reason: "overflow", tokens: 10 })
    recorder.event(completed("a"))
    const counts = snapshot(registry).filter((s) => s.id === "reins.compactions")
    const by = (reason: string) => counts.find((c) => c.attributes?.["reins.compaction.reason"] === reason)?.state
    expect(by("overflow")).toMatchObject({ count: 2 })
    expect(by("manual")).toMatchObject({ count: 1 })
  })

  test("a tool part published again after it ended is measured once", () => {
    const registry: Metric.MetricRegistry = new Map()
    const recorder = makeRecorder(registry)
    const part = {
      id: "prt_1",
      sessionID: "s",
      messageID: "m",
      type: "tool",
      callID: "c",
      tool: "bash",
      state: { status: "completed", input: {}, output: "x", title: "", metadata: {}, time: { start: 1_000, end: 3_500 } }
    } as const
    recorder.event({ type: "part.updated", part })
    recorder.event({ type: "part.updated", part: { ...part, state: { ...part.state, time: { ...part.state.time, compacted: 9_000 } } } })
    const tool = snapshot(registry).find((s) => s.id === "reins.tool.duration")
    expect(tool?.state).toMatchObject({ count: 1, sum: 2.5 })
  })
})
