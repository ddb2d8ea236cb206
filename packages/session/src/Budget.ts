import { Context } from "effect"
import type { BudgetConfig } from "@reins/domain"

/**
 * Spend caps (issue: budgets). A running turn keeps a ledger of what it spent, linked to the ledger
 * of the turn whose `task` call runs it: a sub-agent's spending counts into every turn above it as
 * it happens, so siblings running at once see each other's, and a cap is checked against its own
 * ledger and every one above before each model call. A step once begun is not cut short: a cap
 * can be passed by the cost of the step that reached it.
 */

/** The caps in dollars, from `budget` in config (`--max-cost` sets `session`); none by default. */
export const BudgetSettings = Context.Reference<BudgetConfig>("reins/session/Budget", { defaultValue: () => ({}) })

/** Which cap: the session's whole spend, one turn's, or one sub-agent run's. */
export type BudgetScope = "session" | "turn" | "subagent"

interface Cap {
  readonly scope: BudgetScope
  readonly limit: number
  /** What was spent before the ledger opened (the session's earlier turns). */
  readonly before: number
}

/** What a running turn has spent, its own steps' and its sub-agents' (as they spend). */
export interface Ledger {
  readonly caps: ReadonlyArray<Cap>
  spent: number
  readonly parent: Ledger | undefined
}

/** A cap reached: the turn stops before its next model call. */
export interface BudgetStop {
  readonly scope: BudgetScope
  readonly spent: number
  readonly limit: number
}

/** Whether any cap is set (without one no ledger is kept and nothing is read). */
export const hasBudget = (budget: BudgetConfig) => budget.session !== undefined || budget.turn !== undefined || budget.subagent !== undefined

/**
 * The ledger of a turn starting now: a session's own turn has the session and turn caps (the
 * session's earlier spend, `sessionSpent`, counted in); a sub-agent's turn has the sub-agent cap and
 * answers to its parent's ledger.
 */
export const openLedger = (
  budget: BudgetConfig,
  input: { readonly parent: Ledger | undefined; readonly subAgent: boolean; readonly sessionSpent: number }
): Ledger => {
  const caps: Array<Cap> = []
  if (input.subAgent) {
    if (budget.subagent !== undefined) caps.push({ scope: "subagent", limit: budget.subagent, before: 0 })
  } else {
    if (budget.session !== undefined) caps.push({ scope: "session", limit: budget.session, before: input.sessionSpent })
    if (budget.turn !== undefined) caps.push({ scope: "turn", limit: budget.turn, before: 0 })
  }
  return { caps, spent: 0, parent: input.parent }
}

/** Counts `cost` into the ledger and every ledger above it. */
export const spend = (ledger: Ledger, cost: number) => {
  if (!(cost > 0)) return
  for (let at: Ledger | undefined = ledger; at !== undefined; at = at.parent) at.spent += cost
}

/** The first cap reached, from the turn's own up to its session's; undefined while every one has room. */
export const overBudget = (ledger: Ledger): BudgetStop | undefined => {
  for (let at: Ledger | undefined = ledger; at !== undefined; at = at.parent) {
    for (const cap of at.caps) {
      const spent = cap.before + at.spent
      if (spent >= cap.limit) return { scope: cap.scope, spent, limit: cap.limit }
    }
  }
  return undefined
}

/** Dollars as the stop line shows them: cents, or four places below a cent. */
export const dollars = (amount: number) => `$${amount >= 0.01 || amount === 0 ? amount.toFixed(2) : amount.toFixed(4)}`

const what: Record<BudgetScope, string> = { session: "the session", turn: "the turn", subagent: "the sub-agent" }

/** The line a turn stopped by a cap ends with: what was spent of what, and how to go on. */
export const budgetMessage = (stop: BudgetStop) =>
  `Stopped: ${what[stop.scope]} spent ${dollars(stop.spent)} of its ${dollars(stop.limit)} budget (budget.${stop.scope}${
    stop.scope === "session" ? " or --max-cost" : ""
  }). Raise it to go on.`
