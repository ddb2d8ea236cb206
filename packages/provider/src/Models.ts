import type { ModelLimits, ProviderConfig } from "@reins/domain"

/** Dollars per million tokens. */
export interface Price {
  readonly input: number
  readonly output: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
}

export interface ModelInfo extends ModelLimits {
  readonly price?: Price
}

/** Limits and prices of well-known models, shipped with reins (no network at start-up). */
export const CATALOGUE: Readonly<Record<string, ModelInfo>> = {
  "claude-opus-4-1": { context: 200_000, output: 32_000, price: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 } },
  "claude-opus-4-5": { context: 200_000, output: 64_000, price: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
  "claude-sonnet-4-5": { context: 200_000, output: 64_000, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
  "claude-sonnet-4-0": { context: 200_000, output: 64_000, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
  "claude-haiku-4-5": { context: 200_000, output: 64_000, price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
  "gpt-5": { context: 400_000, input: 272_000, output: 128_000, price: { input: 1.25, output: 10, cacheRead: 0.125 } },
  "gpt-5-mini": { context: 400_000, input: 272_000, output: 128_000, price: { input: 0.25, output: 2, cacheRead: 0.025 } },
  "gpt-5-codex": { context: 400_000, input: 272_000, output: 128_000, price: { input: 1.25, output: 10, cacheRead: 0.125 } },
  "gpt-4.1": { context: 1_047_576, output: 32_768, price: { input: 2, output: 8, cacheRead: 0.5 } },
  "gpt-4.1-mini": { context: 1_047_576, output: 32_768, price: { input: 0.4, output: 1.6, cacheRead: 0.1 } },
  "gpt-4o": { context: 128_000, output: 16_384, price: { input: 2.5, output: 10, cacheRead: 1.25 } },
  "gpt-4o-mini": { context: 128_000, output: 16_384, price: { input: 0.15, output: 0.6, cacheRead: 0.075 } },
  o3: { context: 200_000, output: 100_000, price: { input: 2, output: 8, cacheRead: 0.5 } },
  "o4-mini": { context: 200_000, output: 100_000, price: { input: 1.1, output: 4.4, cacheRead: 0.275 } }
}

/** What an unknown model gets: a context most servers offer and a modest output budget. */
export const UNKNOWN_MODEL: ModelInfo = { context: 128_000, output: 8_192 }

/** Limits for a model: config first, then the catalogue (also by a suffix such as `claude-sonnet-4-5-20250929`), then safe defaults. */
export const modelInfo = (provider: ProviderConfig | undefined, modelID: string): ModelInfo => {
  const configured = provider?.models?.[modelID]
  const known = CATALOGUE[modelID] ?? Object.entries(CATALOGUE).find(([id]) => modelID.startsWith(`${id}-`) || modelID.endsWith(`/${id}`))?.[1]
  if (configured) return { ...known, ...configured }
  return known ?? UNKNOWN_MODEL
}

/** Cost in dollars of one step's usage. */
export const cost = (info: ModelInfo, usage: { input: number; output: number; cacheRead: number; cacheWrite: number }) => {
  const p = info.price
  if (!p) return 0
  return (
    (usage.input * p.input + usage.output * p.output + usage.cacheRead * (p.cacheRead ?? p.input) + usage.cacheWrite * (p.cacheWrite ?? p.input)) /
    1_000_000
  )
}
