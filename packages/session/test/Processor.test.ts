import { describe, expect, test } from "bun:test"
import { Effect, Layer, Stream } from "effect"
import { Bus, DataDir, Ids, WorkDir, emptyUsage, type AssistantMessage, type Event } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { Provider, ProviderError, type ModelEvent } from "@reins/provider"
import { SessionStore, type MessageWithParts } from "@reins/storage"
import { ToolRegistry, builtins } from "@reins/tool"
import { Truncate } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeProcessor } from "../src/Processor.ts"
import { turnDone } from "../src/SessionService.ts"

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-proc-")))

/** A fake provider that replays fixed event lists, one per call. */
const scripted = (steps: ReadonlyArray<ReadonlyArray<ModelEvent> | ProviderError>) => {
  let i = 0
  return Layer.succeed(Provider, Provider.of({
    stream: () => {
      const step = steps[i++]
      if (!step) return Stream.fail(new ProviderError({ reason: "invalid", message: "no more steps" }))
      return step instanceof ProviderError ? Stream.fail(step) : Stream.fromIterable(step)
    },
    info: () => ({ context: 10_000, output: 1_000 })
  }))
}

const layerFor = (provider: Layer.Layer<Provider>) => {
  const cwd = tmp()
  const base = Layer.mergeAll(Bus.layer, Ids.layer, SessionStore.layerMemory, provider)
  const guarded = Layer.mergeAll(Permission.layer, Truncate.layer).pipe(Layer.provideMerge(base))
  return {
    cwd,
    layer: ToolRegistry.layer(builtins).pipe(
      Layer.provideMerge(guarded),
      Layer.provide(Layer.mergeAll(
        Layer.succeed(DataDir, tmp()),
        Layer.succeed(WorkDir, cwd),
        Layer.succeed(PermissionSettings, { rules: defaultRules, nonInteractive: "allow" })
      ))
    )
  }
}

const finish = (reason: string): ModelEvent => ({ type: "finish-step", finishReason: reason, usage: { ...emptyUsage, input: 10, output: 5 }, cost: 0.01 })

const runStep = (events: ReadonlyArray<ModelEvent> | ProviderError) => {
  const { cwd, layer } = layerFor(scripted([events]))
  return Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const seen: Array<Event> = []
      yield* bus.listen((e) => Effect.sync(() => void seen.push(e)))
      yield* store.createSession({ id: "ses_1", title: "t", directory: cwd, time: { created: 0, updated: 0 } })
      yield* store.putMessage({ id: "msg_0", sessionID: "ses_1", role: "user", time: { created: 0 } })
      const assistant: AssistantMessage = { id: "msg_1", sessionID: "ses_1", role: "assistant", parentID: "msg_0", model: { providerID: "p", modelID: "m" }, time: { created: 1 }, usage: emptyUsage, cost: 0 }
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
    expect(seen.filter((e) => e.type === "part.updated" && e.delta).map((e) => e.type === "part.updated" && e.delta)).toEqual(["think", "Hel", "lo"])
  })

  test("an unknown tool becomes an error result naming the available tools", async () => {
    const { messages } = await runStep([{ type: "tool-call", callID: "c1", name: "nope", input: {} }, finish("tool-calls")])
    const tool = messages[1]!.parts.find((p) => p.type === "tool")
    expect(tool?.type === "tool" && tool.state.status === "error" && tool.state.error).toContain("Available tools: bash")
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
  ({ info: { id, sessionID: "s", role, time: { created: 0 }, ...(role === "assistant" ? { parentID: "u", model: { providerID: "p", modelID: "m" }, usage: emptyUsage, cost: 0 } : {}), ...extra }, parts }) as unknown as MessageWithParts

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
