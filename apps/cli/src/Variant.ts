import { Effect } from "effect"
import type { ModelRef } from "@reins/domain"
import { callOptions, providerConfig } from "@reins/provider"
import { usage } from "./CliError.ts"
import type { Setup } from "./Setup.ts"

/**
 * The model with the variant asked for (`--variant`), checked against the model's variants with the
 * config's `variant` defaults too: an unknown one is a usage error (exit 2) naming the known ones,
 * before any request (T22).
 */
export const withVariant = (setup: Setup, model: ModelRef, flag: string | undefined) =>
  Effect.gen(function* () {
    const chosen: ModelRef = flag !== undefined ? { ...model, variant: flag } : model
    const config = providerConfig({ providers: setup.config.provider ?? {}, env: setup.env }, model.providerID)
    if (config === undefined) return chosen
    const checked = callOptions(chosen, config, setup.config.variant)
    if (checked._tag === "UnknownVariant") return yield* usage(checked.message.replace(/\.$/, ""))
    return chosen
  })
