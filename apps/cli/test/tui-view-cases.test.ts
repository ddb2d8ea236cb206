// The transcript fold on the cases a short scripted run does not produce: parallel tools, progress, compaction, retries, interrupts.
import { describe, expect, test } from "bun:test"
import type { SessionEvent } from "@reins/domain"
import { addNotice, initialTranscript, lastAnswer, reduceTranscript } from "../src/tui/view/index.ts"
import { stableEnd } from "../src/tui/view/Split.ts"
import { allItems, cacheHitRate } from "../src/tui/view/State.ts"
import { assistant, completed, delta, running, SESSION, text, tool, updated, user } from "./tui-view-events.ts"

const fold = (evs: ReadonlyArray<SessionEvent>) => evs.reduce(reduceTranscript, initialTranscript)
const kinds = (items: ReadonlyArray<{ kind: string; id: string }>) => items.map((i) => `${i.kind}:${i.id}`)

describe("reduceTranscript", () => {
  test("a call that finishes before an earlier one stays live behind it, so the order on screen is kept", () => {
    const a = tool("prt_a", "msg_a", "bash", running({ command: "sleep 5" }, 1000))
    const b = tool("prt_b", "msg_a", "grep", running({ pattern: "x" }, 1000))
    let state = fold([...user("msg_u", "go"), { type: "message.updated", message: assistant("msg_a") }, updated(a), updated(b)])
    expect(state.status).toBe("tool")
    state = reduceTranscript(state, updated({ ...b, state: completed({ pattern: "x" }, "", { matches: 2, files: 1 }) }))
    expect(kinds(state.items)).toEqual(["user:msg_u-p"])
    expect(kinds(state.live)).toEqual(["tool:prt_a", "tool:prt_b"])
    state = reduceTranscript(state, updated({ ...a, state: completed({ command: "sleep 5" }, "", { exitCode: 0 }) }))
    expect(kinds(state.items)).toEqual(["user:msg_u-p", "tool:prt_a", "tool:prt_b"])
    expect(state.live).toEqual([])
    expect(state.status).toBe("thinking")
  })

  test("bash's progress replaces the running call's metadata (its live tail), leaving the other items as they were", () => {
    const a = tool("prt_a", "msg_a", "bash", running({ command: "make" }, 1000))
    const before = fold([{ type: "message.updated", message: assistant("msg_a") }, text("prt_t", "msg_a", ""), delta("prt_t", "building"), updated(a)])
    const textItem = before.live[0]
    const after = reduceTranscript(before, updated({ ...a, state: running({ command: "make" }, 1000, { tail: "cc a.c\ncc b.c\n", outputBytes: 14 }) }))
    expect(after.live[0]).toBe(textItem!)
    const bash = after.live[1]
    expect(bash?.kind === "tool" && bash.part.state.status === "running" && bash.part.state.metadata?.tail).toBe("cc a.c\ncc b.c\n")
  })

  test("a queued message is marked; the continuation written after a compaction is not shown", () => {
    const state = fold([...user("msg_q", "also this", { queued: true }), ...user("msg_c", "Continue.", { compaction_continue: true })])
    const items = allItems(state)
    expect(items.length).toBe(1)
    expect(items[0]?.kind === "user" && items[0].queued).toBe(true)
  })

  test("compaction: a live notice while it runs, then what it did; the context shrinks to what is left", () => {
    const summary = assistant("msg_s", { summary: { summarised: ["msg_1"], pinned: [], auto: true } })
    let state = fold([
      { type: "message.updated", message: assistant("msg_a", { usage: { input: 9000, output: 500, reasoning: 0, cacheRead: 0, cacheWrite: 0 } }) },
      { type: "compaction.started", sessionID: SESSION, reason: "overflow", tokens: 9500 }
    ])
    expect(state.usage.contextTokens).toBe(9500)
    expect(state.live.map((i) => (i.kind === "notice" ? i.text : ""))).toEqual(["compacting context (overflow, ~9,500 tokens)…"])
    state = [
      { type: "message.updated", message: summary } as SessionEvent,
      { type: "part.updated", part: { id: "prt_s", sessionID: SESSION, messageID: "msg_s", type: "text", text: "## Summary\nwe did things" } } as SessionEvent
    ].reduce(reduceTranscript, state)
    // the summary waits behind the running notice
    expect(state.items).toEqual([])
    state = reduceTranscript(state, {
      type: "compaction.completed",
      sessionID: SESSION,
      messageID: "msg_s",
      tokensBefore: 9500,
      tokensAfter: 1200,
      pruned: ["prt_1", "prt_2"],
      summarised: ["msg_1"],
      summary: "## Summary\nwe did things"
    })
    expect(state.live).toEqual([])
    expect(state.items.map((i) => `${i.kind}:${"text" in i ? i.text : ""}`)).toEqual([
      "notice:compacted: 9,500 → 1,200 tokens; 1 message summarised, 2 tool outputs pruned",
      "summary:## Summary\nwe did things"
    ])
    expect(state.usage.contextTokens).toBe(1200)
  })

  test("a retry shows while it waits; an interrupt leaves a notice and ends the turn with the open call printed as it was", () => {
    const a = tool("prt_a", "msg_a", "bash", running({ command: "sleep 100" }, 1000))
    let state = fold([{ type: "session.status", sessionID: SESSION, status: "busy" }])
    expect(state.status).toBe("thinking")
    state = reduceTranscript(state, { type: "session.status", sessionID: SESSION, status: "retry", attempt: 1, message: "rate limited", next: 2000 })
    expect(state.status).toBe("retry")
    expect(state.retry).toEqual({ attempt: 1, message: "rate limited", next: 2000 })
    state = [{ type: "message.updated", message: assistant("msg_a") } as SessionEvent, updated(a)].reduce(reduceTranscript, state)
    // the model answered again: no longer retrying
    expect(state.status).toBe("tool")
    expect(state.retry).toBeUndefined()
    state = reduceTranscript(state, {
      type: "message.updated",
      message: assistant("msg_a", { error: { reason: "interrupted", message: "Interrupted by the user." } })
    })
    state = reduceTranscript(state, { type: "session.status", sessionID: SESSION, status: "idle" })
    expect(state.status).toBe("idle")
    expect(state.retry).toBeUndefined()
    expect(state.live).toEqual([])
    expect(kinds(state.items)).toEqual(["tool:prt_a", "notice:notice-0"])
    expect(state.items[1]?.kind === "notice" && state.items[1].text).toBe("interrupted")
  })

  test("a turn's error is one notice, not one per event that carries it", () => {
    const error = { reason: "auth", message: "The API key was refused. Set OPENAI_API_KEY." }
    const state = fold([
      { type: "message.updated", message: assistant("msg_a") },
      { type: "message.updated", message: assistant("msg_a", { error }) },
      { type: "session.error", sessionID: SESSION, error },
      { type: "session.status", sessionID: SESSION, status: "idle" }
    ])
    expect(state.items.map((i) => (i.kind === "notice" ? `${i.tone}:${i.text}` : i.kind))).toEqual(["error:The API key was refused. Set OPENAI_API_KEY."])
  })

  test("questions asked at once wait in order; a reply closes its own", () => {
    const ask = (id: string, pattern: string): SessionEvent => ({
      type: "permission.asked",
      id,
      sessionID: SESSION,
      permission: "bash",
      patterns: [pattern],
      always: [pattern]
    })
    let state = fold([ask("per_1", "rm a"), ask("per_2", "rm b")])
    expect(state.permission?.id).toBe("per_1")
    state = reduceTranscript(state, { type: "permission.replied", id: "per_2", sessionID: SESSION, reply: "always", by: "user", granted: ["rm b"] })
    expect(state.permission?.id).toBe("per_1")
    expect(state.permissions.map((p) => p.id)).toEqual(["per_1"])
    expect(allItems(state).map((i) => (i.kind === "notice" ? i.text : ""))).toEqual(["always allowed for this session: rm b"])
    state = reduceTranscript(state, { type: "permission.replied", id: "per_1", sessionID: SESSION, reply: "once", by: "user" })
    expect(state.permission).toBeUndefined()
  })

  test("usage: an update to the same message replaces its figures, an older message's changes nothing, the cache rate needs cache figures", () => {
    const u = (input: number, output: number, cacheRead = 0) => ({ input, output, reasoning: 0, cacheRead, cacheWrite: 0 })
    const state = fold([
      { type: "message.updated", message: assistant("msg_1", { usage: u(100, 10), cost: 0.01 }) },
      { type: "message.updated", message: assistant("msg_2") },
      { type: "message.updated", message: assistant("msg_2", { usage: u(50, 5, 150), cost: 0.02 }) },
      { type: "message.updated", message: assistant("msg_1", { usage: u(100, 10), cost: 0.01, error: { reason: "doom_loop", message: "x" } }) }
    ])
    expect(state.usage).toEqual({ input: 150, output: 15, cacheRead: 150, cacheWrite: 0, cost: 0.03, contextTokens: 205 })
    expect(cacheHitRate(state.usage)).toBe(0.5)
    expect(cacheHitRate(fold([{ type: "message.updated", message: assistant("msg_1", { usage: u(100, 10) }) }]).usage)).toBeUndefined()
  })

  test("lastAnswer: none before an answer; the last assistant message's text, not an earlier step's", () => {
    expect(lastAnswer(initialTranscript)).toBeUndefined()
    const state = fold([
      { type: "message.updated", message: assistant("msg_1") },
      text("prt_1", "msg_1", "Let me look.", 20),
      { type: "message.updated", message: assistant("msg_2") },
      text("prt_2", "msg_2", ""),
      delta("prt_2", "The answer "),
      delta("prt_2", "is 42.")
    ])
    expect(lastAnswer(state)).toBe("The answer is 42.")
  })

  test("an app notice comes after what is on screen: behind a running call, printed once it ends", () => {
    const a = tool("prt_a", "msg_a", "bash", running({ command: "sleep 5" }, 1000))
    let state = addNotice(fold([{ type: "message.updated", message: assistant("msg_a") }, updated(a)]), "Model: local/other for the next turns")
    expect(kinds(state.live)).toEqual(["tool:prt_a", "notice:notice-0"])
    state = reduceTranscript(state, updated({ ...a, state: completed({ command: "sleep 5" }, "", { exitCode: 0 }) }))
    expect(kinds(state.items)).toEqual(["tool:prt_a", "notice:notice-0"])
    expect(kinds(addNotice(state, "x", "error").items).at(-1)).toBe("notice:notice-1")
  })

  test("stableEnd: after the last blank line outside a fence; nothing inside an open fence or on an unfinished line", () => {
    expect(stableEnd("one\n\ntwo")).toBe(5)
    expect(stableEnd("one\n\ntwo\n\n")).toBe(10)
    expect(stableEnd("one\n\n```\ncode\n\nmore")).toBe(5)
    expect(stableEnd("```ts\na\n\nb\n```\n\nafter")).toBe(16)
    expect(stableEnd("~~~\n```\n\n")).toBe(0)
    expect(stableEnd("no blank line\nat all")).toBe(0)
  })
})
