import type { ModelConfig, ModelLimits, ProviderConfig } from "@reins/domain"
import { CATALOGUE_JSON, CATALOGUE_SOURCE } from "./catalogue.snapshot.ts"

/** Dollars per million tokens. */
export interface Price {
  readonly input: number
  readonly output: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
}

/** What a model accepts: tool calls, reasoning (thinking) and images or other files as input. */
export interface Capabilities {
  readonly tools?: boolean
  readonly reasoning?: boolean
  readonly images?: boolean
}

export interface ModelInfo extends ModelLimits, Capabilities {
  readonly price?: Price
}

/** A catalogue entry; `like` names the model its output limit and capabilities were borrowed from. */
export interface CatalogueEntry extends ModelInfo {
  readonly like?: string
}

export { CATALOGUE_SOURCE }

/** What an unknown model gets: a context most servers offer, a modest output budget, tools, and no price. */
export const UNKNOWN_MODEL: ModelInfo = { context: 128_000, output: 8_192 }

/** Where a model's facts came from: the catalogue (maybe under another id), the config alone, or the defaults. */
export type ModelSource =
  | { readonly from: "catalogue"; readonly provider: string; readonly id: string }
  | { readonly from: "config" }
  | { readonly from: "default" }

export interface ModelLookup {
  readonly info: ModelInfo
  readonly source: ModelSource
}

type Table = Readonly<Record<string, CatalogueEntry>>

let parsed: Readonly<Record<string, Table>> | undefined
let aliases: Map<string, ReadonlyMap<string, string>> | undefined

/** The shipped catalogue by provider id (parsed on first use: start-up does not pay for it). */
export const catalogue = (): Readonly<Record<string, Table>> => (parsed ??= JSON.parse(CATALOGUE_JSON) as Record<string, Table>)

/** Providers reins builds in, in the order a model id is looked up across them. */
const SEARCH_ORDER = ["anthropic", "openai", "google", "xai", "mistral", "deepseek", "groq", "amazon-bedrock", "azure", "openrouter"]

const DATED = /-(\d{8}|\d{4}-\d{2}-\d{2})$/
const REGION = /^(us|eu|apac|ap|au|ca|jp|us-gov|global)\./

/** Alias → catalogue id for one provider: the id itself, the id without its date, and Anthropic's `-0` alias of an undated family. */
const aliasesOf = (provider: string): ReadonlyMap<string, string> => {
  aliases ??= new Map()
  const known = aliases.get(provider)
  if (known) return known
  const map = new Map<string, string>()
  const ids = Object.keys(catalogue()[provider] ?? {})
  for (const id of ids) map.set(id, id)
  for (const id of ids) {
    const undated = id.replace(DATED, "")
    if (undated === id) continue
    // ids are sorted, so of two dated models the later (newer) one takes the alias
    if (!ids.includes(undated)) map.set(undated, id)
    if (!ids.includes(`${undated}-0`)) map.set(`${undated}-0`, id)
  }
  aliases.set(provider, map)
  return map
}

/** The forms of an id worth looking up: as given, without a Bedrock region, a date, `-latest`, a vendor prefix, dots in versions. */
const candidates = (modelID: string): ReadonlyArray<string> => {
  const out = new Set<string>()
  const add = (id: string) => {
    out.add(id)
    out.add(id.replace(DATED, ""))
    out.add(id.replace(/-latest$/, ""))
  }
  add(modelID)
  add(modelID.replace(REGION, ""))
  const bare = modelID.slice(modelID.lastIndexOf("/") + 1).replace(/:.*$/, "")
  add(bare)
  // OpenRouter writes claude-sonnet-4.5 where Anthropic writes claude-sonnet-4-5
  if (/^claude-/.test(bare)) add(bare.replace(/(\d)\.(\d)/g, "$1-$2"))
  return [...out]
}

const findIn = (provider: string, ids: ReadonlyArray<string>): string | undefined => {
  const map = aliasesOf(provider)
  for (const id of ids) {
    const hit = map.get(id)
    if (hit !== undefined) return hit
  }
  // a longer id of a known family (`gpt-5-mini-2025-08-07` → `gpt-5-mini`): the longest known start wins
  let best: string | undefined
  for (const alias of map.keys()) {
    if (ids.some((c) => c.startsWith(`${alias}-`)) && (best === undefined || alias.length > best.length)) best = alias
  }
  return best === undefined ? undefined : map.get(best)
}

/** The catalogue entry of a model: the provider's own table first (by its id, then its type), then every table. */
export const findModel = (providerKeys: ReadonlyArray<string>, modelID: string): Found | undefined => {
  // asked at every step: each answer is kept (a miss scans every table)
  const key = `${providerKeys.join(",")} ${modelID}`
  if (found.has(key)) return found.get(key)
  const hit = search(providerKeys, modelID)
  found.set(key, hit)
  return hit
}

type Found = { readonly provider: string; readonly id: string; readonly entry: CatalogueEntry }
const found = new Map<string, Found | undefined>()

const search = (providerKeys: ReadonlyArray<string>, modelID: string): Found | undefined => {
  const ids = candidates(modelID)
  const tables = catalogue()
  const own = providerKeys.filter((k) => tables[k] !== undefined)
  for (const provider of [...own, ...SEARCH_ORDER.filter((p) => !own.includes(p))]) {
    const id = findIn(provider, ids)
    if (id !== undefined) return { provider, id, entry: tables[provider]![id]! }
  }
  return undefined
}

const fromConfig = (configured: ModelConfig): Partial<ModelInfo> => ({
  ...(configured.context !== undefined ? { context: configured.context } : {}),
  ...(configured.output !== undefined ? { output: configured.output } : {}),
  ...(configured.input !== undefined ? { input: configured.input } : {}),
  ...(configured.name !== undefined ? { name: configured.name } : {}),
  ...(configured.tools !== undefined ? { tools: configured.tools } : {}),
  ...(configured.reasoning !== undefined ? { reasoning: configured.reasoning } : {}),
  ...(configured.images !== undefined ? { images: configured.images } : {}),
  ...(configured.price !== undefined
    ? {
        price: {
          input: configured.price.input,
          output: configured.price.output,
          ...(configured.price.cache_read !== undefined ? { cacheRead: configured.price.cache_read } : {}),
          ...(configured.price.cache_write !== undefined ? { cacheWrite: configured.price.cache_write } : {})
        }
      }
    : {})
})

/**
 * A model's limits, price and capabilities: `provider.<id>.models.<model>` in config over the
 * catalogue (looked up by provider, also under a dated or prefixed id), over safe defaults.
 */
export const lookupModel = (provider: ProviderConfig | undefined, modelID: string, providerID?: string): ModelLookup => {
  const keys = [...(providerID !== undefined ? [providerID] : []), ...(provider ? [provider.type] : [])]
  const found = findModel(keys, modelID)
  const configured = provider?.models?.[modelID]
  const known: ModelInfo | undefined = found ? withoutLike(found.entry) : undefined
  const info: ModelInfo = { ...(known ?? UNKNOWN_MODEL), ...(configured ? fromConfig(configured) : {}) }
  const source: ModelSource = found ? { from: "catalogue", provider: found.provider, id: found.id } : configured ? { from: "config" } : { from: "default" }
  return { info, source }
}

const withoutLike = ({ like: _, ...info }: CatalogueEntry): ModelInfo => info

/** Limits, price and capabilities for a model: config first, then the catalogue, then safe defaults. */
export const modelInfo = (provider: ProviderConfig | undefined, modelID: string, providerID?: string): ModelInfo =>
  lookupModel(provider, modelID, providerID).info

/** The warning for a model reins knows nothing about (said once per model). */
export const unknownModelWarning = (ref: { providerID: string; modelID: string }, info: ModelInfo) =>
  `Model ${ref.providerID}/${ref.modelID} is not in reins's catalogue: assuming a ${info.context}-token context, ${info.output}-token output and no price. ` +
  `Set provider.${ref.providerID}.models["${ref.modelID}"] (context, output, price) in reins.json to change that.`

/**
 * Cost in dollars of one step's usage. `input` excludes cached tokens (`toUsage` takes them out:
 * Anthropic reports them apart, OpenAI inside its prompt tokens), so each count is priced once:
 * uncached input at the input price, cache reads and writes at theirs (the input price when unknown).
 */
export const cost = (info: ModelInfo, usage: { input: number; output: number; cacheRead: number; cacheWrite: number }) => {
  const p = info.price
  if (!p) return 0
  return (
    (usage.input * p.input + usage.output * p.output + usage.cacheRead * (p.cacheRead ?? p.input) + usage.cacheWrite * (p.cacheWrite ?? p.input)) / 1_000_000
  )
}
