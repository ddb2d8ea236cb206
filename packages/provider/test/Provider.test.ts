import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Stream } from "effect"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { Provider, type ProviderSettings } from "../src/Provider.ts"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { hi, text, withProvider } from "./support.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const run = async (steps: ReadonlyArray<ScriptedStep>, policy = { attempts: 5, initialDelayMs: 5, maxDelayMs: 20 }) => {
  server = await startScriptedServer(steps)
  const settings: ProviderSettings = {
    providers: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 16_000, output: 1_000 } } } },
    env: {}
  }
  const program = Effect.gen(function* () {
    const provider = yield* Provider
    return yield* provider
      .stream({
        model: { providerID: "local", modelID: "m" },
        system: ["You are a test."],
        messages: hi,
        tools: [{ id: "bash", description: "run", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } }]
      })
      .pipe(Stream.runCollect)
  })
  return Effect.runPromise(Effect.result(program).pipe(withProvider(settings, policy)))
}

const types = (events: ReadonlyArray<ModelEvent>) => events.map((e) => e.type)

describe("Provider over real HTTP", () => {
  test("streams text, tool calls and usage", async () => {
    const r = await run([
      {
        text: "Hello there friend",
        toolCalls: [{ name: "bash", arguments: { command: "ls" } }],
        usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 30 }
      }
    ])
    if (r._tag !== "Success") throw new Error(String(r.failure))
    const events = r.success
    expect(
      events
        .filter((e) => e.type === "text-delta")
        .map((e) => (e as { text: string }).text)
        .join("")
    ).toBe("Hello there friend")
    const call = events.find((e) => e.type === "tool-call")
    expect(call).toMatchObject({ name: "bash", input: { command: "ls" } })
    const finish = events.find((e) => e.type === "finish-step")
    expect(finish).toMatchObject({ finishReason: "tool-calls", usage: { input: 70, cacheRead: 30, output: 20 } })
    expect(server!.requests[0]!.body.messages[0]).toMatchObject({ role: "system" })
  })
  test("calls at once and one after another each get their own answer (a model made for one call serves the next)", async () => {
    server = await startScriptedServer([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }])
    const settings: ProviderSettings = {
      providers: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 16_000, output: 1_000 } } } },
      env: {}
    }
    const texts = await Effect.runPromise(
      Effect.gen(function* () {
        const provider = yield* Provider
        const call = provider
          .stream({ model: { providerID: "local", modelID: "m" }, system: ["You are a test."], messages: hi, tools: [] })
          .pipe(Stream.runCollect, Effect.map(text))
        const together = yield* Effect.all([call, call], { concurrency: 2 })
        const after = [yield* call, yield* call]
        return { together, after }
      }).pipe(withProvider(settings))
    )
    expect([...texts.together].sort()).toEqual(["one", "two"])
    expect(texts.after).toEqual(["three", "four"])
    expect(server.requests.length).toBe(4)
  })
  test("a 500 then success is retried, honouring retry-after-ms", async () => {
    const r = await run([{ error: { status: 500, message: "boom", headers: { "retry-after-ms": "15" } } }, { text: "ok now" }])
    if (r._tag !== "Success") throw new Error(String(r.failure))
    const retry = r.success.find((e) => e.type === "retry")
    expect(retry).toMatchObject({ attempt: 1, delayMs: 15 })
    expect(types(r.success)).toContain("finish-step")
    expect(server!.requests.length).toBe(2)
  })
  test("a 400 saying the context is too long is overflow and not retried", async () => {
    const r = await run([
      { error: { status: 400, message: "This model's maximum context length is 16000 tokens", code: "context_length_exceeded" } },
      { text: "never" }
    ])
    expect(r._tag).toBe("Failure")
    if (r._tag === "Failure") expect(r.failure.reason).toBe("overflow")
    expect(server!.requests.length).toBe(1)
  })
  test("gives up after the configured number of attempts", async () => {
    const r = await run(
      Array.from({ length: 5 }, () => ({ error: { status: 503, message: "busy" } })),
      { attempts: 3, initialDelayMs: 1, maxDelayMs: 2 }
    )
    expect(r._tag).toBe("Failure")
    if (r._tag === "Failure") expect(r.failure.reason).toBe("transient")
    expect(server!.requests.length).toBe(3)
  })
  test("401 is an auth error with a hint", async () => {
    const r = await run([{ error: { status: 401, message: "bad key" } }])
    if (r._tag !== "Failure") throw new Error("expected failure")
    expect(r.failure.reason).toBe("auth")
    expect(r.failure.message).toContain("API key")
    expect(server!.requests.length).toBe(1)
  })
})

describe("Provider.prepare", () => {
  test("loads the model's SDK ahead of the call without sending anything; an unknown provider is left for the call to report", async () => {
    server = await startScriptedServer([{ text: "ready" }])
    const settings: ProviderSettings = {
      providers: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 16_000, output: 1_000 } } } },
      env: {}
    }
    const program = Effect.gen(function* () {
      const provider = yield* Provider
      yield* provider.prepare({ providerID: "local", modelID: "m" })
      // prepare never fails: the call itself says what is wrong
      yield* provider.prepare({ providerID: "nowhere", modelID: "x" })
      const sentBefore = server!.requests.length
      const events = yield* provider
        .stream({ model: { providerID: "local", modelID: "m" }, system: ["You are a test."], messages: hi, tools: [] })
        .pipe(Stream.runCollect)
      const unknown = yield* Effect.result(
        provider.stream({ model: { providerID: "nowhere", modelID: "x" }, system: [], messages: hi, tools: [] }).pipe(Stream.runCollect)
      )
      return { sentBefore, events, unknown }
    })
    const r = await Effect.runPromise(program.pipe(withProvider(settings)))
    expect(r.sentBefore).toBe(0)
    expect(text(r.events)).toBe("ready")
    expect(r.unknown._tag).toBe("Failure")
    if (r.unknown._tag === "Failure") expect(r.unknown.failure.message).toContain('Unknown provider "nowhere"')
  })
})
