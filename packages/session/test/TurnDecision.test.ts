// The turn's decision, pure: stored windows and turn states in, the next move out.
import { describe, expect, test } from "bun:test"
import { compacted, noStall, stepOverflowed } from "@reins/compaction"
import { emptyUsage } from "@reins/domain"
import { ProviderError } from "@reins/provider"
import { StoreError, type MessageWithParts } from "@reins/storage"
import type { DoomLoop } from "../src/DoomLoop.ts"
import { decide, foldTurn, freshUsers, startTurn, type Move, type TurnFact, type TurnState } from "../src/TurnDecision.ts"

const user = (id: string, metadata?: Record<string, unknown>): MessageWithParts => ({
  info: { id, sessionID: "ses", role: "user", time: { created: 0 }, ...(metadata ? { metadata } : {}) },
  parts: []
})

const assistant = (
  id: string,
  finish: string | undefined,
  options: { tool?: boolean; error?: { reason: string; message: string } } = {}
): MessageWithParts => ({
  info: {
    id,
    sessionID: "ses",
    role: "assistant",
    parentID: "msg_01",
    model: { providerID: "p", modelID: "m" },
    time: { created: 0 },
    usage: emptyUsage,
    cost: 0,
    ...(finish !== undefined ? { finish } : {}),
    ...(options.error ? { error: options.error } : {})
  },
  parts: options.tool
    ? [
        {
          id: `${id}_t`,
          sessionID: "ses",
          messageID: id,
          type: "tool",
          callID: "c",
          tool: "bash",
          state: { status: "completed", input: {}, output: "", title: "", metadata: {}, time: { start: 0, end: 0 } }
        }
      ]
    : []
})

const request = user("msg_01")
/** The window after a step that called tools / that answered. */
const working = [request, assistant("msg_02", "tool-calls", { tool: true })]
const answered = [request, assistant("msg_02", "tool-calls", { tool: true }), assistant("msg_03", "stop")]

const loop: DoomLoop = { kind: "identical", tools: ["bash"], count: 3, message: "bash was called 3 times with the same input" }
const overflow = new ProviderError({ reason: "overflow", message: "context too long" })
const auth = new ProviderError({ reason: "auth", message: "bad key" })
const stored = new StoreError({ reason: "taken-over", message: "the session was taken over" })

const fresh = startTurn({ autoCompact: true })
/** A state after `facts`, from a turn that has not moved. */
const after = (facts: ReadonlyArray<TurnFact>, base: TurnState = fresh) => facts.reduce(foldTurn, base)
const stepped = (final = false, overflowed = false): TurnFact => ({ _tag: "Stepped", final, overflowed, tokens: 9_000 })

const table: ReadonlyArray<{
  readonly name: string
  readonly state: TurnState
  readonly window: ReadonlyArray<MessageWithParts>
  readonly loop?: DoomLoop
  readonly move: Move
}> = [
  { name: "a new turn steps", state: fresh, window: [request], move: { _tag: "Step", final: false } },
  {
    name: "a new turn whose window looks answered (an earlier turn's answer) still steps",
    state: fresh,
    window: [assistant("msg_00", "stop"), request],
    move: { _tag: "Step", final: false }
  },
  { name: "tool calls: the turn goes on", state: after([stepped()]), window: working, move: { _tag: "Step", final: false } },
  { name: "an answer finishes the turn", state: after([stepped()]), window: answered, move: { _tag: "Finish", why: "answered" } },
  {
    name: "a message queued while the step answered: the turn answers it too",
    state: after([stepped(), { _tag: "Read", fresh: ["msg_04"], queued: 1 }]),
    window: [...answered, user("msg_04", { queued: true })],
    move: { _tag: "Step", final: false }
  },
  {
    name: "a queued message older than the answer (another process's id) still keeps the turn going",
    state: after([stepped(), { _tag: "Read", fresh: ["msg_025"], queued: 1 }]),
    window: [request, assistant("msg_02", "tool-calls", { tool: true }), user("msg_025", { queued: true }), assistant("msg_03", "stop")],
    move: { _tag: "Step", final: false }
  },
  {
    name: "release refused (a message queued after the read): read again, then the fresh message is answered",
    state: after([stepped(), { _tag: "ReleaseRefused" }, { _tag: "Read", fresh: ["msg_04"], queued: 1 }]),
    window: [...answered, user("msg_04", { queued: true })],
    move: { _tag: "Step", final: false }
  },
  {
    name: "the step limit: the last allowed step is final",
    state: after([stepped()], startTurn({ maxSteps: 2, autoCompact: true })),
    window: working,
    move: { _tag: "Step", final: true }
  },
  {
    name: "a step limit of one: the first step is final",
    state: startTurn({ maxSteps: 1, autoCompact: true }),
    window: [request],
    move: { _tag: "Step", final: true }
  },
  {
    name: "the final step ran: the turn stops at the limit, even with tool calls",
    state: after([stepped(true)], startTurn({ maxSteps: 1, autoCompact: true })),
    window: working,
    move: { _tag: "Stop", why: { _tag: "MaxSteps" } }
  },
  {
    name: "a step overflowed with work left: compact, continuing the work",
    state: after([stepped(false, true)]),
    window: working,
    move: { _tag: "Compact", reason: "overflow", tokens: 9_000, progressed: true }
  },
  {
    name: "a step overflowed but answered: the next turn compacts",
    state: after([stepped(false, true)]),
    window: answered,
    move: { _tag: "Finish", why: "answered" }
  },
  {
    name: "compacting does not help (three times nothing to compact): the turn stops stalled",
    state: after([
      ...Array.from({ length: 3 }, (): ReadonlyArray<TurnFact> => [stepped(false, true), { _tag: "Compacted", wrote: false }]).flat(),
      stepped(false, true)
    ]),
    window: working,
    move: { _tag: "Stop", why: { _tag: "Stalled", tokens: 9_000 } }
  },
  {
    name: "after a compaction the turn steps on",
    state: after([stepped(false, true), { _tag: "Compacted", wrote: true }]),
    window: [...working, user("msg_05", { compaction_continue: true })],
    move: { _tag: "Step", final: false }
  },
  {
    name: "the provider says the context is too long: compact (the request replayed, nothing done yet)",
    state: after([{ _tag: "StepFailed", error: overflow, tokens: 5_000, request: 7_000 }]),
    window: [request],
    move: { _tag: "Compact", reason: "provider", tokens: 5_000, progressed: false }
  },
  {
    name: "the provider's overflow with compaction off is the turn's error",
    state: after([{ _tag: "StepFailed", error: overflow, tokens: 5_000, request: 7_000 }], startTurn({ autoCompact: false })),
    window: [request],
    move: { _tag: "Stop", why: { _tag: "Failed", error: overflow } }
  },
  {
    name: "the provider's overflow and nothing to summarise: its error says it best",
    state: after([
      { _tag: "StepFailed", error: overflow, tokens: 5_000, request: 7_000 },
      { _tag: "Compacted", wrote: false }
    ]),
    window: [request],
    move: { _tag: "Stop", why: { _tag: "Failed", error: overflow } }
  },
  {
    name: "the provider's overflow again after futile compactions: stalled, with the whole request's size",
    state: after([{ _tag: "StepFailed", error: overflow, tokens: 5_000, request: 7_000 }], {
      ...fresh,
      stall: stepOverflowed(compacted(stepOverflowed(compacted(stepOverflowed(compacted(noStall))))))
    }),
    window: [request],
    move: { _tag: "Stop", why: { _tag: "Stalled", tokens: 7_000 } }
  },
  {
    name: "any other error ends the turn with it",
    state: after([stepped(), { _tag: "StepFailed", error: auth, tokens: 0, request: 0 }]),
    window: working,
    move: { _tag: "Stop", why: { _tag: "Failed", error: auth } }
  },
  {
    name: "a store error (the session taken over) ends the turn with it",
    state: after([{ _tag: "StepFailed", error: stored, tokens: 0, request: 0 }]),
    window: [request],
    move: { _tag: "Stop", why: { _tag: "Failed", error: stored } }
  },
  {
    name: "an interrupted step (its message carries the error) ends the turn",
    state: after([stepped()]),
    window: [request, assistant("msg_02", "unknown", { tool: true, error: { reason: "interrupted", message: "Interrupted by the user." } })],
    move: { _tag: "Finish", why: "interrupted" }
  },
  {
    name: "a step whose message ended with a provider error ends the turn",
    state: after([stepped()]),
    window: [request, assistant("msg_02", undefined, { error: { reason: "server", message: "the provider failed" } })],
    move: { _tag: "Finish", why: "error" }
  },
  { name: "a doom loop found before a step: ask", state: after([stepped()]), window: working, loop, move: { _tag: "AskLoop", loop } },
  { name: "a loop found before the first step is not asked about", state: fresh, window: [request], loop, move: { _tag: "Step", final: false } },
  {
    name: "a loop is not asked about when the turn is done",
    state: after([stepped()]),
    window: answered,
    loop,
    move: { _tag: "Finish", why: "answered" }
  },
  { name: "the loop allowed: step", state: after([stepped(), { _tag: "LoopAllowed" }]), window: working, loop, move: { _tag: "Step", final: false } },
  {
    name: "the loop rejected: stop with it",
    state: after([stepped(), { _tag: "LoopRejected", loop }]),
    window: working,
    move: { _tag: "Stop", why: { _tag: "DoomLoop", loop } }
  }
]

describe("decide", () => {
  for (const row of table) {
    test(row.name, () => {
      expect(decide(row.state, { messages: row.window, loop: row.loop })).toEqual(row.move)
    })
  }
})

describe("foldTurn", () => {
  test("a step counts, clears the fresh messages and marks the work begun; a failed one does not mark it", () => {
    const read = after([{ _tag: "Read", fresh: ["msg_04"], queued: 1 }])
    expect(read.fresh).toEqual(new Set(["msg_04"]))
    expect(read.queuedSeen).toBe(1)
    const ok = foldTurn(read, stepped())
    expect([ok.steps, ok.fresh.size, ok.worked, ok.queuedSeen]).toEqual([1, 0, true, 1])
    const failed = foldTurn(read, { _tag: "StepFailed", error: auth, tokens: 0, request: 0 })
    expect([failed.steps, failed.fresh.size, failed.worked]).toEqual([1, 0, false])
  })

  test("a step that fits after a compaction clears the stall count", () => {
    const futile = after([stepped(false, true), { _tag: "Compacted", wrote: false }, stepped(false, true)])
    expect(futile.stall.futile).toBeGreaterThan(0)
    expect(foldTurn(futile, stepped()).stall).toEqual(noStall)
  })
})

describe("freshUsers", () => {
  test("user messages new to the turn, once; queued ones counted", () => {
    const known = new Set(["msg_01"])
    const window = [request, assistant("msg_02", "stop"), user("msg_03", { queued: true }), user("msg_04")]
    expect(freshUsers(window, known)).toEqual({ fresh: ["msg_03", "msg_04"], queued: 1 })
    expect(freshUsers(window, known)).toEqual({ fresh: [], queued: 0 })
  })
})
