import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Fiber, Stream } from "effect"
import type { ProviderTimeoutConfig } from "@reins/domain"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { Provider, ProviderSettings, type ProviderRequest } from "../src/Provider.ts"
import type { ProviderError } from "../src/ProviderError.ts"
import { RetryPolicy } from "../src/Retry.ts"
import { DEFAULT_TIMEOUTS, resolveTimeouts } from "../src/Timeouts.ts"
import type { ModelEvent } from "../src/ModelEvent.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const request: ProviderRequest = {
  model: { providerID: "local", modelID: "m" },
  system: ["You are a test."],
  messages: [
    {
      info: { id: "msg_1", sessionID: "s", role: "user", time: { created: 0 } },
      parts: [{ id: "p", sessionID: "s", messageID: "msg_1", type: "text", text: "hi" }]
    }
  ],
  tools: []
}

/** Tiny limits, so a silent provider is noticed at once. */
const FAST: ProviderTimeoutConfig = { connect: 0.2, first_byte: 0.2, idle: 0.2 }

interface Options {
  readonly timeout?: ProviderTimeoutConfig
  readonly global?: ProviderTimeoutConfig
  readonly attempts?: number
}

/** Streams one request against the scripted server: the events that came out, and how it ended. */
const run = async (steps: ReadonlyArray<ScriptedStep>, options: Options = {}) => {
  server = await startScriptedServer(steps)
  const settings: ProviderSettings = {
    providers: {
      local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 16_000, output: 1_000 } }, timeout: options.timeout ?? FAST }
    },
    env: {},
    ...(options.global ? { timeout: options.global } : {})
  }
  const events: Array<ModelEvent> = []
  const program = Effect.gen(function* () {
    const provider = yield* Provider
    yield* provider.stream(request).pipe(Stream.runForEach((event) => Effect.sync(() => void events.push(event))))
  })
  const result = await Effect.runPromise(
    Effect.result(program).pipe(
      Effect.provide(Provider.layer),
      Effect.provideService(ProviderSettings, settings),
      Effect.provideService(RetryPolicy, { attempts: options.attempts ?? 3, initialDelayMs: 5, maxDelayMs: 20 })
    )
  )
  return { events, error: result._tag === "Failure" ? result.failure : undefined }
}

const text = (events: ReadonlyArray<ModelEvent>) => events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("")
const retries = (events: ReadonlyArray<ModelEvent>) => events.flatMap((e) => (e.type === "retry" ? [e.message] : []))
const failure = (error: ProviderError | undefined): ProviderError => {
  if (!error) throw new Error("expected the stream to fail")
  return error
}

describe("a provider that stays silent is cut off and retried while nothing was emitted", () => {
  test.each([
    [
      "no response headers",
      { stall: "headers" } as ScriptedStep,
      "sent no response for 0.2 s (connect timeout; set provider.local.timeout.connect in reins.json to wait longer)"
    ],
    [
      "headers, then not one byte",
      { stall: "body" } as ScriptedStep,
      "answered but sent nothing for 0.2 s (first-byte timeout; set provider.local.timeout.first_byte in reins.json to wait longer)"
    ],
    [
      "a comment, then nothing",
      { hang: true } as ScriptedStep,
      "sent nothing for 0.2 s mid-stream (idle timeout; set provider.local.timeout.idle in reins.json to wait longer)"
    ]
  ])("%s: the attempt times out and the retry answers", async (_, silent, message) => {
    const { events, error } = await run([silent, { text: "recovered after the retry" }])
    expect(error).toBeUndefined()
    expect(retries(events)).toEqual([`the provider at ${server!.url} ${message}`])
    expect(text(events)).toBe("recovered after the retry")
    // Nothing of the silent attempt reached the caller: one step, started once.
    expect(events.filter((e) => e.type === "start-step")).toHaveLength(1)
    expect(server!.requests).toHaveLength(2)
    expect(server!.requests[0]!.abortedAt).toBeNumber()
  })

  test("when every attempt stays silent the error names the timeout, the key to raise and the attempts", async () => {
    const { events, error } = await run([{ stall: "headers" }, { stall: "headers" }], { attempts: 2 })
    const e = failure(error)
    expect(e.reason).toBe("transient")
    expect(e.message).toBe(
      `gave up after 2 attempts: the provider at ${server!.url} sent no response for 0.2 s (connect timeout; set provider.local.timeout.connect in reins.json to wait longer)`
    )
    expect(retries(events)).toHaveLength(1)
    expect(server!.requests).toHaveLength(2)
  })

  test("a stall after part of the answer fails with the idle timeout and is not replayed", async () => {
    // Only idle is short: the watchdog, waiting out the long connect limit, still sees the stall.
    const { events, error } = await run([{ text: "one two three four five six seven", stallAfterChunks: 2 }, { text: "never" }], { timeout: { idle: 0.2 } })
    const e = failure(error)
    expect(e.message).toContain("(idle timeout; set provider.local.timeout.idle")
    expect(text(events)).not.toBe("")
    expect(retries(events)).toEqual([])
    expect(server!.requests).toHaveLength(1)
  })

  test("slow chunks within the limits are not cut", async () => {
    const { events, error } = await run([{ text: "one two three four five six", delayMs: 60, chunkDelayMs: 60 }], {
      timeout: { connect: 1, first_byte: 1, idle: 1 }
    })
    expect(error).toBeUndefined()
    expect(text(events)).toBe("one two three four five six")
    expect(retries(events)).toEqual([])
  })

  test("0 turns a limit off, and a provider's own timeout wins over provider_timeout field by field", async () => {
    // Bun sends the headers with the first chunk, so a delay before it is a wait for headers.
    const { events, error } = await run([{ text: "slow to start", delayMs: 400 }], { global: { connect: 0.1, idle: 0.1 }, timeout: { connect: 0 } })
    expect(error).toBeUndefined()
    expect(retries(events)).toEqual([])
    expect(text(events)).toBe("slow to start")
    const cut = await run([{ text: "slow to start", delayMs: 400 }, { text: "second" }], { global: { connect: 0.1 }, timeout: { idle: 5 } })
    expect(cut.error).toBeUndefined()
    expect(retries(cut.events)[0]).toContain("sent no response for 0.1 s (connect timeout")
  })

  test("interrupting a call that waits on a silent provider ends it and closes the connection", async () => {
    for (const silent of [{ stall: "headers" }, { stall: "body" }, { text: "a b c d e f", stallAfterChunks: 1 }] as ReadonlyArray<ScriptedStep>) {
      server = await startScriptedServer([silent])
      const settings: ProviderSettings = { providers: { local: { type: "openai-compatible", baseURL: server.url } }, env: {} }
      const fiber = Effect.runFork(
        Effect.gen(function* () {
          const provider = yield* Provider
          return yield* provider.stream(request).pipe(Stream.runDrain)
        }).pipe(Effect.provide(Provider.layer), Effect.provideService(ProviderSettings, settings))
      )
      while (server.requests.length === 0) await Bun.sleep(5)
      await Bun.sleep(50)
      await Effect.runPromise(Fiber.interrupt(fiber))
      for (let i = 0; i < 100 && server.requests[0]!.abortedAt === undefined; i++) await Bun.sleep(10)
      expect(server.requests[0]!.abortedAt).toBeNumber()
      await server.stop()
      server = undefined
    }
  })
})

describe("answers that are not a finished event stream", () => {
  test("a 200 HTML page says so, with the page's title, and is not retried", async () => {
    const page = "<!doctype html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome</h1></body></html>"
    const { error } = await run([{ raw: { body: page } }, { text: "never" }])
    const e = failure(error)
    expect(e.reason).toBe("invalid")
    expect(e.message).toBe(
      `the provider at ${server!.url} answered with text/html, not an event stream — check baseURL (it usually ends in /v1); it said: "Welcome to nginx!"`
    )
    expect(server!.requests).toHaveLength(1)
  })

  test("a 200 JSON body on a streaming request says so too", async () => {
    const { error } = await run([{ raw: { contentType: "application/json", body: '{"status":"ok"}' } }])
    expect(failure(error).message).toContain(
      'answered with application/json, not an event stream — check baseURL (it usually ends in /v1); it said: "{"status":"ok"}"'
    )
  })

  test("a stream closed before its finish reason is retried while nothing was emitted", async () => {
    const { events, error } = await run([{ text: "lost", closeAfterChunks: 0 }, { text: "the whole answer" }])
    expect(error).toBeUndefined()
    expect(retries(events)).toEqual(["the provider closed the stream before it finished (no finish reason)"])
    expect(text(events)).toBe("the whole answer")
    expect(events.filter((e) => e.type === "start-step")).toHaveLength(1)
  })

  test("a stream closed before its finish reason after some text is an error, not a short success", async () => {
    const { events, error } = await run([{ text: "one two three four five six", closeAfterChunks: 3 }, { text: "never" }])
    const e = failure(error)
    expect(e).toMatchObject({ reason: "transient", message: "the provider closed the stream before it finished (no finish reason)" })
    expect(text(events)).not.toBe("")
    expect(events.some((e) => e.type === "finish-step")).toBe(false)
    expect(server!.requests).toHaveLength(1)
  })

  test("a connection reset mid-stream is retried, and no message carries Bun's hint for developers", async () => {
    server = await startScriptedServer([{ hang: true }])
    const url = server.url
    const settings: ProviderSettings = { providers: { local: { type: "openai-compatible", baseURL: url } }, env: {} }
    const events: Array<ModelEvent> = []
    const fiber = Effect.runFork(
      Effect.gen(function* () {
        const provider = yield* Provider
        return yield* provider.stream(request).pipe(Stream.runForEach((e) => Effect.sync(() => void events.push(e))))
      }).pipe(
        Effect.flip,
        Effect.provide(Provider.layer),
        Effect.provideService(ProviderSettings, settings),
        Effect.provideService(RetryPolicy, { attempts: 2, initialDelayMs: 5, maxDelayMs: 5 })
      )
    )
    while (server.requests.length === 0) await Bun.sleep(5)
    await Bun.sleep(50)
    await server.stop()
    server = undefined
    const error = await Effect.runPromise(Fiber.join(fiber))
    const messages = [...retries(events), error.message]
    expect(messages[0]).toContain("ECONNRESET")
    expect(error.reason).toBe("transient")
    for (const message of messages) expect(message).not.toMatch(/verbose|second argument to fetch/)
  })
})

test("timeouts resolve field by field: the provider's, then provider_timeout, then the defaults", () => {
  expect(resolveTimeouts(undefined, undefined)).toEqual({
    connect: DEFAULT_TIMEOUTS.connect * 1000,
    first_byte: DEFAULT_TIMEOUTS.first_byte * 1000,
    idle: DEFAULT_TIMEOUTS.idle * 1000
  })
  expect(resolveTimeouts({ connect: 5, idle: 7 }, { idle: 0.25 })).toEqual({ connect: 5000, first_byte: DEFAULT_TIMEOUTS.first_byte * 1000, idle: 250 })
})
