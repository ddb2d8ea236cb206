import { beforeAll, describe, expect, test } from "bun:test"
import { startOtlpReceiver, type OtlpReceiverMode } from "@reins/testkit"
import { ensureBuilt, project, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const twoSteps = [{ toolCalls: [{ name: "bash", arguments: { command: "echo collected" } }] }, { text: "all done" }]

// A run spends at most EXPORT_SHUTDOWN_TIMEOUT (2 s) on a collector that is down or hangs; the exact
// cost is measured by bench/tracing.ts. Here: the run ends, with its normal status and answer.
describe("reins run with a collector that does not answer", () => {
  for (const mode of ["down", "hang"] as const satisfies ReadonlyArray<OtlpReceiverMode>) {
    test(`${mode}: the run exits with its normal status and output`, async () => {
      const collector = await startOtlpReceiver({ mode })
      const p = await project(twoSteps)
      const r = await reins(["run", "--yolo", "go"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } })
      await p.server.stop()
      await collector.stop()
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("all done")
      expect(p.server.requests).toHaveLength(2)
      if (mode === "hang") expect(collector.connections).toBeGreaterThan(0)
    })
  }

  test("a failing turn keeps its own status with a hanging collector", async () => {
    const collector = await startOtlpReceiver({ mode: "hang" })
    const p = await project([{ error: { status: 401, message: "invalid api key" } }])
    const r = await reins(["run", "go"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } })
    await p.server.stop()
    await collector.stop()
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("invalid api key")
  })
})

describe("OTEL_* values reins cannot use", () => {
  test("grpc and a malformed resource attribute: one warning each on stderr, the export goes over http/protobuf, the run succeeds", async () => {
    const collector = await startOtlpReceiver()
    const p = await project(twoSteps)
    const r = await reins(["run", "--yolo", "go"], {
      ...p,
      env: {
        ...p.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_RESOURCE_ATTRIBUTES: "team=%zz,deployment.environment=ci"
      }
    })
    await p.server.stop()
    await collector.stop()
    expect(r.code).toBe(0)
    expect(r.stderr.split("\n").filter((l) => l.includes("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"))).toHaveLength(1)
    expect(collector.requests.length).toBeGreaterThan(0)
    expect(collector.requests.every((q) => q.contentType === "application/x-protobuf")).toBe(true)
    expect(collector.spans.length).toBeGreaterThan(0)
    expect(r.stderr.split("\n").filter((l) => l.includes("OTEL_RESOURCE_ATTRIBUTES"))).toHaveLength(1)
    expect(collector.spans.every((s) => s.resource["deployment.environment"] === "ci" && s.resource.team === undefined)).toBe(true)
  })

  test("an endpoint that is not a URL and OTEL_SDK_DISABLED=maybe: a warning each, nothing exported, the run succeeds", async () => {
    const p = await project([{ text: "fine" }])
    const r = await reins(["run", "go"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318", OTEL_SDK_DISABLED: "maybe" } })
    await p.server.stop()
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("fine")
    expect(r.stderr.split("\n").filter((l) => l.includes("OTEL_EXPORTER_OTLP_ENDPOINT"))).toHaveLength(1)
    expect(r.stderr.split("\n").filter((l) => l.includes("OTEL_SDK_DISABLED"))).toHaveLength(1)
  })

  test("headers reach the collector; OTEL_SERVICE_NAME names the resource", async () => {
    const collector = await startOtlpReceiver()
    const p = await project(twoSteps)
    const r = await reins(["run", "--yolo", "go"], {
      ...p,
      env: {
        ...p.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t0k",
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-signal=metrics",
        OTEL_SERVICE_NAME: "ci-agent",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json"
      }
    })
    await p.server.stop()
    await collector.stop()
    expect(r.code).toBe(0)
    const traces = collector.requests.filter((q) => q.path === "/v1/traces")
    const metrics = collector.requests.filter((q) => q.path === "/v1/metrics")
    expect(traces.length).toBeGreaterThan(0)
    expect(metrics.length).toBeGreaterThan(0)
    expect(traces.every((q) => q.headers.authorization === "Bearer t0k" && q.contentType === "application/json" && q.headers["x-signal"] === undefined)).toBe(
      true
    )
    expect(
      metrics.every((q) => q.headers.authorization === "Bearer t0k" && q.contentType === "application/x-protobuf" && q.headers["x-signal"] === "metrics")
    ).toBe(true)
    expect(collector.spans.every((s) => s.resource["service.name"] === "ci-agent")).toBe(true)
    expect(collector.dataPoints.some((d) => d.metric === "reins.tool.duration" && d.attributes["gen_ai.tool.name"] === "bash")).toBe(true)
  })
})
