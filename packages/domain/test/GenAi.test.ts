import { describe, expect, test } from "bun:test"
import { ProviderType, captureContentFromEnv, providerName, serverAttributes, usageAttributes } from "../src/index.ts"

describe("GenAI conventions", () => {
  test("gen_ai.provider.name: the conventions' well-known value for every provider type", () => {
    const names = Object.fromEntries(ProviderType.literals.map((type) => [type, providerName(type)]))
    expect(names).toEqual({
      "openai-compatible": "openai",
      openai: "openai",
      anthropic: "anthropic",
      google: "gcp.gemini",
      "amazon-bedrock": "aws.bedrock",
      azure: "azure.ai.openai",
      openrouter: "openrouter",
      mistral: "mistral_ai",
      groq: "groq",
      deepseek: "deepseek",
      xai: "x_ai"
    })
  })

  test("server.address and server.port from a request URL, the scheme's port when it names none", () => {
    expect(serverAttributes("https://api.anthropic.com/v1/messages")).toEqual({ "server.address": "api.anthropic.com", "server.port": 443 })
    expect(serverAttributes("http://127.0.0.1:11434/v1/chat/completions")).toEqual({ "server.address": "127.0.0.1", "server.port": 11434 })
    expect(serverAttributes("http://[::1]/v1")).toEqual({ "server.address": "::1", "server.port": 80 })
    expect(serverAttributes("not a url")).toEqual({})
  })

  test("gen_ai.usage.input_tokens counts cached tokens; cache and reasoning counts apart", () => {
    expect(usageAttributes({ input: 10, output: 5, reasoning: 2, cacheRead: 30, cacheWrite: 4 })).toEqual({
      "gen_ai.usage.input_tokens": 44,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.usage.cache_read.input_tokens": 30,
      "gen_ai.usage.cache_creation.input_tokens": 4,
      "gen_ai.usage.reasoning.output_tokens": 2
    })
  })

  test("content capture only for OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true", () => {
    for (const on of ["true", "TRUE", " true "]) expect(captureContentFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: on })).toBe(true)
    for (const off of [undefined, "", "false", "1", "yes"])
      expect(captureContentFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: off })).toBe(false)
  })
})
