import { Box, Text, useWindowSize } from "ink"
import { stripAnsi } from "../../present/Style.ts"
import { cacheHitRate, percent } from "../../present/Usage.ts"
import { cost, tokens } from "../../present/Units.ts"
import type { TranscriptUsage } from "./State.ts"
import { useTheme } from "./Theme.ts"

/** What the footer shows. */
export interface FooterInfo {
  /** The model, as `provider/model`. */
  readonly model: string
  /** The model's context window in tokens, when known. */
  readonly contextWindow?: number
  readonly usage: TranscriptUsage
  readonly cwd: string
  readonly branch?: string
  /** Shown as `~` at the start of `cwd`. */
  readonly home?: string
  /** The session's budget in dollars (`budget.session`, `--max-cost`): what is left of it is shown beside the cost. */
  readonly budget?: number
  /** Background jobs running (`/jobs` lists them). */
  readonly jobs?: number
}

/** The footer's figures as plain parts: model, context, session tokens and cost, cache, place. */
export const footerParts = (info: FooterInfo): { readonly left: ReadonlyArray<string>; readonly right: string } => {
  const u = info.usage
  const context =
    info.contextWindow !== undefined && info.contextWindow > 0
      ? `context ${tokens(u.contextTokens)}/${tokens(info.contextWindow)} (${percent(u.contextTokens / info.contextWindow)})`
      : `context ${tokens(u.contextTokens)}`
  const rate = cacheHitRate(u)
  const left = [
    info.model,
    context,
    `session ${tokens(u.input + u.cacheRead + u.cacheWrite)} in / ${tokens(u.output)} out`,
    info.budget === undefined ? cost(u.cost) : `${cost(u.cost)} (${u.cost >= info.budget ? "budget spent" : `${cost(info.budget - u.cost)} left`})`,
    ...(rate === undefined ? [] : [`cache ${percent(rate)}`]),
    ...(info.jobs !== undefined && info.jobs > 0 ? [`${info.jobs} job${info.jobs === 1 ? "" : "s"} running`] : [])
  ]
  const home = info.home
  const cwd = home !== undefined && home !== "" && (info.cwd === home || info.cwd.startsWith(`${home}/`)) ? `~${info.cwd.slice(home.length)}` : info.cwd
  return { left, right: info.branch ? `${cwd} (${info.branch})` : cwd }
}

/**
 * One line under the prompt: the figures on the left, the directory and branch on the right; two
 * lines when the terminal is too narrow for both.
 */
export const Footer = ({ info, width }: { info: FooterInfo; width?: number }) => {
  const { style } = useTheme()
  const size = useWindowSize()
  const columns = width ?? size.columns
  const { left, right } = footerParts(info)
  const window = info.contextWindow
  const share = window !== undefined && window > 0 ? info.usage.contextTokens / window : 0
  // the context figure turns yellow, then red, as the window fills (compaction comes near the end)
  const paintContext = share >= 0.85 ? style.red : share >= 0.6 ? style.yellow : style.dim
  const sep = style.dim(` ${style.glyphs.dot} `)
  const shown = left
    .map((part, i) => (i === 0 ? style.cyan(part) : i === 1 ? paintContext(part) : part.endsWith(" running") ? style.yellow(part) : style.dim(part)))
    .join(sep)
  if (Bun.stringWidth(stripAnsi(shown)) + 2 + Bun.stringWidth(right) > columns) {
    return (
      <Box flexDirection="column">
        <Text wrap="truncate-end">{shown}</Text>
        <Text wrap="truncate-start">{style.dim(right)}</Text>
      </Box>
    )
  }
  return (
    <Box flexDirection="row" justifyContent="space-between">
      <Box flexShrink={1}>
        <Text wrap="truncate-end">{shown}</Text>
      </Box>
      <Box flexShrink={2} marginLeft={2}>
        <Text wrap="truncate-start">{style.dim(right)}</Text>
      </Box>
    </Box>
  )
}
