// The per-provider message transforms of T22, one test (or table) per rule.
import { describe, expect, test } from "bun:test"
import type { ModelMessage } from "ai"
import type { AssistantMessage, ModelRef, Part, ProviderType } from "@reins/domain"
import { anthropicToolCallId, doneBetweenToolAndUser, mistralToolCallId, systemFirst, toModelMessages, type MessageWithParts } from "../src/Transform.ts"

const SONNET: ModelRef = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
const base = (messageID: string) => ({ sessionID: "ses_1", messageID })

const user = (id: string, text: string): MessageWithParts => ({
  info: { id, sessionID: "ses_1", role: "user", time: { created: 1 } },
  parts: [{ id: `${id}-p`, ...base(id), type: "text", text }]
})

type PartInput = Part extends infer P ? (P extends Part ? Omit<P, "id" | "sessionID" | "messageID"> : never) : never

const assistant = (id: string, parts: ReadonlyArray<PartInput>, model: ModelRef = SONNET): MessageWithParts => {
  const info: AssistantMessage = {
    id,
    sessionID: "ses_1",
    role: "assistant",
    parentID: "msg_u",
    model,
    time: { created: 2, completed: 3 },
    usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: 0,
    finish: "tool-calls"
  }
  return { info, parts: parts.map((p, i) => ({ ...p, id: `${id}-${i}`, ...base(id) }) as Part) }
}

const toolCall = (callID: string, output = "ok") => ({
  type: "tool" as const,
  callID,
  tool: "bash",
  state: { status: "completed" as const, input: { command: "ls" }, output, title: "ls", metadata: {}, time: { start: 1, end: 2 } }
})

const ids = (messages: ReadonlyArray<ModelMessage>) =>
  messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.flatMap((c) => ("toolCallId" in c ? [`${c.type}:${c.toolCallId}`] : []))))

describe("Anthropic", () => {
  test.each([
    ["toolu_01ABC-def_9", "toolu_01ABC-def_9"],
    ["call:1.read/x", "call_1_read_x"],
    ["fc_abc|call_é 2", "fc_abc_call___2"]
  ])("tool-call id %p becomes %p, the same in the call and its result", (id, expected) => {
    expect(anthropicToolCallId(id)).toBe(expected)
    const out = toModelMessages([user("msg_u", "go"), assistant("msg_a", [toolCall(id)])], "anthropic", SONNET)
    expect(ids(out)).toEqual([`tool-call:${expected}`, `tool-result:${expected}`])
  })

  test("empty text and reasoning content is removed; a message left empty is not sent", () => {
    const out = toModelMessages(
      [
        user("msg_u", "go"),
        assistant("msg_a", [
          { type: "reasoning", text: "  " },
          { type: "text", text: "" },
          { type: "text", text: "answer" }
        ]),
        assistant("msg_b", [{ type: "text", text: "\n" }])
      ],
      "anthropic",
      SONNET
    )
    expect(out).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "text", text: "answer" }] }
    ])
  })

  test("thinking is replayed with its signature, redacted thinking with its data; unsigned thinking is dropped", () => {
    const out = toModelMessages(
      [
        user("msg_u", "go"),
        assistant("msg_a", [
          { type: "reasoning", text: "signed", providerMetadata: { anthropic: { signature: "sig_1" } } },
          { type: "reasoning", text: "", providerMetadata: { anthropic: { redactedData: "opaque" } } },
          { type: "reasoning", text: "cut off before its signature" },
          toolCall("toolu_1")
        ])
      ],
      "anthropic",
      SONNET
    )
    expect(out[1]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "signed", providerOptions: { anthropic: { signature: "sig_1" } } },
        { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque" } } },
        { type: "tool-call", toolCallId: "toolu_1", toolName: "bash", input: { command: "ls" } }
      ]
    })
  })
})

describe("Anthropic with thinking on", () => {
  const OPUS: ModelRef = { providerID: "anthropic", modelID: "claude-opus-4-1" }
  const roles = (out: ReadonlyArray<ModelMessage>) => out.map((m) => m.role)
  const loop = (made: ModelRef) => [
    user("msg_u", "go"),
    assistant("msg_a", [{ type: "reasoning", text: "plan", providerMetadata: { anthropic: { signature: "sig" } } }, toolCall("toolu_1")], made),
    user("msg_v", "next")
  ]

  test("a tool loop without thinking (another model's) is closed by an assistant Done. before the user message", () => {
    const out = toModelMessages(loop(OPUS), "anthropic", SONNET, { thinking: true })
    expect(roles(out)).toEqual(["user", "assistant", "tool", "assistant", "user"])
    expect(out[3]).toEqual({ role: "assistant", content: [{ type: "text", text: "Done." }] })
  })

  test("a tool loop with its signed thinking, or a call without thinking, is left as it is", () => {
    expect(roles(toModelMessages(loop(SONNET), "anthropic", SONNET, { thinking: true }))).toEqual(["user", "assistant", "tool", "user"])
    expect(roles(toModelMessages(loop(OPUS), "anthropic", SONNET, { thinking: false }))).toEqual(["user", "assistant", "tool", "user"])
    expect(roles(toModelMessages(loop(OPUS), "anthropic", SONNET))).toEqual(["user", "assistant", "tool", "user"])
  })
})

describe("reasoning across models", () => {
  const history = [
    user("msg_u", "go"),
    assistant(
      "msg_a",
      [
        { type: "reasoning", text: "mine", providerMetadata: { anthropic: { signature: "sig_1" } } },
        { type: "text", text: "done" }
      ],
      SONNET
    )
  ]

  test.each<[string, boolean, ModelRef, ProviderType]>([
    ["the same model, another variant", true, { ...SONNET, variant: "high" }, "anthropic"],
    ["another model id", false, { providerID: "anthropic", modelID: "claude-opus-4-1" }, "anthropic"],
    ["another provider, same model id", false, { providerID: "bedrock-claude", modelID: "claude-sonnet-4-5" }, "anthropic"],
    ["another provider type", false, { providerID: "openai", modelID: "gpt-5" }, "openai"]
  ])("%s: reasoning replayed = %p", (_, replayed, model, type) => {
    const content = toModelMessages(history, type, model)[1]!.content
    expect(Array.isArray(content) && content.some((c) => c.type === "reasoning")).toBe(replayed)
    // the text is there either way
    expect(content).toContainEqual({ type: "text", text: "done" })
  })

  test("OpenAI's encrypted reasoning is replayed as stored, even with no summary text", () => {
    const gpt: ModelRef = { providerID: "openai", modelID: "gpt-5" }
    const metadata = { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc_1" } }
    const out = toModelMessages(
      [user("msg_u", "go"), assistant("msg_a", [{ type: "reasoning", text: "", providerMetadata: metadata }, toolCall("call_1")], gpt)],
      "openai",
      gpt
    )
    expect(out[1]!.content).toContainEqual({ type: "reasoning", text: "", providerOptions: metadata })
  })

  test("a conversion is reused for the same model and redone for another", () => {
    const a = toModelMessages(history, "anthropic", SONNET)
    expect(toModelMessages(history, "anthropic", SONNET)[1]).toBe(a[1]!)
    const other = toModelMessages(history, "anthropic", { providerID: "anthropic", modelID: "claude-opus-4-1" })
    expect(other[1]).not.toBe(a[1]!)
    expect(other[1]!.content).toEqual([{ type: "text", text: "done" }])
  })
})

describe("Mistral", () => {
  test.each(["toolu_01ABCDEFGHIJKLMNOP", "toolu_01ABCDEFGHIJKLMNOQ", "call:1", "abcDEF123", "x"])(
    "tool-call id %p becomes 9 letters and digits, always the same",
    (id) => {
      const out = mistralToolCallId(id)
      expect(out).toMatch(/^[a-zA-Z0-9]{9}$/)
      expect(mistralToolCallId(id)).toBe(out)
      if (/^[a-zA-Z0-9]{9}$/.test(id)) expect(out).toBe(id)
    }
  )

  test("ids that share a long prefix stay distinct", () => {
    const many = Array.from({ length: 1000 }, (_, i) => mistralToolCallId(`toolu_01AAAAAAAAAAAAAAAAA${i}`))
    expect(new Set(many).size).toBe(1000)
  })

  test("the call and its result get the same id; a tool message followed by a user message gets an assistant Done. between", () => {
    const model: ModelRef = { providerID: "mistral", modelID: "mistral-large-latest" }
    const out = toModelMessages([user("msg_u", "go"), assistant("msg_a", [toolCall("toolu_01XYZ")], model), user("msg_v", "next")], "mistral", model)
    const id = mistralToolCallId("toolu_01XYZ")
    expect(ids(out)).toEqual([`tool-call:${id}`, `tool-result:${id}`])
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"])
    expect(out[3]).toEqual({ role: "assistant", content: [{ type: "text", text: "Done." }] })
  })

  test("a tool message followed by an assistant message is left alone", () => {
    const messages: Array<ModelMessage> = [
      { role: "tool", content: [] },
      { role: "assistant", content: [{ type: "text", text: "more" }] },
      { role: "tool", content: [] }
    ]
    expect(doneBetweenToolAndUser(messages)).toEqual(messages)
  })

  test("other providers keep tool → user as it is", () => {
    const out = toModelMessages([user("msg_u", "go"), assistant("msg_a", [toolCall("c1")]), user("msg_v", "next")], "openai", SONNET)
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
  })
})

describe("Gemini", () => {
  test("system messages only at the start: a later one is merged into the first", () => {
    const messages: Array<ModelMessage> = [
      { role: "system", content: "rules" },
      { role: "user", content: "hi" },
      { role: "system", content: "a reminder" },
      { role: "assistant", content: "hello" }
    ]
    expect(systemFirst(messages)).toEqual([
      { role: "system", content: "rules\n\na reminder" },
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" }
    ])
  })

  test("system messages already first, or none, are left as they are", () => {
    const first: Array<ModelMessage> = [
      { role: "system", content: "rules" },
      { role: "user", content: "hi" }
    ]
    expect(systemFirst(first)).toEqual(first)
    const none: Array<ModelMessage> = [{ role: "user", content: "hi" }]
    expect(systemFirst(none)).toEqual(none)
  })

  test("a tool call's thought signature is replayed to the model that made it, not to another", () => {
    const gemini: ModelRef = { providerID: "google", modelID: "gemini-3-pro-preview" }
    const signed = { google: { thoughtSignature: "sig-call" } }
    const history = [user("msg_u", "go"), assistant("msg_a", [{ ...toolCall("c1"), providerMetadata: signed }], gemini)]
    const callOf = (out: ReadonlyArray<ModelMessage>): unknown => (out[1]!.content as ReadonlyArray<{ type: string }>).find((c) => c.type === "tool-call")
    expect(callOf(toModelMessages(history, "google", gemini))).toEqual({
      type: "tool-call",
      toolCallId: "c1",
      toolName: "bash",
      input: { command: "ls" },
      providerOptions: signed
    })
    expect(callOf(toModelMessages(history, "google", { providerID: "google", modelID: "gemini-2.5-pro" }))).not.toHaveProperty("providerOptions")
  })

  test("google conversions go through it; tool-call ids are kept", () => {
    const model: ModelRef = { providerID: "google", modelID: "gemini-2.5-pro" }
    const out = toModelMessages([user("msg_u", "go"), assistant("msg_a", [toolCall("call:1")], model)], "google", model)
    expect(ids(out)).toEqual(["tool-call:call:1", "tool-result:call:1"])
  })
})
