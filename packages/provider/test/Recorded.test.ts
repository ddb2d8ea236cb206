// Providers whose wire format the testkit's scripted servers do not speak (Gemini, Mistral): a
// recorded stream served over real HTTP proves the key from env, the baseURL and the usage.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import type { ProviderType } from "@reins/domain"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { recordedServer } from "./recorded-server.ts"
import { hi, streamAll, text, withProvider } from "./support.ts"

const serve = recordedServer()

const call = (type: ProviderType, baseURL: string, env: Record<string, string>, modelID: string) =>
  Effect.runPromise(
    streamAll({ model: { providerID: type, modelID }, system: ["test"], messages: hi, tools: [] }).pipe(
      withProvider({ providers: { [type]: { type, baseURL } }, env })
    )
  )
const finish = (events: ReadonlyArray<ModelEvent>) => events.find((e) => e.type === "finish-step") as Extract<ModelEvent, { type: "finish-step" }>

describe("recorded provider streams over HTTP", () => {
  test("Gemini: the key from GOOGLE_GENERATIVE_AI_API_KEY; cached tokens are inside promptTokenCount and priced once at the cache price", async () => {
    const { url, seen } = serve([
      {
        candidates: [{ content: { parts: [{ text: "Hello from Gemini" }], role: "model" }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 10_000, candidatesTokenCount: 500, totalTokenCount: 10_500, cachedContentTokenCount: 8_000 },
        modelVersion: "gemini-2.5-pro"
      }
    ])
    const events = await call("google", `${url}/v1beta`, { GOOGLE_GENERATIVE_AI_API_KEY: "gem-key" }, "gemini-2.5-pro")
    expect(text(events)).toBe("Hello from Gemini")
    expect(seen).toHaveLength(1)
    expect(seen[0]!.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
    expect(seen[0]!.headers.get("x-goog-api-key")).toBe("gem-key")
    const step = finish(events)
    expect(step.usage).toMatchObject({ input: 2_000, cacheRead: 8_000, output: 500 })
    // 2000 × $1.25 + 8000 × $0.125 + 500 × $10, per million
    expect(step.cost).toBeCloseTo((2_000 * 1.25 + 8_000 * 0.125 + 500 * 10) / 1e6, 10)
  })

  test("Mistral: the key from MISTRAL_API_KEY, the request at <baseURL>/chat/completions", async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
      id: "cmpl-1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "mistral-large-latest",
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra
    })
    const { url, seen } = serve([
      chunk({ role: "assistant", content: "" }, null),
      chunk({ content: "Bonjour" }, null),
      chunk({ content: "" }, "stop", { usage: { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 } }),
      "[DONE]"
    ])
    const events = await call("mistral", `${url}/v1`, { MISTRAL_API_KEY: "mis-key" }, "mistral-large-latest")
    expect(text(events)).toBe("Bonjour")
    expect(seen[0]!.path).toBe("/v1/chat/completions")
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer mis-key")
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ model: "mistral-large-latest", stream: true })
    // Mistral Large: $2 in, $6 out
    expect(finish(events).cost).toBeCloseTo((1_000 * 2 + 100 * 6) / 1e6, 10)
  })
})
