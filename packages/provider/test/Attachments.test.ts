// Attachments as one model sees them: text files inlined under their path, images kept for models
// that take them and replaced by notes for others; a tool's images inside its result where the
// provider takes them there, else in a user message right after.
import { describe, expect, test } from "bun:test"
import type { AssistantMessage, ModelRef, Part } from "@reins/domain"
import { forModel, inlinedText } from "../src/Attachments.ts"
import { toModelMessages, type MessageWithParts } from "../src/Transform.ts"

const PNG = "data:image/png;base64,iVBORw0KGgo="
const TEXT = `data:text/plain;base64,${Buffer.from("export const a = 1\n").toString("base64")}`
const SONNET: ModelRef = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }

const user = (parts: ReadonlyArray<{ type: "text"; text: string } | { type: "file"; mime: string; filename: string; url: string }>): MessageWithParts => ({
  info: { id: "msg_u", sessionID: "ses_1", role: "user", time: { created: 1 } },
  parts: parts.map((p, i) => ({ ...p, id: `prt_${i}`, sessionID: "ses_1", messageID: "msg_u" }) as Part)
})

const readImage = (): MessageWithParts => {
  const info: AssistantMessage = {
    id: "msg_a",
    sessionID: "ses_1",
    role: "assistant",
    parentID: "msg_u",
    model: SONNET,
    time: { created: 2, completed: 3 },
    usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: 0,
    finish: "tool-calls"
  }
  const state = {
    status: "completed" as const,
    input: { filePath: "shot.png" },
    output: "Image shot.png (image/png, 69 B), attached below.",
    title: "shot.png",
    metadata: {},
    time: { start: 1, end: 2 },
    attachments: [{ mime: "image/png", filename: "shot.png", url: PNG }]
  }
  return { info, parts: [{ id: "prt_t", sessionID: "ses_1", messageID: "msg_a", type: "tool", callID: "toolu_1", tool: "read", state }] }
}

describe("forModel", () => {
  const message = user([
    { type: "text", text: "look" },
    { type: "file", mime: "text/plain", filename: "src/a.ts", url: TEXT },
    { type: "file", mime: "image/png", filename: "shot.png", url: PNG }
  ])

  test("a text file becomes its text under its path, for every model", () => {
    expect(inlinedText("src/a.ts", TEXT)).toBe('<file path="src/a.ts">\nexport const a = 1\n</file>')
    for (const images of [true, false]) {
      const [shaped] = forModel([message], images)
      expect(shaped!.parts[1]).toEqual({
        id: "prt_1",
        sessionID: "ses_1",
        messageID: "msg_u",
        type: "text",
        text: '<file path="src/a.ts">\nexport const a = 1\n</file>'
      })
    }
  })

  test("an image stays for a model that takes images and becomes a note for one that does not", () => {
    expect(forModel([message], true)[0]!.parts[2]).toBe(message.parts[2]!)
    expect(forModel([message], false)[0]!.parts[2]).toMatchObject({
      type: "text",
      text: "[Image shot.png (image/png) not shown: this model does not accept images.]"
    })
  })

  test("a message with nothing to change is passed through, and a changed one is the same object every step", () => {
    const plain = user([{ type: "text", text: "hi" }])
    expect(forModel([plain], false)[0]).toBe(plain)
    expect(forModel([message], false)[0]).toBe(forModel([message], false)[0]!)
    expect(forModel([message], true)[0]).not.toBe(forModel([message], false)[0])
  })

  test("a tool's image is left out with a note for a model that takes none", () => {
    const [shaped] = forModel([readImage()], false)
    const part = shaped!.parts[0]!
    expect(part.type === "tool" && part.state.status === "completed" && part.state.attachments).toBeUndefined()
    expect(part.type === "tool" && part.state.status === "completed" && part.state.output).toContain(
      "The image is not shown: this model does not accept images."
    )
    expect(JSON.stringify(toModelMessages([shaped!], "openai-compatible"))).not.toContain("iVBORw0KGgo")
  })
})

describe("a tool's images", () => {
  test.each(["anthropic", "openai", "amazon-bedrock"] as const)("%s: inside the tool result", (type) => {
    const messages = toModelMessages(forModel([readImage()], true), type)
    expect(messages.map((m) => m.role)).toEqual(["assistant", "tool"])
    const result = (messages[1]!.content as Array<any>)[0]
    expect(result.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "Image shot.png (image/png, 69 B), attached below." },
        { type: "file", mediaType: "image/png", data: { type: "data", data: "iVBORw0KGgo=" } }
      ]
    })
  })

  test.each(["openai-compatible", "openrouter", "google", "xai"] as const)("%s: in a user message right after the results", (type) => {
    const messages = toModelMessages(forModel([readImage()], true), type)
    expect(messages.map((m) => m.role)).toEqual(["assistant", "tool", "user"])
    expect((messages[1]!.content as Array<any>)[0].output).toEqual({ type: "text", value: "Image shot.png (image/png, 69 B), attached below." })
    expect(messages[2]!.content).toEqual([
      { type: "text", text: "The read tool call toolu_1 gave this image:" },
      { type: "file", data: PNG, mediaType: "image/png", filename: "shot.png" }
    ])
  })

  test("a pruned output sends no image", () => {
    const pruned = readImage()
    const part = pruned.parts[0]!
    const compacted = {
      ...pruned,
      parts: [
        part.type === "tool" && part.state.status === "completed" ? { ...part, state: { ...part.state, time: { start: 1, end: 2, compacted: 5 } } } : part
      ]
    }
    expect(JSON.stringify(toModelMessages(forModel([compacted], true), "anthropic"))).not.toContain("iVBORw0KGgo")
    expect(JSON.stringify(toModelMessages(forModel([compacted], true), "openai-compatible"))).not.toContain("iVBORw0KGgo")
  })
})
