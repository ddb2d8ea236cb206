// Spend caps: the ledgers of running turns, a sub-agent's spending counted into every turn above it as
// it happens, the first cap reached named, and the turn's decision to stop before any model call.
import { describe, expect, test } from "bun:test"
import { emptyUsage } from "@reins/domain"
import type { MessageWithParts } from "@reins/storage"
import { budgetMessage, dollars, hasBudget, openLedger, overBudget, spend } from "../src/Budget.ts"
import { decide, foldTurn, startTurn, type TurnFact } from "../src/TurnDecision.ts"

describe("ledgers", () => {
  test("no cap: nothing to keep", () => {
    expect(hasBudget({})).toBe(false)
    expect(hasBudget({ subagent: 1 })).toBe(true)
  })

  test.each([
    // caps, spent before the turn, spent in it, the cap reached (undefined: room left)
    ["turn cap, under", { turn: 1 }, 0, 0.99, undefined],
    ["turn cap, reached exactly", { turn: 1 }, 0, 1, { scope: "turn", spent: 1, limit: 1 }],
    ["session cap counts earlier turns", { session: 2 }, 1.5, 0.5, { scope: "session", spent: 2, limit: 2 }],
    ["session cap with room", { session: 2 }, 1.5, 0.4, undefined],
    ["session reached first of two", { session: 2, turn: 5 }, 1.9, 0.2, { scope: "session", spent: 2.1, limit: 2 }],
    ["turn reached first of two", { session: 20, turn: 0.5 }, 1.9, 0.6, { scope: "turn", spent: 0.6, limit: 0.5 }],
    ["already over when the turn starts", { session: 1 }, 1.2, 0, { scope: "session", spent: 1.2, limit: 1 }],
    ["a sub-agent cap does not bind the session's own turn", { subagent: 0.1 }, 0, 5, undefined]
  ] as const)("%s", (_, caps, before, spent, reached) => {
    const ledger = openLedger(caps, { parent: undefined, subAgent: false, sessionSpent: before })
    spend(ledger, spent)
    expect(overBudget(ledger)).toEqual(reached)
  })

  test("a sub-agent's spending counts into its parent as it happens; siblings see each other's", () => {
    const parent = openLedger({ turn: 1, subagent: 0.6 }, { parent: undefined, subAgent: false, sessionSpent: 0 })
    const first = openLedger({ turn: 1, subagent: 0.6 }, { parent, subAgent: true, sessionSpent: 0 })
    const second = openLedger({ turn: 1, subagent: 0.6 }, { parent, subAgent: true, sessionSpent: 0 })
    spend(parent, 0.2)
    spend(first, 0.5)
    expect(parent.spent).toBeCloseTo(0.7, 10)
    expect(overBudget(first)).toBeUndefined()
    // the second sub-agent is under its own cap but its parent's turn is not
    spend(second, 0.3)
    expect(overBudget(second)).toEqual({ scope: "turn", spent: 1, limit: 1 })
    expect(overBudget(parent)).toEqual({ scope: "turn", spent: 1, limit: 1 })
  })

  test("a sub-agent's own cap", () => {
    const parent = openLedger({ subagent: 0.25 }, { parent: undefined, subAgent: false, sessionSpent: 0 })
    const child = openLedger({ subagent: 0.25 }, { parent, subAgent: true, sessionSpent: 0 })
    spend(child, 0.3)
    expect(overBudget(child)).toEqual({ scope: "subagent", spent: 0.3, limit: 0.25 })
    // the parent has no cap of its own: it goes on
    expect(overBudget(parent)).toBeUndefined()
  })

  test("a negative or not-a-number cost counts nothing", () => {
    const ledger = openLedger({ turn: 1 }, { parent: undefined, subAgent: false, sessionSpent: 0 })
    spend(ledger, Number.NaN)
    spend(ledger, -3)
    expect(ledger.spent).toBe(0)
  })

  test("the stop line says what was spent of what, and how to go on", () => {
    expect(budgetMessage({ scope: "session", spent: 1.0234, limit: 1 })).toBe(
      "Stopped: the session spent $1.02 of its $1.00 budget (budget.session or --max-cost). Raise it to go on."
    )
    expect(budgetMessage({ scope: "subagent", spent: 0.0052, limit: 0.005 })).toContain("the sub-agent spent $0.0052 of its $0.0050 budget (budget.subagent)")
    expect(dollars(0)).toBe("$0.00")
  })
})

describe("the turn's decision with a cap reached", () => {
  const user: MessageWithParts = { info: { id: "msg_01", sessionID: "ses", role: "user", time: { created: 0 } }, parts: [] }
  const assistant = (id: string, finish: string, tool: boolean): MessageWithParts => ({
    info: {
      id,
      sessionID: "ses",
      role: "assistant",
      parentID: "msg_01",
      model: { providerID: "p", modelID: "m" },
      time: { created: 0 },
      usage: emptyUsage,
      cost: 0,
      finish
    },
    parts: tool
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
  const reached = { scope: "turn", spent: 1.2, limit: 1 } as const
  const stepped = (overflowed: boolean): TurnFact => ({ _tag: "Stepped", final: false, overflowed, tokens: 9_000 })

  test("no first step", () => {
    expect(decide(startTurn({ autoCompact: true }), { messages: [user], budget: reached })).toEqual({ _tag: "Stop", why: { _tag: "Budget", stop: reached } })
  })

  test("no next step after tool calls", () => {
    const state = foldTurn(startTurn({ autoCompact: true }), stepped(false))
    const window = [user, assistant("msg_02", "tool-calls", true)]
    expect(decide(state, { messages: window })).toEqual({ _tag: "Step", final: false })
    expect(decide(state, { messages: window, budget: reached })._tag).toBe("Stop")
  })

  test("no compaction (it is a model call too)", () => {
    const state = foldTurn(startTurn({ autoCompact: true }), stepped(true))
    const window = [user, assistant("msg_02", "tool-calls", true)]
    expect(decide(state, { messages: window })._tag).toBe("Compact")
    expect(decide(state, { messages: window, budget: reached })).toEqual({ _tag: "Stop", why: { _tag: "Budget", stop: reached } })
  })

  test("a turn that answered finishes as it did", () => {
    const state = foldTurn(startTurn({ autoCompact: true }), stepped(false))
    expect(decide(state, { messages: [user, assistant("msg_02", "stop", false)], budget: reached })).toEqual({ _tag: "Finish", why: "answered" })
  })
})
