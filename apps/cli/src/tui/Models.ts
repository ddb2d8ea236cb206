// The models `/model` offers: those configured in reins.json, then the shipped catalogue (pure).
import type { Config, ModelRef } from "@reins/domain"
import { catalogue, modelInfo, providerConfig } from "@reins/provider"

export interface ModelChoice {
  readonly ref: ModelRef
  /** Its context window in tokens. */
  readonly context: number
}

/** The catalogue's providers the picker offers (the others' models are reached with --model or reins.json). */
const PICKER_PROVIDERS = ["anthropic", "openai"]

/** Every model to choose from: each configured provider's models first, then the catalogue's; no duplicates. */
export const modelChoices = (config: Config, current: ModelRef): ReadonlyArray<ModelChoice> => {
  const refs: Array<ModelRef> = [current]
  for (const [providerID, provider] of Object.entries(config.provider ?? {})) {
    for (const modelID of Object.keys(provider.models ?? {})) refs.push({ providerID, modelID })
  }
  for (const providerID of PICKER_PROVIDERS) {
    for (const [modelID, model] of Object.entries(catalogue()[providerID] ?? {})) if (model.tools !== false) refs.push({ providerID, modelID })
  }
  const seen = new Set<string>()
  return refs.flatMap((ref) => {
    const key = `${ref.providerID}/${ref.modelID}`
    if (seen.has(key)) return []
    seen.add(key)
    return [{ ref, context: contextWindow(config, ref) }]
  })
}

/** A model's context window: config, then the catalogue, then the default. */
export const contextWindow = (config: Config, ref: ModelRef) =>
  modelInfo(providerConfig({ providers: config.provider ?? {}, env: {} }, ref.providerID), ref.modelID, ref.providerID).context

export const modelName = (ref: ModelRef) => `${ref.providerID}/${ref.modelID}`

/** The model with its variant, as the footer and notices show it: `provider/model (high)`. */
export const modelLabel = (ref: ModelRef) => (ref.variant === undefined ? modelName(ref) : `${modelName(ref)} (${ref.variant})`)
