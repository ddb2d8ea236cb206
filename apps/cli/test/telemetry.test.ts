// `reins run` exporting its trace to a real OTLP/HTTP receiver (the testkit's, decoding what
// arrives with the official OTLP definitions): the GenAI conventions' spans in one trace.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test"
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "@reins/testkit"
import { ensureBuilt, project, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

let receiver: OtlpReceiver
beforeAll(async () => {
  receiver = await startOtlpReceiver()
})
afterAll(() => receiver.stop())
beforeEach(() => receiver.clear())

const GENAI = /^(invoke_agent|chat|execute_tool) /
const CONTENT = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]

/** One `reins run` exporting to the receiver; its spans once the root has arrived. */
const traced = async (steps: Parameters<typeof project>[0], env: Record<string, string> = {}) => {
  const p = await project(steps)
  const r = await reins(["run", "--yolo", "trace me"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env } })
  await p.server.stop()
  expect(r.code).toBe(0)
  await receiver.waitFor((x) => x.spans.some((s) => s.name === "reins run"))
  return receiver.spans
}

const parentOf = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan) => spans.find((s) => s.spanId === span.parentSpanId)

describe("OpenTelemetry export of reins run", () => {
  test("one trace: reins run → invoke_agent build → chat ×2 (CLIENT) and execute_tool bash, internal spans left out, content absent", async () => {
    const spans = await traced([
      { toolCalls: [{ name: "bash", arguments: { command: "echo traced" } }], usage: { prompt_tokens: 120, completion_tokens: 7 } },
      { text: "done", usage: { prompt_tokens: 150, completion_tokens: 3 } }
    ])
    const root = spans.find((s) => s.name === "reins run")!
    const agent = spans.find((s) => s.name === "invoke_agent build")!
    const chats = spans.filter((s) => s.name === "chat scripted")
    const tools = spans.filter((s) => s.name === "execute_tool bash")
    expect(root.parentSpanId).toBeUndefined()
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]))
    expect(parentOf(spans, agent)?.name).toBe("reins run")
    expect(chats).toHaveLength(2)
    expect(tools).toHaveLength(1)
    for (const s of [...chats, ...tools]) expect(parentOf(spans, s)?.name).toBe("invoke_agent build")
    // storage, services and the step stay out at the default level
    expect(spans.map((s) => s.name).filter((n) => n !== "reins run" && !GENAI.test(n))).toEqual([])
    expect(agent.kind).toBe("INTERNAL")
    expect(tools[0]!.kind).toBe("INTERNAL")
    for (const c of chats) expect(c.kind).toBe("CLIENT")
    // a success leaves the status unset, as the conventions ask
    for (const s of [agent, ...chats, ...tools]) expect(s.status.code).toBe("UNSET")

    expect(agent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "build",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "scripted",
      "reins.provider.id": "local",
      "gen_ai.usage.input_tokens": 270,
      "gen_ai.usage.output_tokens": 10
    })
    expect(String(agent.attributes["gen_ai.conversation.id"])).toMatch(/^ses_/)
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "scripted",
      "gen_ai.request.max_tokens": 4000,
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.finish_reasons": ["tool_call"],
      "server.address": "127.0.0.1"
    })
    expect(typeof chats[0]!.attributes["gen_ai.response.id"]).toBe("string")
    expect(typeof chats[0]!.attributes["gen_ai.response.time_to_first_chunk"]).toBe("number")
    expect(chats[1]!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"])
    expect(tools[0]!.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.type": "function" })
    expect(typeof tools[0]!.attributes["gen_ai.tool.call.id"]).toBe("string")
    // no gen_ai attribute off the GenAI spans; no content unless asked for
    expect(Object.keys(root.attributes).filter((k) => k.startsWith("gen_ai."))).toEqual([])
    for (const s of spans) for (const key of CONTENT) expect(s.attributes[key]).toBeUndefined()
  })

  test("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true puts prompts, answers and tool arguments and results on the spans", async () => {
    const spans = await traced([{ toolCalls: [{ name: "bash", arguments: { command: "echo captured" } }] }, { text: "done" }], {
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true"
    })
    const [first, second] = spans.filter((s) => s.name === "chat scripted")
    const tool = spans.find((s) => s.name === "execute_tool bash")!
    expect(JSON.parse(String(first!.attributes["gen_ai.input.messages"])).at(-1)).toEqual({ role: "user", parts: [{ type: "text", content: "trace me" }] })
    expect(JSON.parse(String(second!.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "done" }], finish_reason: "stop" }
    ])
    expect(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]))).toEqual({ command: "echo captured" })
    expect(String(tool.attributes["gen_ai.tool.call.result"])).toContain("captured")
  })

  test("a failed model call: the chat span has error.type and status ERROR", async () => {
    const p = await project([{ error: { status: 400, message: "bad request: nope" } }])
    const r = await reins(["run", "--yolo", "fail"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } })
    await p.server.stop()
    expect(r.code).not.toBe(0)
    await receiver.waitFor((x) => x.spans.some((s) => s.name === "reins run"))
    const chat = receiver.spans.find((s) => s.name === "chat scripted")!
    expect(chat.attributes["error.type"]).toBe("400")
    expect(chat.status.code).toBe("ERROR")
  })

  test("a reduced tool output carries its evidence on the execute_tool span", async () => {
    const spans = await traced([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 20000" } }] }, { text: "done" }])
    const tool = spans.find((s) => s.name === "execute_tool bash")!
    expect(tool.attributes["reins.tool.reducer"]).toBe("head_tail")
    expect(Number(tool.attributes["reins.tool.reduce.original_bytes"])).toBe(108_894)
    expect(Number(tool.attributes["reins.tool.reduce.compacted_bytes"])).toBeLessThan(108_894)
    expect(tool.attributes["reins.tool.reduce.reasons"]).toBe("middle_dropped")
  })

  test("REINS_TRACE_LEVEL=debug exports the internal spans too, in the run's trace", async () => {
    const spans = await traced([{ text: "quiet" }], { REINS_TRACE_LEVEL: "debug" })
    expect(spans.some((s) => s.name.startsWith("SessionStore."))).toBe(true)
    expect(spans.some((s) => s.name === "session.step")).toBe(true)
    // the run's work is one trace; only what the runtime reads while it is built (before the run's root) is apart,
    // and the event log's batches when the appender's own fiber writes them (for every publisher at once)
    const root = spans.find((s) => s.name === "reins run")!
    const apart = spans.filter((s) => s.traceId !== root.traceId && s.name !== "EventLog.append")
    expect([...new Set(apart.map((s) => s.name))].sort()).toEqual(["Agents.load", "Compaction.loadSettings", "Prompt.loadInstructions", "Prompt.loadSettings"])
  })

  test("without OTEL_EXPORTER_OTLP_ENDPOINT nothing is exported", async () => {
    const p = await project([{ text: "quiet" }])
    const r = await reins(["run", "hi"], p)
    await p.server.stop()
    expect(r.code).toBe(0)
    expect(receiver.spans).toHaveLength(0)
    expect(receiver.requests).toHaveLength(0)
  })
})
