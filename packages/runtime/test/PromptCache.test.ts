// Prompt caching (T10) end to end: the runtime over the real @ai-sdk/anthropic (and @ai-sdk/openai)
// talking HTTP to the testkit's scripted servers; assertions on the request bodies they recorded.
import { afterEach, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { cacheHitRate, type Part, type Usage } from "@reins/domain"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { startAnthropicServer, startScriptedServer, type ScriptedStep } from "@reins/testkit"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { runIn, sessionTurns, tmp } from "./support.ts"

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

const runtime = (provider: Record<string, unknown>) =>
  makeRuntime({
    cwd: tmp(),
    dataDir: tmp(),
    env: {},
    config: { provider } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: { yolo: true }
  })

/** Two turns on one session: what each prompt's turn stored, and the session id. */
const twoTurns = (layer: ReturnType<typeof runtime>, model: { providerID: string; modelID: string }) =>
  runIn(
    layer,
    sessionTurns([
      { text: "look around", model },
      { text: "and again", model }
    ])
  )

const script: ReadonlyArray<ScriptedStep> = [
  // turn 1: three steps
  { toolCalls: [{ name: "bash", arguments: { command: "echo one", description: "one" } }] },
  { toolCalls: [{ name: "bash", arguments: { command: "echo two", description: "two" } }] },
  { text: "Looked around." },
  // turn 2: two steps
  { toolCalls: [{ name: "bash", arguments: { command: "echo three", description: "three" } }] },
  { text: "Looked again." }
]

type Block = { type: string; cache_control?: unknown; [k: string]: unknown }
const marked = (blocks: ReadonlyArray<Block>) => blocks.flatMap((b, i) => (b.cache_control === undefined ? [] : [i]))

describe("prompt caching over the Anthropic Messages API", () => {
  test("cache_control on exactly the first 2 system blocks and the last 2 messages, the static header byte-identical, over 3 steps and 2 turns", async () => {
    const server = await startAnthropicServer(script)
    stops.push(() => server.stop())
    const layer = runtime({ anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key" } })
    const { messages } = await twoTurns(layer, { providerID: "anthropic", modelID: "claude-sonnet-4-5" })

    const bodies = server.requests.map((r) => r.body as { system: Array<Block>; tools: Array<Block>; messages: Array<{ role: string; content: Array<Block> }> })
    expect(bodies).toHaveLength(5)
    const header = bodies[0]!.system[0]!.text
    expect(typeof header).toBe("string")
    expect(header as string).toContain("You are reins")
    for (const body of bodies) {
      // the static header first, byte for byte the same in every step of both turns; the dynamic rest after it
      expect(body.system[0]!.text).toBe(header)
      expect(body.system[1]!.text as string).toContain("<env>")
      expect(marked(body.system)).toEqual([0, 1])
      expect(body.system[0]!.cache_control).toEqual({ type: "ephemeral" })
      expect(marked(body.tools)).toEqual([])
      // the last block of each of the last 2 messages, and no other block
      const last = body.messages.length - 1
      const where = body.messages.flatMap((m, i) => marked(m.content).map((j) => [i, j]))
      const expected = [last - 1, last].filter((i) => i >= 0).map((i) => [i, body.messages[i]!.content.length - 1])
      expect(where).toEqual(expected)
    }
    // the second turn starts with the whole first turn as its prefix
    expect(bodies[3]!.messages.length).toBeGreaterThan(bodies[2]!.messages.length)

    // each step's stored usage is what the server billed; from the second step on, the cache is read
    const steps = messages.flatMap((m) => m.parts).filter((p): p is Extract<Part, { type: "step-finish" }> => p.type === "step-finish")
    expect(steps).toHaveLength(5)
    steps.forEach((step, i) => {
      const billed = server.requests[i]!.usage!
      expect(step.usage).toMatchObject({
        input: billed.input_tokens,
        cacheRead: billed.cache_read_input_tokens,
        cacheWrite: billed.cache_creation_input_tokens
      })
      if (i > 0) expect(step.usage.cacheRead).toBeGreaterThan(0)
    })
    expect(steps[0]!.usage.cacheRead).toBe(0)
    expect(steps[0]!.usage.cacheWrite).toBeGreaterThan(0)
    // within a turn the previous step's prefix is read whole: only the new messages are written
    for (const i of [1, 2, 4]) expect(cacheHitRate(steps[i]!.usage)!).toBeGreaterThan(0.6)
    const sum = (key: "input" | "cacheRead" | "cacheWrite") => steps.reduce((n, s) => n + s.usage[key], 0)
    const session: Usage = { input: sum("input"), output: 0, reasoning: 0, cacheRead: sum("cacheRead"), cacheWrite: sum("cacheWrite") }
    expect(cacheHitRate(session)!).toBeGreaterThan(0.4)
    // priced (the catalogue knows claude-sonnet-4-5)
    expect(steps.every((s) => s.cost > 0)).toBe(true)
  })

  test("the assistant message of each step carries the step's cache tokens", async () => {
    const server = await startAnthropicServer([{ text: "hi" }, { text: "hi again" }])
    stops.push(() => server.stop())
    const layer = runtime({ anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key" } })
    const { messages } = await twoTurns(layer, { providerID: "anthropic", modelID: "claude-sonnet-4-5" })
    const assistants = messages.flatMap((m) => (m.info.role === "assistant" ? [m.info] : []))
    expect(assistants.map((a) => a.usage.cacheWrite)).toEqual(server.requests.map((r) => r.usage!.cache_creation_input_tokens))
    expect(assistants.map((a) => a.usage.cacheRead)).toEqual(server.requests.map((r) => r.usage!.cache_read_input_tokens))
    // turn 2 reads the header and the tools cached by turn 1
    expect(assistants[1]!.usage.cacheRead).toBeGreaterThan(0)
  })
})

describe("prompt caching through OpenRouter to Claude", () => {
  test("the OpenRouter SDK sends cache_control on the first 2 system messages and the last 2 messages", async () => {
    const server = await startScriptedServer(script.slice(0, 3))
    stops.push(() => server.stop())
    const layer = runtime({ openrouter: { type: "openrouter", baseURL: server.url, apiKey: "test-key" } })
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: "/" })
        yield* sessions.prompt({ sessionID: session.id, text: "look around", model: { providerID: "openrouter", modelID: "anthropic/claude-sonnet-4.5" } })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(server.requests).toHaveLength(3)
    for (const request of server.requests) {
      const messages = request.body.messages as Array<{ role: string; content: unknown; cache_control?: unknown }>
      // where a marker sits, as the wire has it: on a content block, or on the message itself
      const isMarked = (m: (typeof messages)[number]) =>
        m.cache_control !== undefined || (Array.isArray(m.content) && m.content.some((b: { cache_control?: unknown }) => b.cache_control !== undefined))
      const flags = messages.map(isMarked)
      const systems = messages.flatMap((m, i) => (m.role === "system" ? [i] : []))
      expect(systems).toEqual([0, 1])
      const expected = messages.map((_, i) => i < 2 || i >= messages.length - 2)
      expect(flags).toEqual(expected)
    }
  })
})

describe("prompt caching over the OpenAI Responses API", () => {
  test("every request carries prompt_cache_key = the session id and no cache_control", async () => {
    const server = await startScriptedServer(script)
    stops.push(() => server.stop())
    const layer = runtime({ openai: { type: "openai", baseURL: server.url, apiKey: "test-key" } })
    const { sessionID } = await twoTurns(layer, { providerID: "openai", modelID: "gpt-5" })
    expect(server.requests).toHaveLength(5)
    for (const request of server.requests) {
      expect(request.body.prompt_cache_key).toBe(sessionID)
      expect(JSON.stringify(request.body)).not.toContain("cache_control")
    }
  })
})
