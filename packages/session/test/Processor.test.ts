import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { Bus, emptyUsage, type AssistantMessage, type Event } from "@reins/domain"
import { ProviderError, type ModelEvent } from "@reins/provider"
import { SessionStore, type MessageWithParts } from "@reins/storage"
import { bash, edit, write, type ToolInfo } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeProcessor } from "../src/Processor.ts"
import { turnDone } from "../src/TurnDecision.ts"
import { scripted, toolsLayer, type ToolsOptions } from "./support.ts"

const finish = (reason: string): ModelEvent => ({ type: "finish-step", finishReason: reason, usage: { ...emptyUsage, input: 10, output: 5 }, cost: 0.01 })

const runStep = (events: ReadonlyArray<ModelEvent> | ProviderError, options: { modelID?: string; tools?: ToolsOptions<never>["tools"] } = {}) => {
  const { cwd, layer } = toolsLayer(scripted([events]), options.tools ? { tools: options.tools } : {})
  return Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const seen: Array<Event> = []
      yield* bus.listen((e) => Effect.sync(() => void seen.push(e)))
      yield* store.createSession({ id: "ses_1", title: "t", directory: cwd, time: { created: 0, updated: 0 } })
      yield* store.putMessage({ id: "msg_0", sessionID: "ses_1", role: "user", time: { created: 0 } })
      const assistant: AssistantMessage = {
        id: "msg_1",
        sessionID: "ses_1",
        role: "assistant",
        parentID: "msg_0",
        model: { providerID: "p", modelID: options.modelID ?? "m" },
        time: { created: 1 },
        usage: emptyUsage,
        cost: 0
      }
      yield* store.putMessage(assistant)
      const processor = yield* makeProcessor
      const outcome = yield* Effect.result(processor.step({ assistant, cwd, request: { model: assistant.model, system: [], messages: [], tools: [] } }))
      const messages = yield* store.messages("ses_1")
      return { outcome, messages, seen, cwd }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

describe("stream processor", () => {
  test("demultiplexes text, reasoning and tool events into stored parts", async () => {
    const { outcome, messages, seen } = await runStep([
      { type: "start-step" },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", text: "think" },
      { type: "reasoning-end", id: "r" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", text: "Hel" },
      { type: "text-delta", id: "t", text: "lo" },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", callID: "c1", name: "bash" },
      { type: "tool-input-delta", callID: "c1", delta: '{"command":"echo hi"}' },
      { type: "tool-call", callID: "c1", name: "bash", input: { command: "echo hi" } },
      finish("tool-calls")
    ])
    expect(outcome._tag).toBe("Success")
    if (outcome._tag === "Success") expect(outcome.success).toMatchObject({ finish: "tool-calls", toolCalls: 1, cost: 0.01 })
    const parts = messages[1]!.parts
    expect(parts.map((p) => p.type)).toEqual(["step-start", "reasoning", "text", "tool", "step-finish"])
    expect(parts[2]).toMatchObject({ text: "Hello" })
    expect(parts[3]).toMatchObject({ callID: "c1", state: { status: "completed" } })
    const assistant = messages[1]!.info
    expect(assistant.role === "assistant" && assistant.usage.input).toBe(10)
    expect(seen.flatMap((e) => (e.type === "part.delta" ? [`${e.partType}:${e.delta}`] : []))).toEqual(["reasoning:think", "text:Hel", "text:lo"])
    // the whole part once it ends, never the text so far with each delta
    expect(seen.flatMap((e) => (e.type === "part.updated" && e.part.type === "text" ? [e.part.text] : []))).toEqual(["", "Hello"])
  })

  test("the provider's metadata is stored with the reasoning part (a signature after the text) and the tool part (T22)", async () => {
    const { messages, seen } = await runStep([
      { type: "start-step" },
      { type: "reasoning-start", id: "r", metadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: null } } },
      { type: "reasoning-delta", id: "r", text: "think", metadata: { openai: { itemId: "rs_1" } } },
      { type: "reasoning-delta", id: "r", text: "", metadata: { anthropic: { signature: "sig" } } },
      { type: "reasoning-end", id: "r", metadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc" } } },
      { type: "tool-call", callID: "c1", name: "bash", input: { command: "echo hi" }, metadata: { google: { thoughtSignature: "sig-call" } } },
      finish("tool-calls")
    ])
    const parts = messages[1]!.parts
    expect(parts.find((p) => p.type === "reasoning")).toMatchObject({
      text: "think",
      providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc" }, anthropic: { signature: "sig" } }
    })
    expect(parts.find((p) => p.type === "tool")).toMatchObject({
      state: { status: "completed" },
      providerMetadata: { google: { thoughtSignature: "sig-call" } }
    })
    // a delta of metadata alone is not shown as text
    expect(seen.flatMap((e) => (e.type === "part.delta" ? [e.delta] : []))).toEqual(["think"])
  })

  test("an unknown tool becomes an error result naming the available tools", async () => {
    const { messages } = await runStep([{ type: "tool-call", callID: "c1", name: "nope", input: {} }, finish("tool-calls")])
    const tool = messages[1]!.parts.find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state.status === "error" && tool.state.error).toContain("Available tools: bash")
  })

  test("a tool that exists but was not offered to this model is answered as unknown (tool choice)", async () => {
    // A stand-in apply_patch: GPT models are offered it instead of edit and write.
    const applyPatch = Effect.succeed<ToolInfo>({
      id: "apply_patch",
      description: "patch",
      parameters: {},
      execute: () => Effect.succeed({ title: "", output: "patched", truncated: false })
    })
    const tools = [bash, write, edit, applyPatch]
    const gpt = await runStep(
      [
        { type: "tool-call", callID: "c1", name: "edit", input: { filePath: "a.txt", oldString: "a", newString: "b" } },
        { type: "tool-call", callID: "c2", name: "write", input: { filePath: "a.txt", content: "x" }, invalid: "provider says unknown" },
        { type: "tool-call", callID: "c3", name: "apply_patch", input: {} },
        finish("tool-calls")
      ],
      { modelID: "gpt-test", tools }
    )
    const states = gpt.messages[1]!.parts.flatMap((p) => (p.type === "tool" ? [p.state] : []))
    expect(states.map((s) => (s.status === "error" ? s.error : s.status))).toEqual([
      'There is no tool named "edit". Available tools: bash, apply_patch.',
      'There is no tool named "write". Available tools: bash, apply_patch.',
      "completed"
    ])
    expect(fs.existsSync(path.join(gpt.cwd, "a.txt"))).toBe(false)
    const other = await runStep([{ type: "tool-call", callID: "c1", name: "apply_patch", input: {} }, finish("tool-calls")], {
      modelID: "claude-sonnet-4",
      tools
    })
    const tool = other.messages[1]!.parts.find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state.status === "error" && tool.state.error).toBe(
      'There is no tool named "apply_patch". Available tools: bash, write, edit.'
    )
  })

  test("a stream that ends early closes every open part", async () => {
    const { outcome, messages } = await runStep([
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", text: "partial" },
      { type: "tool-input-start", callID: "c1", name: "bash" }
    ])
    // the stream ended without finish: still success, but the pending call is closed
    expect(outcome._tag).toBe("Success")
    const tool = messages[1]!.parts.find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state).toMatchObject({ status: "error", interrupted: true })
    const text = messages[1]!.parts.find((p) => p.type === "text")
    expect(text).toMatchObject({ text: "partial" })
    expect(text?.type === "text" && text.time?.end).toBeDefined()
  })

  test("a provider failure is stored on the assistant message", async () => {
    const { outcome, messages } = await runStep(new ProviderError({ reason: "auth", message: "bad key" }))
    expect(outcome._tag).toBe("Failure")
    const info = messages[1]!.info
    expect(info.role === "assistant" && info.error).toEqual({ reason: "auth", message: "bad key" })
  })
})

const msg = (role: "user" | "assistant", id: string, extra: Record<string, unknown> = {}, parts: Array<Record<string, unknown>> = []) =>
  ({
    info: {
      id,
      sessionID: "s",
      role,
      time: { created: 0 },
      ...(role === "assistant" ? { parentID: "u", model: { providerID: "p", modelID: "m" }, usage: emptyUsage, cost: 0 } : {}),
      ...extra
    },
    parts
  }) as unknown as MessageWithParts

describe("turnDone (T1)", () => {
  test("ends only on a newer assistant message that finished without tool calls", () => {
    expect(turnDone([msg("user", "m1")])).toBe(false)
    expect(turnDone([msg("user", "m1"), msg("assistant", "m2", { finish: "stop" })])).toBe(true)
    expect(turnDone([msg("user", "m1"), msg("assistant", "m2", { finish: "tool-calls" })])).toBe(false)
    expect(turnDone([msg("user", "m1"), msg("assistant", "m2", { finish: "stop" }, [{ type: "tool" }])])).toBe(false)
    expect(turnDone([msg("assistant", "m0", { finish: "stop" }), msg("user", "m1")])).toBe(false)
    expect(turnDone([msg("user", "m1"), msg("assistant", "m2", { error: { reason: "auth", message: "x" } })])).toBe(true)
  })
})
