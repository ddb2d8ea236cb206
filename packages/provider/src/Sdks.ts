// Which AI SDK package serves each provider type, the environment its credentials come from, and
// how a model is made. T21: a package is imported only when its provider is first used.
import type { LanguageModel } from "ai"
import type { ModelRef, ProviderConfig, ProviderType } from "@reins/domain"
import type { StoredKeys } from "./AuthStore.ts"

type Env = Readonly<Record<string, string | undefined>>
type Fetch = typeof globalThis.fetch

/** Provider types usable without configuration (`<type>/<model>`); openai-compatible needs a baseURL. */
export const BUILT_IN_PROVIDERS: ReadonlyArray<ProviderType> = [
  "anthropic",
  "openai",
  "google",
  "amazon-bedrock",
  "azure",
  "openrouter",
  "mistral",
  "groq",
  "deepseek",
  "xai"
]

/** Environment variables that hold each provider type's API key (Bedrock: AWS credentials, see `credentials`). */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
  azure: "AZURE_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  mistral: "MISTRAL_API_KEY",
  groq: "GROQ_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  xai: "XAI_API_KEY"
}

/** The npm package behind each type: what `reins models` and errors name. */
export const SDK_PACKAGES: Readonly<Record<ProviderType, string>> = {
  anthropic: "@ai-sdk/anthropic",
  openai: "@ai-sdk/openai",
  "openai-compatible": "@ai-sdk/openai-compatible",
  google: "@ai-sdk/google",
  "amazon-bedrock": "@ai-sdk/amazon-bedrock",
  azure: "@ai-sdk/azure",
  openrouter: "@openrouter/ai-sdk-provider",
  mistral: "@ai-sdk/mistral",
  groq: "@ai-sdk/groq",
  deepseek: "@ai-sdk/deepseek",
  xai: "@ai-sdk/xai"
}

/** What a provider needs to make a model, read from config and env before any SDK is loaded. */
export type Credentials =
  | { readonly type: "key"; readonly apiKey: string | undefined }
  | { readonly type: "azure"; readonly apiKey: string; readonly resourceName: string | undefined }
  | {
      readonly type: "aws"
      readonly region: string
      readonly bearer: string | undefined
      readonly accessKeyId: string | undefined
      readonly secretAccessKey: string | undefined
      readonly sessionToken: string | undefined
    }

const set = (value: string | undefined) => (value !== undefined && value.trim() !== "" ? value : undefined)

/**
 * A provider's credentials, or a one-line message naming what is missing. The environment is the
 * runtime's `env` option (the CLI passes its own); nothing here reads `process.env`. A key is looked
 * for in reins.json's `apiKey`, then the environment, then the keys stored by `reins auth login`.
 */
export const credentials = (providerID: string, config: ProviderConfig, env: Env, stored: StoredKeys = {}): Credentials | string => {
  const where = `"apiKey" for provider "${providerID}" in reins.json, or run reins auth login ${providerID}`
  const saved = set(stored[providerID]?.key)
  switch (config.type) {
    case "openai-compatible":
      return config.baseURL
        ? { type: "key", apiKey: set(config.apiKey) ?? saved }
        : `Provider "${providerID}" needs "baseURL" in reins.json (e.g. http://127.0.0.1:11434/v1 for Ollama).`
    case "amazon-bedrock": {
      const region = set(env.AWS_REGION) ?? set(env.AWS_DEFAULT_REGION)
      if (!region) return `No AWS region for ${providerID}: set AWS_REGION (e.g. us-east-1).`
      const bearer = set(config.apiKey) ?? set(env.AWS_BEARER_TOKEN_BEDROCK)
      const accessKeyId = set(env.AWS_ACCESS_KEY_ID)
      const secretAccessKey = set(env.AWS_SECRET_ACCESS_KEY)
      if (!bearer && !accessKeyId) return `No AWS credentials for ${providerID}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK.`
      if (!bearer && !secretAccessKey) return `No AWS secret for ${providerID}: set AWS_SECRET_ACCESS_KEY (AWS_ACCESS_KEY_ID is set).`
      return { type: "aws", region, bearer, accessKeyId, secretAccessKey, sessionToken: set(env.AWS_SESSION_TOKEN) }
    }
    case "azure": {
      const apiKey = set(config.apiKey) ?? set(env.AZURE_API_KEY) ?? saved
      if (!apiKey) return `No API key for ${providerID}: set AZURE_API_KEY or ${where}.`
      const resourceName = set(env.AZURE_RESOURCE_NAME)
      if (!resourceName && !config.baseURL)
        return `No Azure resource for ${providerID}: set AZURE_RESOURCE_NAME or "baseURL" for provider "${providerID}" in reins.json.`
      return { type: "azure", apiKey, resourceName }
    }
    default: {
      const key = ENV_KEYS[config.type]
      const apiKey = set(config.apiKey) ?? (key ? set(env[key]) : undefined) ?? saved
      return apiKey ? { type: "key", apiKey } : `No API key for ${providerID}: set ${key} or ${where}.`
    }
  }
}

/** The problem that stops a provider being used, if any (for a check before any request). */
export const missingCredentials = (providerID: string, config: ProviderConfig, env: Env, stored: StoredKeys = {}): string | undefined => {
  const c = credentials(providerID, config, env, stored)
  return typeof c === "string" ? c : undefined
}

/** Imports the provider's SDK package and returns a maker of the model around a given fetch. */
export const loadSdk = async (ref: ModelRef, config: ProviderConfig, creds: Credentials): Promise<(fetch: Fetch) => LanguageModel> => {
  const apiKey = creds.type === "aws" ? undefined : creds.apiKey
  const common = { ...(config.baseURL ? { baseURL: config.baseURL } : {}), ...(config.headers ? { headers: config.headers } : {}) }
  const keyed = { ...common, apiKey }
  switch (config.type) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic")
      return (fetch) => createAnthropic({ ...keyed, fetch })(ref.modelID)
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai")
      return (fetch) => createOpenAI({ ...keyed, fetch })(ref.modelID)
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible")
      const compatible = {
        name: ref.providerID,
        baseURL: config.baseURL ?? "",
        includeUsage: true,
        ...(apiKey ? { apiKey } : {}),
        ...(config.headers ? { headers: config.headers } : {})
      }
      return (fetch) => createOpenAICompatible({ ...compatible, fetch })(ref.modelID)
    }
    case "google": {
      const { createGoogle } = await import("@ai-sdk/google")
      return (fetch) => createGoogle({ ...keyed, fetch })(ref.modelID)
    }
    case "amazon-bedrock": {
      const { createAmazonBedrock } = await import("@ai-sdk/amazon-bedrock")
      const aws = creds.type === "aws" ? creds : undefined
      // credentials passed explicitly: the SDK would otherwise read process.env
      const auth = aws?.bearer
        ? { apiKey: aws.bearer }
        : {
            apiKey: "",
            credentialProvider: async () => ({
              accessKeyId: aws?.accessKeyId ?? "",
              secretAccessKey: aws?.secretAccessKey ?? "",
              ...(aws?.sessionToken ? { sessionToken: aws.sessionToken } : {})
            })
          }
      const region = aws?.region
      return (fetch) => createAmazonBedrock({ ...common, ...(region ? { region } : {}), ...auth, fetch })(ref.modelID)
    }
    case "azure": {
      const { createAzure } = await import("@ai-sdk/azure")
      const resource = creds.type === "azure" && creds.resourceName && !config.baseURL ? { resourceName: creds.resourceName } : {}
      return (fetch) => createAzure({ ...keyed, ...resource, fetch })(ref.modelID)
    }
    case "openrouter": {
      const { createOpenRouter } = await import("@openrouter/ai-sdk-provider")
      return (fetch) => createOpenRouter({ ...keyed, fetch })(ref.modelID)
    }
    case "mistral": {
      const { createMistral } = await import("@ai-sdk/mistral")
      return (fetch) => createMistral({ ...keyed, fetch })(ref.modelID)
    }
    case "groq": {
      const { createGroq } = await import("@ai-sdk/groq")
      return (fetch) => createGroq({ ...keyed, fetch })(ref.modelID)
    }
    case "deepseek": {
      const { createDeepSeek } = await import("@ai-sdk/deepseek")
      return (fetch) => createDeepSeek({ ...keyed, fetch })(ref.modelID)
    }
    case "xai": {
      const { createXai } = await import("@ai-sdk/xai")
      return (fetch) => createXai({ ...keyed, fetch })(ref.modelID)
    }
  }
}
