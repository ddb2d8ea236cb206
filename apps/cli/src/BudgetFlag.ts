// `--max-cost USD`: the most the session may spend, in dollars at the model's prices (its sub-agents
// included), for this run: it sets `budget.session` over what reins.json says.
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import type { Config } from "@reins/domain"
import { usage } from "./CliError.ts"

export const maxCostFlag = Flag.Finite("max-cost").pipe(
  Flag.withDescription("The most the session may spend, in dollars at the model's prices, sub-agents included (over budget.session in reins.json)"),
  Flag.optional
)

/** The config with `--max-cost` as the session's budget; a cap that is not a positive amount is a usage error. */
export const withMaxCost = (config: Config, flag: Option.Option<number> | number | undefined) => {
  const amount = Option.isOption(flag) ? Option.getOrUndefined(flag) : flag
  if (amount === undefined) return Effect.succeed(config)
  if (!(amount > 0)) return Effect.fail(usage(`--max-cost takes a positive amount of dollars (e.g. --max-cost 2.50), not ${amount}`))
  return Effect.succeed({ ...config, budget: { ...config.budget, session: amount } } satisfies Config)
}
