// The models `/model` offers: those configured in reins.json, then the catalogue's models of the providers that have
// a key (pure). A provider without a key is left out: its models would only fail (reins auth login adds one).
import type { Config, ModelRef } from "@reins/domain"
import { BUILT_IN_PROVIDERS, catalogue, modelInfo, providerConfig } from "@reins/provider"

export interface ModelChoice {
  readonly ref: ModelRef
  /** Its context window in tokens. */
  readonly context: number
}

/**
 * Every model to choose from, no duplicates: the current one, each configured provider's models, then the
 * catalogue's tool-capable models of the providers `keyed` holds (a key in reins.json, the environment or the
 * key store) — a configured provider of a built-in type with a key lists its type's catalogue too.
 */
export const modelChoices = (config: Config, current: ModelRef, keyed: ReadonlySet<string>): ReadonlyArray<ModelChoice> => {
  const refs: Array<ModelRef> = [current]
  for (const [providerID, provider] of Object.entries(config.provider ?? {})) {
    for (const modelID of Object.keys(provider.models ?? {})) refs.push({ providerID, modelID })
  }
  const withKeys = [...Object.keys(config.provider ?? {}), ...BUILT_IN_PROVIDERS].filter((id) => keyed.has(id))
  for (const providerID of withKeys) {
    const type = providerConfig({ providers: config.provider ?? {}, env: {} }, providerID)?.type
    if (type === undefined || type === "openai-compatible") continue
    for (const [modelID, model] of Object.entries(catalogue()[type] ?? {})) if (model.tools !== false) refs.push({ providerID, modelID })
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
