// Where a provider's key comes from, as reins looks for it (pure): reins.json's apiKey, the environment, the key
// store. The first-run setup and /model use it to put the providers that work first.
import type { Config } from "@reins/domain"
import { BUILT_IN_PROVIDERS, ENV_KEYS, providerConfig, type StoredKeys } from "@reins/provider"

/** The model offered first for a provider type (the one `reins` picks from a key alone, for anthropic and openai). */
export const DEFAULT_MODELS: Readonly<Record<string, string>> = {
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-5",
  google: "gemini-2.5-pro",
  openrouter: "anthropic/claude-sonnet-4",
  mistral: "devstral-medium-2507",
  groq: "moonshotai/kimi-k2-instruct",
  deepseek: "deepseek-chat",
  xai: "grok-4"
}

/** What a key is looked for in. */
export interface KeySources {
  readonly config: Config
  readonly env: Readonly<Record<string, string | undefined>>
  readonly storedKeys: StoredKeys
}

/** Where a provider's key is: reins.json, an environment variable, the key store; undefined when nowhere. */
export const keySource = (s: KeySources, providerID: string): string | undefined => {
  const provider = providerConfig({ providers: s.config.provider ?? {}, env: s.env }, providerID)
  if (provider === undefined) return undefined
  if (provider.apiKey) return "key in reins.json"
  if (provider.type === "amazon-bedrock" && (s.env.AWS_BEARER_TOKEN_BEDROCK || s.env.AWS_ACCESS_KEY_ID)) return "AWS credentials in the environment"
  const variable = ENV_KEYS[provider.type]
  if (variable !== undefined && s.env[variable]) return `key in ${variable}`
  if (s.storedKeys[providerID]?.key) return "key stored"
  return undefined
}

/** The providers, built in or configured, with a key somewhere (`/model` lists their catalogue). */
export const keyedProviders = (s: KeySources): ReadonlySet<string> =>
  new Set([...BUILT_IN_PROVIDERS, ...Object.keys(s.config.provider ?? {})].filter((id) => keySource(s, id) !== undefined))
