import { afterEach, describe, expect, test } from "bun:test"
import * as path from "node:path"
import { Effect } from "effect"
import type { ProviderConfig, ProviderType } from "@reins/domain"
import { startScriptedServer, type ScriptedServer } from "@reins/testkit"
import { providerConfig, type ProviderSettings } from "../src/Provider.ts"
import { credentials, missingCredentials } from "../src/Sdks.ts"
import { hi, streamAll, text, withProvider } from "./support.ts"

describe("credentials come from the runtime's env, and a missing one is named", () => {
  const missing = (providerID: string, env: Record<string, string> = {}, config?: ProviderConfig) =>
    missingCredentials(providerID, config ?? providerConfig({ providers: {}, env }, providerID)!, env)

  test.each([
    ["anthropic", 'No API key for anthropic: set ANTHROPIC_API_KEY or "apiKey" for provider "anthropic" in reins.json, or run reins auth login anthropic.'],
    ["openai", 'No API key for openai: set OPENAI_API_KEY or "apiKey" for provider "openai" in reins.json, or run reins auth login openai.'],
    ["google", 'No API key for google: set GOOGLE_GENERATIVE_AI_API_KEY or "apiKey" for provider "google" in reins.json, or run reins auth login google.'],
    [
      "openrouter",
      'No API key for openrouter: set OPENROUTER_API_KEY or "apiKey" for provider "openrouter" in reins.json, or run reins auth login openrouter.'
    ],
    ["mistral", 'No API key for mistral: set MISTRAL_API_KEY or "apiKey" for provider "mistral" in reins.json, or run reins auth login mistral.'],
    ["groq", 'No API key for groq: set GROQ_API_KEY or "apiKey" for provider "groq" in reins.json, or run reins auth login groq.'],
    ["deepseek", 'No API key for deepseek: set DEEPSEEK_API_KEY or "apiKey" for provider "deepseek" in reins.json, or run reins auth login deepseek.'],
    ["xai", 'No API key for xai: set XAI_API_KEY or "apiKey" for provider "xai" in reins.json, or run reins auth login xai.'],
    ["azure", 'No API key for azure: set AZURE_API_KEY or "apiKey" for provider "azure" in reins.json, or run reins auth login azure.'],
    ["amazon-bedrock", "No AWS region for amazon-bedrock: set AWS_REGION (e.g. us-east-1)."]
  ])("%s without its key", (providerID, message) => {
    expect(missing(providerID)).toBe(message)
  })

  test("each is satisfied by its own variable, not another provider's", () => {
    expect(missing("google", { GOOGLE_GENERATIVE_AI_API_KEY: "g" })).toBeUndefined()
    expect(missing("google", { GEMINI_API_KEY: "g", OPENAI_API_KEY: "o" })).toContain("GOOGLE_GENERATIVE_AI_API_KEY")
    expect(missing("xai", { XAI_API_KEY: " " })).toContain("XAI_API_KEY")
    expect(missing("groq", {}, { type: "groq", apiKey: "from-config" })).toBeUndefined()
  })

  test("Azure needs its resource name (or a baseURL); Bedrock its region and keys (or a bearer token)", () => {
    expect(missing("azure", { AZURE_API_KEY: "a" })).toBe(
      'No Azure resource for azure: set AZURE_RESOURCE_NAME or "baseURL" for provider "azure" in reins.json.'
    )
    expect(missing("azure", { AZURE_API_KEY: "a", AZURE_RESOURCE_NAME: "r" })).toBeUndefined()
    expect(missing("azure", { AZURE_API_KEY: "a" }, { type: "azure", baseURL: "https://gw.example/openai" })).toBeUndefined()
    expect(missing("amazon-bedrock", { AWS_REGION: "us-east-1" })).toBe(
      "No AWS credentials for amazon-bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK."
    )
    expect(missing("amazon-bedrock", { AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "id" })).toBe(
      "No AWS secret for amazon-bedrock: set AWS_SECRET_ACCESS_KEY (AWS_ACCESS_KEY_ID is set)."
    )
    expect(
      credentials(
        "amazon-bedrock",
        { type: "amazon-bedrock" },
        { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "s", AWS_SESSION_TOKEN: "t" }
      )
    ).toEqual({
      type: "aws",
      region: "eu-west-1",
      bearer: undefined,
      accessKeyId: "id",
      secretAccessKey: "s",
      sessionToken: "t"
    })
    expect(missing("amazon-bedrock", { AWS_DEFAULT_REGION: "us-west-2", AWS_BEARER_TOKEN_BEDROCK: "b" })).toBeUndefined()
  })

  test("an openai-compatible provider needs a baseURL, not a key", () => {
    expect(missing("local", {}, { type: "openai-compatible" })).toBe(
      'Provider "local" needs "baseURL" in reins.json (e.g. http://127.0.0.1:11434/v1 for Ollama).'
    )
    expect(missing("local", {}, { type: "openai-compatible", baseURL: "http://127.0.0.1:1/v1" })).toBeUndefined()
  })
})

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const call = (settings: ProviderSettings, providerID: string, modelID: string) =>
  Effect.runPromise(streamAll({ model: { providerID, modelID }, system: ["test"], messages: hi, tools: [] }).pipe(Effect.result, withProvider(settings)))

describe("providers that speak OpenAI's wire format reach the scripted server (baseURL override), keyed from env", () => {
  test.each([
    ["groq", "GROQ_API_KEY"],
    ["deepseek", "DEEPSEEK_API_KEY"],
    ["openrouter", "OPENROUTER_API_KEY"],
    ["azure", "AZURE_API_KEY"]
  ])("%s", async (type, variable) => {
    server = await startScriptedServer([{ text: `hello from ${type}` }])
    const settings: ProviderSettings = { providers: { [type]: { type: type as ProviderType, baseURL: server.url } }, env: { [variable]: `key-of-${type}` } }
    const r = await call(settings, type, "some-model")
    if (r._tag !== "Success") throw new Error(String(r.failure))
    expect(text(r.success)).toBe(`hello from ${type}`)
    expect(server.requests).toHaveLength(1)
    // Azure sends its key as api-key, the others as a bearer token
    if (type === "azure") expect(server.requests[0]!.headers["api-key"]).toBe("key-of-azure")
    else expect(server.requests[0]!.headers.authorization).toBe(`Bearer key-of-${type}`)
    expect(JSON.stringify(server.requests[0]!.body)).toContain("some-model")
  })

  test("a missing key fails the call with the variable's name before any request", async () => {
    server = await startScriptedServer([{ text: "never" }])
    const r = await call({ providers: { groq: { type: "groq", baseURL: server.url } }, env: {} }, "groq", "llama-3.3-70b-versatile")
    expect(r._tag).toBe("Failure")
    if (r._tag === "Failure")
      expect(r.failure).toMatchObject({
        reason: "auth",
        message: 'No API key for groq: set GROQ_API_KEY or "apiKey" for provider "groq" in reins.json, or run reins auth login groq.'
      })
    expect(server.requests).toHaveLength(0)
  })
})

/** The SDK packages a fresh process has loaded after one call with a provider of this type. */
const loadedFor = async (type: string) => {
  const proc = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "loaded-sdks.ts"), type, "http://127.0.0.1:9/v1"], { stdout: "pipe", stderr: "pipe" })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const line = out.split("\n").find((l) => l.startsWith("LOADED "))
  if (!line) throw new Error(`no LOADED line: ${out}${await new Response(proc.stderr).text()}`)
  return JSON.parse(line.slice("LOADED ".length)) as Array<string>
}

describe("T21: a provider's SDK is imported only when it is used", () => {
  test.each([
    ["anthropic", ["@ai-sdk/anthropic"]],
    ["google", ["@ai-sdk/google"]],
    ["openrouter", ["@openrouter/ai-sdk-provider"]]
  ])("a call through %s loads %p and no other provider package", async (type, expected) => {
    expect(await loadedFor(type)).toEqual(expected)
  })
})
