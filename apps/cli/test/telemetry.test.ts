import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { ensureBuilt, project, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

interface Span {
  name: string
  spanId: string
  parentSpanId?: string
  attributes: Array<{ key: string; value: Record<string, unknown> }>
}

// A minimal OTLP/HTTP (JSON) collector on 127.0.0.1.
const received: Array<Span> = []
const collector = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }> }
    for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans)
    return Response.json({})
  }
})
afterAll(() => collector.stop(true))

const attr = (span: Span, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value
  return v ? Object.values(v)[0] : undefined
}

describe("OpenTelemetry export", () => {
  test("turn → step (gen_ai attributes) → tool spans reach the OTLP endpoint", async () => {
    const p = await project([
      { toolCalls: [{ name: "bash", arguments: { command: "echo traced" } }], usage: { prompt_tokens: 120, completion_tokens: 7 } },
      { text: "done", usage: { prompt_tokens: 150, completion_tokens: 3 } }
    ])
    const r = await reins(["run", "--yolo", "trace me"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` } })
    await p.server.stop()
    expect(r.code).toBe(0)
    const turn = received.find((s) => s.name === "session.turn")
    const steps = received.filter((s) => s.name === "session.step")
    const tool = received.find((s) => s.name === "Tool.execute")
    expect(turn).toBeDefined()
    expect(steps.length).toBe(2)
    expect(tool).toBeDefined()
    expect(steps.every((s) => s.parentSpanId === turn!.spanId)).toBe(true)
    expect(tool!.parentSpanId).toBeDefined()
    expect(attr(steps[0]!, "gen_ai.request.model")).toBe("scripted")
    expect(Number(attr(steps[0]!, "gen_ai.usage.input_tokens"))).toBe(120)
    expect(Number(attr(steps[0]!, "gen_ai.usage.output_tokens"))).toBe(7)
    expect(JSON.stringify(steps[1]!.attributes)).toContain("stop")
    expect(attr(tool!, "tool.name")).toBe("bash")
    // the tool span sits under the first step
    const chain = (s: Span | undefined): Array<string> => (s ? [s.name, ...chain(received.find((x) => x.spanId === s.parentSpanId))] : [])
    expect(chain(tool)).toContain("session.step")
  })

  test("a reduced tool output carries its evidence on the Tool.execute span", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 20000" } }] }, { text: "done" }])
    const r = await reins(["run", "--yolo", "count"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` } })
    await p.server.stop()
    expect(r.code).toBe(0)
    const tool = received.find((s) => s.name === "Tool.execute" && attr(s, "tool.reducer") !== undefined)
    expect(tool).toBeDefined()
    expect(attr(tool!, "tool.reducer")).toBe("head_tail")
    expect(Number(attr(tool!, "tool.reduce.original_bytes"))).toBe(108_894)
    expect(Number(attr(tool!, "tool.reduce.compacted_bytes"))).toBeLessThan(108_894)
    expect(attr(tool!, "tool.reduce.reasons")).toBe("middle_dropped")
  })

  test("without OTEL_EXPORTER_OTLP_ENDPOINT nothing is exported", async () => {
    const before = received.length
    const p = await project([{ text: "quiet" }])
    const r = await reins(["run", "hi"], p)
    await p.server.stop()
    expect(r.code).toBe(0)
    expect(received.length).toBe(before)
  })
})
