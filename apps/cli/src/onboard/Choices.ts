// What the first-run setup offers (pure): the providers — those ready to use first — and a provider's models,
// a sensible default first.
import type { Config } from "@reins/domain"
import { catalogue, ENV_KEYS, providerConfig } from "@reins/provider"
import { DEFAULT_MODELS, keySource, type KeySources } from "../KeySources.ts"
import type { LocalServer } from "./LocalServers.ts"

/** A provider the setup offers. */
export interface ProviderChoice {
  readonly id: string
  /** What the list shows beside it: where its key is, or that it is local. */
  readonly detail: string
  /** Whether it works without a key being typed (a key in the environment, stored or in reins.json; a local server). */
  readonly ready: boolean
  /** Whether a key is asked for when it is not ready. */
  readonly needsKey: boolean
  /** A local server found on this machine: configured as an openai-compatible provider when chosen. */
  readonly local?: LocalServer
}

/** The built-in providers a key alone sets up (Bedrock and Azure need more: see `reins auth login --help`). */
export const KEY_PROVIDERS = ["anthropic", "openai", "google", "openrouter", "mistral", "groq", "deepseek", "xai"] as const

/** Every provider to choose from: ready ones first (a key somewhere, a local server, a configured endpoint), then the rest. */
export const providerChoices = (s: KeySources, local: ReadonlyArray<LocalServer>): ReadonlyArray<ProviderChoice> => {
  const configured = Object.entries(s.config.provider ?? {})
  const choices: Array<ProviderChoice> = []
  for (const [id, provider] of configured) {
    const source = keySource(s, id)
    // an openai-compatible endpoint (a local server, a proxy) may need no key at all
    const open = provider.type === "openai-compatible"
    choices.push({
      id,
      detail: source ?? (open ? `configured, ${provider.baseURL ?? "no baseURL"}` : "configured, no key yet"),
      ready: source !== undefined || open,
      needsKey: !open
    })
  }
  for (const server of local) {
    if (choices.some((c) => c.id === server.id)) continue
    const count = `${server.models.length} model${server.models.length === 1 ? "" : "s"}`
    choices.push({ id: server.id, detail: `${server.name} running at ${server.baseURL} (${count})`, ready: true, needsKey: false, local: server })
  }
  for (const id of KEY_PROVIDERS) {
    if (choices.some((c) => c.id === id)) continue
    const source = keySource(s, id)
    choices.push({ id, detail: source ?? `paste an API key (or set ${ENV_KEYS[id]})`, ready: source !== undefined, needsKey: true })
  }
  return [...choices.filter((c) => c.ready), ...choices.filter((c) => !c.ready)]
}

/** A provider's models, the default first: a local server's, the configured ones, then its type's catalogue (tool-capable, newest names first). */
export const modelChoices = (config: Config, choice: ProviderChoice): ReadonlyArray<string> => {
  if (choice.local !== undefined) return choice.local.models
  const provider = providerConfig({ providers: config.provider ?? {}, env: {} }, choice.id)
  if (provider === undefined) return []
  const own = Object.keys(provider.models ?? {})
  const shipped =
    provider.type === "openai-compatible"
      ? []
      : Object.entries(catalogue()[provider.type] ?? {})
          .filter(([, info]) => info.tools !== false)
          .map(([id]) => id)
          .reverse()
  const preferred = DEFAULT_MODELS[provider.type]
  const all = [...own, ...(preferred !== undefined && shipped.includes(preferred) ? [preferred] : []), ...shipped]
  return [...new Set(all)]
}
