import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Clock, Effect, Layer, Metric } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { startOtlpReceiver, waitFor, type OtlpReceiver } from "../src/index.ts"

// Effect's own OTLP exporters, the ones reins uses, are the real clients here.
const serialization = { protobuf: OtlpSerialization.layerProtobuf, json: OtlpSerialization.layerJson } as const
type Encoding = keyof typeof serialization

const exportTraces = (receiver: OtlpReceiver, encoding: Encoding, program: Effect.Effect<unknown, unknown>) =>
  Effect.runPromise(
    Effect.ignore(program).pipe(
      Effect.provide(
        OtlpTracer.layer({
          url: `${receiver.url}/v1/traces`,
          resource: { serviceName: "receiver-test", attributes: { "deployment.environment": "test" } }
        }).pipe(Layer.provide(serialization[encoding]), Layer.provide(FetchHttpClient.layer))
      )
    )
  )

const exportMetrics = (receiver: OtlpReceiver, encoding: Encoding, program: Effect.Effect<unknown>) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        OtlpMetrics.layer({ url: `${receiver.url}/v1/metrics`, resource: { serviceName: "receiver-test" } }).pipe(
          Layer.provide(serialization[encoding]),
          Layer.provide(FetchHttpClient.layer)
        )
      ),
      // a registry of its own: each export carries only this program's measurements
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  )

const tracedProgram = Effect.gen(function* () {
  yield* Effect.gen(function* () {
    const span = yield* Effect.currentSpan
    const now = yield* Clock.currentTimeNanos
    span.event("gen_ai.first_token", now, { "reins.ms": 12 })
    yield* Effect.annotateCurrentSpan({
      "gen_ai.request.model": "m-1",
      "gen_ai.usage.input_tokens": 120,
      "reins.cached": true,
      "gen_ai.response.finish_reasons": ["stop", "tool_calls"]
    })
  }).pipe(Effect.withSpan("chat m-1", { kind: "client" }))
  yield* Effect.fail("tool broke").pipe(Effect.withSpan("execute_tool bash"), Effect.ignore)
}).pipe(Effect.withSpan("invoke_agent build"))

describe("OTLP receiver", () => {
  let receiver: OtlpReceiver
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
  })
  afterAll(() => receiver.stop())

  for (const encoding of ["protobuf", "json"] as const) {
    test(`decodes spans exported as ${encoding}: tree, kinds, attributes, status, events, resource`, async () => {
      receiver.clear()
      await exportTraces(receiver, encoding, tracedProgram)
      await receiver.waitFor((r) => r.spans.length === 3)
      expect(receiver.errors).toEqual([])
      expect(receiver.requests[0]!.contentType).toBe(encoding === "protobuf" ? "application/x-protobuf" : "application/json")
      const byName = (name: string) => receiver.spans.find((s) => s.name === name)!
      const agent = byName("invoke_agent build")
      const chat = byName("chat m-1")
      const tool = byName("execute_tool bash")
      expect(agent.parentSpanId).toBeUndefined()
      expect(chat.parentSpanId).toBe(agent.spanId)
      expect(tool.parentSpanId).toBe(agent.spanId)
      expect(agent.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(chat.spanId).toMatch(/^[0-9a-f]{16}$/)
      expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1)
      expect(chat.kind).toBe("CLIENT")
      expect(agent.kind).toBe("INTERNAL")
      expect(chat.attributes).toMatchObject({
        "gen_ai.request.model": "m-1",
        "gen_ai.usage.input_tokens": 120,
        "reins.cached": true,
        "gen_ai.response.finish_reasons": ["stop", "tool_calls"]
      })
      expect(chat.events.map((e) => e.name)).toEqual(["gen_ai.first_token"])
      expect(chat.events[0]!.attributes).toEqual({ "reins.ms": 12 })
      // Effect's exporter marks a success OK (reins's serialization turns that into UNSET, see runtime's Telemetry)
      expect(chat.status.code).toBe("OK")
      expect(tool.status.code).toBe("ERROR")
      expect(chat.endTimeUnixNano).toBeGreaterThanOrEqual(chat.startTimeUnixNano)
      expect(chat.startTimeUnixNano).toBeGreaterThanOrEqual(agent.startTimeUnixNano)
      expect(agent.resource).toMatchObject({ "service.name": "receiver-test", "deployment.environment": "test" })
    })

    test(`decodes metric data points exported as ${encoding}: histogram buckets, counter, attributes, unit`, async () => {
      receiver.clear()
      const duration = Metric.histogram("gen_ai.client.operation.duration", {
        description: "GenAI operation duration",
        boundaries: [0.1, 1, 10],
        attributes: { unit: "s" }
      })
      const asks = Metric.counter("reins.permission.asks", { description: "permission asks", incremental: true })
      await exportMetrics(
        receiver,
        encoding,
        Effect.gen(function* () {
          yield* Metric.update(Metric.withAttributes(duration, { "gen_ai.operation.name": "chat" }), 0.05)
          yield* Metric.update(Metric.withAttributes(duration, { "gen_ai.operation.name": "chat" }), 2.5)
          yield* Metric.update(Metric.withAttributes(asks, { "reins.permission.decision": "allow" }), 1)
        })
      )
      await receiver.waitFor((r) => r.dataPoints.some((p) => p.metric === "reins.permission.asks"))
      expect(receiver.errors).toEqual([])
      const hist = receiver.dataPoints.find((p) => p.metric === "gen_ai.client.operation.duration" && p.attributes["gen_ai.operation.name"] === "chat")!
      expect(hist.type).toBe("histogram")
      expect(hist.unit).toBe("s")
      expect(hist.count).toBe(2)
      expect(hist.sum).toBeCloseTo(2.55)
      expect(hist.min).toBeCloseTo(0.05)
      expect(hist.max).toBeCloseTo(2.5)
      expect(hist.explicitBounds).toEqual([0.1, 1, 10])
      expect(hist.bucketCounts).toEqual([1, 0, 1, 0])
      const count = receiver.dataPoints.find((p) => p.metric === "reins.permission.asks" && p.attributes["reins.permission.decision"] === "allow")!
      expect(count.type).toBe("sum")
      expect(count.value).toBe(1)
      expect(count.isMonotonic).toBe(true)
      expect(count.resource["service.name"]).toBe("receiver-test")
    })
  }

  test("a body that is not OTLP is answered 400 and recorded as an error", async () => {
    receiver.clear()
    const res = await fetch(`${receiver.url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: new Uint8Array([0x0a, 0xff, 0xff])
    })
    expect(res.status).toBe(400)
    expect(receiver.errors.length).toBe(1)
    expect((await fetch(`${receiver.url}/v1/logs`, { method: "POST", body: "{}" })).status).toBe(404)
  })
})

describe("OTLP receiver that is down or hangs", () => {
  test("down: the port refuses connections", async () => {
    const down = await startOtlpReceiver({ mode: "down" })
    const outcome = await fetch(`${down.url}/v1/traces`, { method: "POST", body: "{}" }).then(
      () => "answered",
      () => "refused"
    )
    expect(outcome).toBe("refused")
    await down.stop()
  })

  test("hang: the connection is accepted and never answered", async () => {
    const hang = await startOtlpReceiver({ mode: "hang" })
    const controller = new AbortController()
    const outcome = fetch(`${hang.url}/v1/traces`, { method: "POST", body: "{}", signal: controller.signal }).then(
      () => "answered",
      (e: Error) => e.name
    )
    await waitFor(() => hang.connections === 1, "the receiver to accept the connection")
    // wall time: no answer comes for a while after the connection was accepted (it is a wait for nothing)
    await Bun.sleep(300)
    controller.abort()
    expect(await outcome).toBe("AbortError")
    expect(hang.connections).toBe(1)
    await hang.stop()
  })
})
