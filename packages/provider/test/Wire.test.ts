// The T22 transforms and variants on the wire for providers the testkit's scripted servers do not
// speak (Gemini, Mistral): the real SDKs over HTTP to a server that records each request body and
// answers with a recorded stream.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import type { AssistantMessage, ModelRef, Part, ProviderConfig } from "@reins/domain"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { mistralToolCallId, type MessageWithParts } from "../src/Transform.ts"
import { recordedServer } from "./recorded-server.ts"
import { streamAll, withProvider } from "./support.ts"

const serve = recordedServer()

const call = (providers: Record<string, ProviderConfig>, env: Record<string, string>, model: ModelRef, messages: ReadonlyArray<MessageWithParts>) =>
  Effect.runPromise(
    streamAll({
      model,
      system: ["the rules"],
      messages,
      tools: [{ id: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } }]
    }).pipe(withProvider({ providers, env }))
  )

const user = (id: string, text: string): MessageWithParts => ({
  info: { id, sessionID: "s", role: "user", time: { created: 0 } },
  parts: [{ id: `${id}-p`, sessionID: "s", messageID: id, type: "text", text }]
})

type PartInput = Part extends infer P ? (P extends Part ? Omit<P, "id" | "sessionID" | "messageID"> : never) : never
const assistant = (id: string, model: ModelRef, parts: ReadonlyArray<PartInput>): MessageWithParts => {
  const info: AssistantMessage = {
    id,
    sessionID: "s",
    role: "assistant",
    parentID: "u",
    model,
    time: { created: 1, completed: 2 },
    usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: 0,
    finish: "tool-calls"
  }
  return { info, parts: parts.map((p, i) => ({ ...p, id: `${id}-${i}`, sessionID: "s", messageID: id }) as Part) }
}

const bash = (callID: string, providerMetadata?: Record<string, Record<string, unknown>>): PartInput => ({
  type: "tool",
  callID,
  tool: "bash",
  state: { status: "completed", input: { command: "ls" }, output: "a.txt", title: "ls", metadata: {}, time: { start: 1, end: 2 } },
  ...(providerMetadata ? { providerMetadata } : {})
})

describe("Gemini", () => {
  const GEMINI_3: ModelRef = { providerID: "google", modelID: "gemini-3-pro-preview" }
  const google = (url: string): Record<string, ProviderConfig> => ({ google: { type: "google", baseURL: `${url}/v1beta` } })
  const env = { GOOGLE_GENERATIVE_AI_API_KEY: "gem-key" }
  const answer = (parts: ReadonlyArray<Record<string, unknown>>) => ({
    candidates: [{ content: { parts, role: "model" }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 }
  })

  test("a thought and a function call come with their thought signatures in the stream's metadata", async () => {
    const { url } = serve([
      answer([
        { text: "Let me look.", thought: true, thoughtSignature: "sig-thought" },
        { functionCall: { id: "call-1", name: "bash", args: { command: "ls" } }, thoughtSignature: "sig-call" }
      ])
    ])
    const events = await call(google(url), env, GEMINI_3, [user("u", "hi")])
    const toolCall = events.find((e): e is Extract<ModelEvent, { type: "tool-call" }> => e.type === "tool-call")!
    expect(toolCall.metadata).toEqual({ google: { thoughtSignature: "sig-call" } })
    const reasoning = events.filter((e) => e.type === "reasoning-start" || e.type === "reasoning-delta")
    expect(reasoning.some((e) => "metadata" in e && JSON.stringify(e.metadata).includes("sig-thought"))).toBe(true)
  })

  const history = (model: ModelRef) => [
    user("u1", "look"),
    assistant("a1", model, [
      { type: "reasoning", text: "Let me look.", providerMetadata: { google: { thoughtSignature: "sig-thought" } } },
      bash("call-1", { google: { thoughtSignature: "sig-call" } })
    ]),
    user("u2", "and now?")
  ]

  test("--variant high is a thinking level; the system prompt is the system instruction; the thought and the call are replayed with their signatures to the same model", async () => {
    const { url, bodies } = serve([answer([{ text: "ok" }])])
    await call(google(url), env, { ...GEMINI_3, variant: "high" }, history(GEMINI_3))
    const body = bodies[0]
    expect(body.generationConfig.thinkingConfig).toEqual({ thinkingLevel: "high", includeThoughts: true })
    expect(body.systemInstruction.parts).toEqual([{ text: "the rules" }])
    expect(body.contents.map((c: { role: string }) => c.role)).toEqual(["user", "model", "user", "user"])
    expect(body.contents[1].parts).toEqual([
      { text: "Let me look.", thought: true, thoughtSignature: "sig-thought" },
      { functionCall: { id: "call-1", name: "bash", args: { command: "ls" } }, thoughtSignature: "sig-call" }
    ])
  })

  test("Gemini 2.5 takes a thinking budget; another model's thoughts and signatures are not sent", async () => {
    const { url, bodies } = serve([answer([{ text: "ok" }])])
    await call(google(url), env, { providerID: "google", modelID: "gemini-2.5-pro", variant: "medium" }, history(GEMINI_3))
    const body = bodies[0]
    expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8_192, includeThoughts: true })
    expect(JSON.stringify(body)).not.toContain("sig-")
    expect(body.contents[1].parts).toEqual([{ functionCall: { id: "call-1", name: "bash", args: { command: "ls" } } }])
  })
})

describe("Mistral", () => {
  const MISTRAL: ModelRef = { providerID: "mistral", modelID: "mistral-large-latest" }
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
    id: "cmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "mistral-large-latest",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra
  })
  const frames = [
    chunk({ role: "assistant", content: "ok" }, null),
    chunk({ content: "" }, "stop", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }),
    "[DONE]"
  ]

  test("tool-call ids from another provider become 9 letters and digits in the call and its result; a tool message is followed by an assistant Done. before the user's", async () => {
    const { url, bodies } = serve(frames)
    const claude: ModelRef = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
    const messages = [user("u1", "look"), assistant("a1", claude, [bash("toolu_01A2b3C4d5E6f7"), bash("toolu_01A2b3C4d5E6f8")]), user("u2", "and now?")]
    await call({ mistral: { type: "mistral", baseURL: `${url}/v1` } }, { MISTRAL_API_KEY: "k" }, MISTRAL, messages)
    const sent = bodies[0].messages as Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "assistant", "user"])
    const ids = sent[2]!.tool_calls!.map((c) => c.id)
    expect(ids).toEqual([mistralToolCallId("toolu_01A2b3C4d5E6f7"), mistralToolCallId("toolu_01A2b3C4d5E6f8")])
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(new Set(ids).size).toBe(2)
    expect([sent[3]!.tool_call_id, sent[4]!.tool_call_id]).toEqual(ids)
    expect(sent[5]!.content).toBe("Done.")
  })
})
