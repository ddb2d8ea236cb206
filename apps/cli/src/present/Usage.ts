import { cacheHitRate as hitRate, type Usage } from "@reins/domain"
import { plain, type Style } from "./Style.ts"
import { cost, duration, plural, tokens } from "./Units.ts"

/** Tokens and cost summed over steps (a turn, a session). */
export interface UsageTotals {
  readonly steps: number
  /** Prompt tokens not read from or written to the cache (reins' `Usage.input`). */
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number
}

export const emptyTotals: UsageTotals = { steps: 0, input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 }

/** The totals with one more step's usage and cost added. */
export const addStep = (totals: UsageTotals, usage: Usage, stepCost: number): UsageTotals => ({
  steps: totals.steps + 1,
  input: totals.input + usage.input,
  output: totals.output + usage.output,
  reasoning: totals.reasoning + usage.reasoning,
  cacheRead: totals.cacheRead + usage.cacheRead,
  cacheWrite: totals.cacheWrite + usage.cacheWrite,
  cost: totals.cost + stepCost
})

/** The sum of assistant messages' usage and cost (one message per step). */
export const sumUsage = (messages: ReadonlyArray<{ readonly usage: Usage; readonly cost: number }>): UsageTotals =>
  messages.reduce((totals, m) => addStep(totals, m.usage, m.cost), emptyTotals)

/** Every prompt token the model read: uncached input plus cache reads and writes. */
export const promptTokens = (t: Pick<UsageTotals, "input" | "cacheRead" | "cacheWrite">): number => t.input + t.cacheRead + t.cacheWrite

/**
 * The share of prompt tokens read from the provider's cache (cache read ÷ all prompt tokens, as reins'
 * `input` excludes cached tokens); undefined when the provider reported no cache tokens at all.
 */
export const cacheHitRate = (t: Pick<UsageTotals, "input" | "cacheRead" | "cacheWrite">): number | undefined => hitRate(t)

/** `cache 12k read / 3.1k written (84%)`; undefined when the provider reported no cache tokens. */
export const cacheLine = (t: Pick<UsageTotals, "input" | "cacheRead" | "cacheWrite">): string | undefined => {
  const rate = hitRate(t)
  return rate === undefined ? undefined : `cache ${tokens(t.cacheRead)} read / ${tokens(t.cacheWrite)} written (${percent(rate)})`
}

/** `84%`. */
export const percent = (rate: number): string => `${Math.round(rate * 100)}%`

/**
 * The closing line of a turn:
 * `3 steps · 12.4k in / 830 out · $0.0123 · cache 84% · 5.2s` (cache only when reported, time when given).
 */
export const usageLine = (t: UsageTotals, style: Style = plain, wallMs?: number): string => {
  const rate = cacheHitRate(t)
  const parts = [
    plural(t.steps, "step", "steps"),
    `${tokens(promptTokens(t))} in / ${tokens(t.output)} out`,
    cost(t.cost),
    ...(rate === undefined ? [] : [`cache ${percent(rate)}`]),
    ...(wallMs === undefined ? [] : [duration(wallMs)])
  ]
  return style.dim(parts.join(` ${style.glyphs.dot} `))
}
