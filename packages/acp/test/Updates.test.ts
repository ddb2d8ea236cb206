import { describe, expect, test } from "bun:test"
import type { AssistantMessage, MessageWithParts, SessionEvent, ToolPart, TurnResult } from "@reins/domain"
import { historyUpdates, stopReason, turnUpdates } from "../src/Updates.ts"

const base = { sessionID: "ses_1", messageID: "msg_a" }
const assistant: AssistantMessage = {
  id: "msg_a",
  sessionID: "ses_1",
  role: "assistant",
  parentID: "msg_u",
  model: { providerID: "p", modelID: "m" },
  time: { created: 1 },
  usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: 0
}
const user = { id: "msg_u", sessionID: "ses_1", role: "user" as const, time: { created: 0 } }

const tool = (state: ToolPart["state"], extra: Partial<ToolPart> = {}): ToolPart => ({
  ...base,
  id: "prt_t",
  type: "tool",
  callID: "call_1",
  tool: "bash",
  state,
  ...extra
})

describe("turnUpdates", () => {
  test("a streamed text part is sent once: its deltas, not its whole text again when it ends", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const events: Array<SessionEvent> = [
      { type: "message.updated", message: assistant },
      { type: "part.updated", part: { ...base, id: "prt_x", type: "text", text: "" } },
      { type: "part.delta", sessionID: "ses_1", partID: "prt_x", partType: "text", delta: "Hel" },
      { type: "part.delta", sessionID: "ses_1", partID: "prt_x", partType: "text", delta: "lo" },
      { type: "part.updated", part: { ...base, id: "prt_x", type: "text", text: "Hello" } },
      { type: "part.updated", part: { ...base, id: "prt_r", type: "reasoning", text: "thinking" } }
    ]
    expect(events.flatMap(updates)).toEqual([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" } },
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking" } }
    ])
  })

  test("the user's own parts, synthetic text and a sub-agent session's parts are not shown", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const events: Array<SessionEvent> = [
      { type: "message.updated", message: user },
      { type: "part.updated", part: { sessionID: "ses_1", messageID: "msg_u", id: "prt_u", type: "text", text: "my prompt" } },
      { type: "message.updated", message: assistant },
      { type: "part.updated", part: { ...base, id: "prt_s", type: "text", text: "reminder", synthetic: true } },
      { type: "part.updated", part: { sessionID: "ses_child", messageID: "msg_c", id: "prt_c", type: "text", text: "child says" } },
      { type: "part.delta", sessionID: "ses_child", partID: "prt_c", partType: "text", delta: " more" }
    ]
    expect(events.flatMap(updates)).toEqual([])
  })

  test("a call is announced pending once, then updated on each change of status only, finished with its output", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const input = { command: "echo hi" }
    const out = [
      tool({ status: "pending", input: {}, raw: "" }),
      tool({ status: "pending", input, raw: "{}" }),
      tool({ status: "running", input, time: { start: 1 } }),
      tool({ status: "running", input, metadata: { output: "h" }, time: { start: 1 } }),
      tool({ status: "completed", input, output: "hi\n", title: "echo hi", metadata: {}, time: { start: 1, end: 2 } })
    ].flatMap((part) => updates({ type: "part.updated", part }))
    expect(out.map((u) => [u.sessionUpdate, "status" in u ? u.status : undefined])).toEqual([
      ["tool_call", "pending"],
      ["tool_call_update", "in_progress"],
      ["tool_call_update", "completed"]
    ])
    expect(out[0]).toMatchObject({ toolCallId: "call_1", kind: "execute", title: "bash" })
    expect(out[2]).toMatchObject({ title: "echo hi", content: [{ type: "content", content: { type: "text", text: "hi\n" } }] })
  })

  test("a call whose pending state a slow client never saw is announced, then completed; a failed call carries its error", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const done = updates({ type: "part.updated", part: tool({ status: "error", input: { command: "x" }, error: "boom", time: { start: 1, end: 2 } }) })
    expect(done.map((u) => u.sessionUpdate)).toEqual(["tool_call", "tool_call_update"])
    expect(done[1]).toMatchObject({ status: "failed", content: [{ type: "content", content: { type: "text", text: "boom" } }] })
  })

  test("the calls still open when the turn is cancelled end as failed; finished ones are left alone", () => {
    const turn = turnUpdates("ses_1", "/p")
    turn.update({ type: "part.updated", part: tool({ status: "running", input: { command: "sleep 9" }, time: { start: 1 } }) })
    turn.update({
      type: "part.updated",
      part: tool({ status: "completed", input: {}, output: "", title: "t", metadata: {}, time: { start: 1, end: 2 } }, { callID: "call_2", id: "prt_2" })
    })
    expect(turn.interrupted()).toEqual([
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "call_1",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "Interrupted: the turn was cancelled." } }]
      }
    ])
  })

  test("the session's new title is sent once; another session's is not", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const session = { id: "ses_1", title: "fix the test", directory: "/p", time: { created: 0, updated: 1_000 } }
    expect([
      ...updates({ type: "session.updated", session }),
      ...updates({ type: "session.updated", session: { ...session, time: { created: 0, updated: 2_000 } } }),
      ...updates({ type: "session.updated", session: { ...session, id: "ses_child", title: "child" } })
    ]).toEqual([{ sessionUpdate: "session_info_update", title: "fix the test", updatedAt: "1970-01-01T00:00:01.000Z" }])
  })

  test("a todo tool's list becomes the plan", () => {
    const updates = turnUpdates("ses_1", "/p").update
    const todos = [
      { content: "write the test", status: "completed", priority: "high" },
      { content: "make it pass", status: "in_progress" },
      { content: "", status: "pending" }
    ]
    const out = updates({
      type: "part.updated",
      part: tool({ status: "completed", input: { todos }, output: "", title: "todo", metadata: {}, time: { start: 1, end: 2 } }, { tool: "todowrite" })
    })
    expect(out.at(-1)).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "write the test", status: "completed", priority: "high" },
        { content: "make it pass", status: "in_progress", priority: "medium" }
      ]
    })
  })
})

describe("historyUpdates", () => {
  test("replays the user's text, the answer, thoughts and each call with its final state; leaves out the loop's own messages", () => {
    const messages: Array<MessageWithParts> = [
      { info: user, parts: [{ sessionID: "ses_1", messageID: "msg_u", id: "prt_1", type: "text", text: "do it" }] },
      {
        info: assistant,
        parts: [
          { ...base, id: "prt_2", type: "reasoning", text: "plan" },
          tool({ status: "completed", input: { command: "ls" }, output: "a\n", title: "ls", metadata: {}, time: { start: 1, end: 2 } }),
          { ...base, id: "prt_3", type: "step-start" },
          { ...base, id: "prt_4", type: "text", text: "done" }
        ]
      },
      {
        info: { ...user, id: "msg_c", metadata: { compaction_continue: true } },
        parts: [{ sessionID: "ses_1", messageID: "msg_c", id: "prt_5", type: "text", text: "continue" }]
      }
    ]
    const out = historyUpdates(messages, "/p")
    expect(out.map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "agent_message_chunk"])
    expect(out[3]).toMatchObject({ status: "completed" })
  })
})

describe("stopReason", () => {
  const result = (assistant: Partial<AssistantMessage>): TurnResult => ({
    sessionID: "ses_1",
    steps: 1,
    text: "",
    assistant: { ...baseAssistant, ...assistant }
  })
  const baseAssistant = assistant
  test.each([
    [{ finish: "stop" }, "end_turn"],
    [{ finish: "length" }, "max_tokens"],
    [{ finish: "content-filter" }, "refusal"],
    [{ finish: "tool-calls" }, "max_turn_requests"],
    [{ finish: "stop", error: { reason: "doom_loop", message: "stopped" } }, "max_turn_requests"]
  ] as const)("%o → %s", (assistant, reason) => {
    expect(stopReason(result(assistant))).toBe(reason)
  })
})
