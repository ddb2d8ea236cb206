import { afterEach, describe, expect, test } from "bun:test"
import { type Duration, Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import type { ProviderTimeoutConfig } from "@reins/domain"
import { eventually, it, startScriptedServer, waitFor, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { Provider, type ProviderSettings, type ProviderRequest } from "../src/Provider.ts"
import type { ProviderError } from "../src/ProviderError.ts"
import type { RetryPolicy } from "../src/Retry.ts"
import { DEFAULT_TIMEOUTS, resolveTimeouts } from "../src/Timeouts.ts"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { hi, text, withProvider } from "./support.ts"

// The limits are watched on Effect's clock: in an `it.effect` test that is a TestClock, so a silence
// lasts exactly as long as the test moves the clock on, whatever the machine's speed.

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const request: ProviderRequest = { model: { providerID: "local", modelID: "m" }, system: ["You are a test."], messages: hi, tools: [] }

/** Retries at once: a retry's wait is not what these tests are about (and virtual time stands still between the moves below). */
const AT_ONCE: RetryPolicy = { attempts: 3, initialDelayMs: 0, maxDelayMs: 0 }

interface Options {
  readonly timeout?: ProviderTimeoutConfig
  readonly global?: ProviderTimeoutConfig
  readonly attempts?: number
}

/**
 * Starts streaming one request against a scripted server, in a fiber of the test (on its clock):
 * the events as they come out, and how the stream ended once it has.
 */
const start = (steps: ReadonlyArray<ScriptedStep>, options: Options = {}) =>
  Effect.gen(function* () {
    const scripted = yield* Effect.promise(() => startScriptedServer(steps))
    server = scripted
    const settings: ProviderSettings = {
      providers: {
        local: {
          type: "openai-compatible",
          baseURL: scripted.url,
          models: { m: { context: 16_000, output: 1_000 } },
          ...(options.timeout ? { timeout: options.timeout } : {})
        }
      },
      env: {},
      ...(options.global ? { timeout: options.global } : {})
    }
    const events: Array<ModelEvent> = []
    const fiber = yield* Effect.forkChild(
      Effect.flatMap(Provider, (provider) => provider.stream(request).pipe(Stream.runForEach((event) => Effect.sync(() => void events.push(event))))).pipe(
        Effect.result,
        withProvider(settings, { ...AT_ONCE, attempts: options.attempts ?? AT_ONCE.attempts })
      )
    )
    const ended = Effect.map(Fiber.join(fiber), (result) => (result._tag === "Failure" ? result.failure : undefined))
    return { server: scripted, events, fiber, ended }
  })

/** Waits (wall time) for the scripted server to hold request `index` open: the client waits on it from then on. */
const stalled = (scripted: ScriptedServer, index = 0) =>
  eventually(
    Effect.sync(() => scripted.requests[index]?.stalledAt),
    `request ${index} to stall`
  )

/**
 * Moves the clock on by `step` until `done` holds: for a silence whose start the test cannot see
 * (the client's own phase), with every earlier phase's limit off so that no other limit can run out.
 */
const advanceUntil = (step: Duration.Input, done: () => boolean, what: string) =>
  eventually(
    Effect.suspend(() => (done() ? Effect.succeed(true) : Effect.as(TestClock.adjust(step), done()))),
    what
  )

/** Streams one request to its end: the events, and the error it ended with (no limit runs out unless the test moves the clock). */
const run = (steps: ReadonlyArray<ScriptedStep>, options: Options = {}) =>
  Effect.flatMap(start(steps, options), (call) => Effect.map(call.ended, (error) => ({ events: call.events, error })))

const retries = (events: ReadonlyArray<ModelEvent>) => events.flatMap((e) => (e.type === "retry" ? [e.message] : []))
const failure = (error: ProviderError | undefined): ProviderError => {
  if (!error) throw new Error("expected the stream to fail")
  return error
}

describe("a provider that stays silent is cut off and retried while nothing was emitted", () => {
  const cases: ReadonlyArray<readonly [string, ScriptedStep, ProviderTimeoutConfig, string]> = [
    // the one phase a stall of the headers can be in: the cut comes with the first minute
    [
      "no response headers",
      { stall: "headers" },
      { connect: 60, first_byte: 60, idle: 60 },
      "sent no response for 60 s (connect timeout; set provider.local.timeout.connect in reins.json to wait longer)"
    ],
    [
      "headers, then not one byte",
      { stall: "body" },
      { connect: 0, first_byte: 60, idle: 60 },
      "answered but sent nothing for 60 s (first-byte timeout; set provider.local.timeout.first_byte in reins.json to wait longer)"
    ],
    [
      "a comment, then nothing",
      { hang: true },
      { connect: 0, first_byte: 0, idle: 60 },
      "sent nothing for 60 s mid-stream (idle timeout; set provider.local.timeout.idle in reins.json to wait longer)"
    ]
  ]
  for (const [name, silent, timeout, message] of cases) {
    it.effect(`${name}: the attempt times out and the retry answers`, () =>
      Effect.gen(function* () {
        // the retry's answer is held back until the test stops moving the clock: until then the retry
        // waits for headers, where its limit is off (or the clock is not moved again)
        const retry = Promise.withResolvers<void>()
        const call = yield* start([silent, { text: "recovered after the retry", holdUntil: retry.promise }], { timeout })
        yield* stalled(call.server)
        if (timeout.connect) yield* TestClock.adjust("60 seconds")
        else yield* advanceUntil("60 seconds", () => call.server.requests.length === 2, "the retry to reach the server")
        yield* eventually(
          Effect.sync(() => call.server.requests.length === 2),
          "the retry to reach the server"
        )
        retry.resolve()
        const error = yield* call.ended
        expect(error).toBeUndefined()
        expect(retries(call.events)).toEqual([`the provider at ${call.server.url} ${message}`])
        expect(text(call.events)).toBe("recovered after the retry")
        // Nothing of the silent attempt reached the caller: one step, started once.
        expect(call.events.filter((e) => e.type === "start-step")).toHaveLength(1)
        expect(call.server.requests).toHaveLength(2)
        expect(call.server.requests[0]!.abortedAt).toBeNumber()
      })
    )
  }

  it.effect("when every attempt stays silent the error names the timeout, the key to raise and the attempts", () =>
    Effect.gen(function* () {
      const call = yield* start([{ stall: "headers" }, { stall: "headers" }], { timeout: { connect: 60, first_byte: 60, idle: 60 }, attempts: 2 })
      for (const attempt of [0, 1]) {
        yield* stalled(call.server, attempt)
        yield* TestClock.adjust("60 seconds")
      }
      const e = failure(yield* call.ended)
      expect(e.reason).toBe("transient")
      expect(e.message).toBe(
        `gave up after 2 attempts: the provider at ${call.server.url} sent no response for 60 s (connect timeout; set provider.local.timeout.connect in reins.json to wait longer)`
      )
      expect(retries(call.events)).toHaveLength(1)
      expect(call.server.requests).toHaveLength(2)
    })
  )

  it.effect("a stall after part of the answer fails with the idle timeout and is not replayed", () =>
    Effect.gen(function* () {
      // Only idle is short: the watchdog, waiting out the long connect limit, still sees the stall.
      const call = yield* start([{ text: "one two three four five six seven", stallAfterChunks: 2 }, { text: "never" }], { timeout: { idle: 1 } })
      yield* eventually(
        Effect.sync(() => text(call.events) !== ""),
        "the first text"
      )
      yield* advanceUntil("1 second", () => call.fiber.pollUnsafe() !== undefined, "the stream to end")
      const e = failure(yield* call.ended)
      expect(e.message).toContain("sent nothing for 1 s mid-stream (idle timeout; set provider.local.timeout.idle")
      expect(text(call.events)).not.toBe("")
      expect(retries(call.events)).toEqual([])
      expect(call.server.requests).toHaveLength(1)
    })
  )

  it.effect("slow chunks within the limits are not cut", () =>
    Effect.gen(function* () {
      // slow in virtual time: 0.9 s before the answer, then 0.2 s after each chunk (the chunks come
      // 60 ms apart, so one at a time), 2 s in all against limits of 1 s for each wait
      const answer = Promise.withResolvers<void>()
      const call = yield* start([{ text: "one two three four five six", holdUntil: answer.promise, chunkDelayMs: 60 }], {
        timeout: { connect: 1, first_byte: 1, idle: 1 }
      })
      yield* eventually(
        Effect.sync(() => call.server.requests.length === 1),
        "the request"
      )
      yield* TestClock.adjust("900 millis")
      answer.resolve()
      let chunks = 0
      while (call.fiber.pollUnsafe() === undefined) {
        yield* eventually(
          Effect.sync(() => call.fiber.pollUnsafe() !== undefined || call.events.filter((e) => e.type === "text-delta").length > chunks),
          "the next chunk or the end"
        )
        chunks = call.events.filter((e) => e.type === "text-delta").length
        yield* TestClock.adjust("200 millis")
      }
      expect(yield* call.ended).toBeUndefined()
      expect(text(call.events)).toBe("one two three four five six")
      expect(retries(call.events)).toEqual([])
    })
  )

  it.effect("0 turns a limit off, and a provider's own timeout wins over provider_timeout field by field", () =>
    Effect.gen(function* () {
      // Bun sends the headers with the first chunk, so an answer held before it is a wait for headers.
      const answer = Promise.withResolvers<void>()
      const off = yield* start([{ text: "slow to start", holdUntil: answer.promise }], { global: { connect: 0.1, idle: 0.1 }, timeout: { connect: 0 } })
      yield* eventually(
        Effect.sync(() => off.server.requests.length === 1),
        "the request"
      )
      // a hundred times provider_timeout's connect limit, which the provider's 0 turned off
      yield* TestClock.adjust("10 seconds")
      answer.resolve()
      expect(yield* off.ended).toBeUndefined()
      expect(retries(off.events)).toEqual([])
      expect(text(off.events)).toBe("slow to start")
      yield* Effect.promise(() => off.server.stop())
      const cut = yield* start([{ stall: "headers" }, { text: "second" }], { global: { connect: 0.1 }, timeout: { idle: 5 } })
      yield* stalled(cut.server)
      yield* TestClock.adjust("100 millis")
      expect(yield* cut.ended).toBeUndefined()
      expect(retries(cut.events)[0]).toContain("sent no response for 0.1 s (connect timeout")
      expect(text(cut.events)).toBe("second")
    })
  )

  test("interrupting a call that waits on a silent provider ends it and closes the connection", async () => {
    for (const silent of [{ stall: "headers" }, { stall: "body" }, { text: "a b c d e f", stallAfterChunks: 1 }] as ReadonlyArray<ScriptedStep>) {
      server = await startScriptedServer([silent])
      const settings: ProviderSettings = { providers: { local: { type: "openai-compatible", baseURL: server.url } }, env: {} }
      const fiber = Effect.runFork(Effect.flatMap(Provider, (provider) => provider.stream(request).pipe(Stream.runDrain)).pipe(withProvider(settings)))
      const held = server
      await waitFor(() => held.requests[0]?.stalledAt, "the server to hold the request")
      await Effect.runPromise(Fiber.interrupt(fiber))
      expect(await waitFor(() => held.requests[0]!.abortedAt, "the server to see the connection close")).toBeNumber()
      await server.stop()
      server = undefined
    }
  })
})

describe("answers that are not a finished event stream", () => {
  it.effect("a 200 HTML page says so, with the page's title, and is not retried", () =>
    Effect.gen(function* () {
      const page = "<!doctype html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome</h1></body></html>"
      const { error } = yield* run([{ raw: { body: page } }, { text: "never" }])
      const e = failure(error)
      expect(e.reason).toBe("invalid")
      expect(e.message).toBe(
        `the provider at ${server!.url} answered with text/html, not an event stream — check baseURL (it usually ends in /v1); it said: "Welcome to nginx!"`
      )
      expect(server!.requests).toHaveLength(1)
    })
  )

  it.effect("a 200 JSON body on a streaming request says so too", () =>
    Effect.gen(function* () {
      const { error } = yield* run([{ raw: { contentType: "application/json", body: '{"status":"ok"}' } }])
      expect(failure(error).message).toContain(
        'answered with application/json, not an event stream — check baseURL (it usually ends in /v1); it said: "{"status":"ok"}"'
      )
    })
  )

  it.effect("a stream closed before its finish reason is retried while nothing was emitted", () =>
    Effect.gen(function* () {
      const { events, error } = yield* run([{ text: "lost", closeAfterChunks: 0 }, { text: "the whole answer" }])
      expect(error).toBeUndefined()
      expect(retries(events)).toEqual(["the provider closed the stream before it finished (no finish reason)"])
      expect(text(events)).toBe("the whole answer")
      expect(events.filter((e) => e.type === "start-step")).toHaveLength(1)
    })
  )

  it.effect("a stream closed before its finish reason after some text is an error, not a short success", () =>
    Effect.gen(function* () {
      const { events, error } = yield* run([{ text: "one two three four five six", closeAfterChunks: 3 }, { text: "never" }])
      const e = failure(error)
      expect(e).toMatchObject({ reason: "transient", message: "the provider closed the stream before it finished (no finish reason)" })
      expect(text(events)).not.toBe("")
      expect(events.some((e) => e.type === "finish-step")).toBe(false)
      expect(server!.requests).toHaveLength(1)
    })
  )

  test("a connection reset mid-stream is retried, and no message carries Bun's hint for developers", async () => {
    const hanging = await startScriptedServer([{ hang: true }])
    server = hanging
    const settings: ProviderSettings = { providers: { local: { type: "openai-compatible", baseURL: hanging.url } }, env: {} }
    const events: Array<ModelEvent> = []
    const fiber = Effect.runFork(
      Effect.flatMap(Provider, (provider) => provider.stream(request).pipe(Stream.runForEach((e) => Effect.sync(() => void events.push(e))))).pipe(
        Effect.flip,
        withProvider(settings, { attempts: 2, initialDelayMs: 5, maxDelayMs: 5 })
      )
    )
    // mid-stream: the server has handed the stream's first byte to the connection
    await waitFor(() => hanging.requests[0]?.stalledAt, "the server to hold the stream open")
    await server.stop()
    server = undefined
    const error = await Effect.runPromise(Fiber.join(fiber))
    const messages = [...retries(events), error.message]
    expect(messages[0]).toContain("ECONNRESET")
    // the retry finds the server gone: a refused loopback connection ends the call at once
    expect(error.reason).toBe("unreachable")
    expect(error.message).toContain(hanging.url)
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
