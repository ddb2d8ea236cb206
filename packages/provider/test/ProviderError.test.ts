import { describe, expect, test } from "bun:test"
import { classify, OVERFLOW_PATTERNS, ProviderError, retryAfterFromHeaders } from "../src/ProviderError.ts"
import { retryDelay } from "../src/Retry.ts"
import { modelInfo, UNKNOWN_MODEL } from "../src/Models.ts"

describe("classify", () => {
  test("overflow messages from several providers", () => {
    expect(OVERFLOW_PATTERNS.length).toBeGreaterThanOrEqual(25)
    for (const message of ["prompt is too long: 210000 tokens > 200000 maximum", "Your input exceeds the context window of this model", "context_length_exceeded", "token limit exceeded"]) {
      expect(classify({ statusCode: 400, message, responseBody: "" }).reason).toBe("overflow")
    }
  })
  test("status codes", () => {
    expect(classify({ statusCode: 429, message: "slow down", responseHeaders: { "retry-after": "3" } })).toMatchObject({ reason: "rate-limit", retryAfterMs: 3000 })
    expect(classify({ statusCode: 502, message: "bad gateway" }).reason).toBe("transient")
    expect(classify({ statusCode: 403, message: "no" }).reason).toBe("auth")
    expect(classify({ statusCode: 400, message: "bad field" }).reason).toBe("invalid")
    expect(classify(new Error("fetch failed: ECONNREFUSED")).reason).toBe("transient")
  })
})

describe("retry timing", () => {
  test("retry-after-ms wins, then retry-after seconds or date", () => {
    expect(retryAfterFromHeaders({ "retry-after-ms": "250", "retry-after": "9" }, 0)).toBe(250)
    expect(retryAfterFromHeaders({ "Retry-After": "2" }, 0)).toBe(2000)
    expect(retryAfterFromHeaders({ "retry-after": new Date(10_000).toUTCString() }, 4_000)).toBe(6000)
    expect(retryAfterFromHeaders({}, 0)).toBeUndefined()
  })
  test("exponential backoff capped, with jitter", () => {
    const policy = { attempts: 5, initialDelayMs: 2000, maxDelayMs: 30000 }
    const e = new ProviderError({ reason: "transient", message: "x" })
    expect(retryDelay(e, 1, policy, () => 0.5)).toBe(2000)
    expect(retryDelay(e, 3, policy, () => 0.5)).toBe(8000)
    expect(retryDelay(e, 10, policy, () => 0.5)).toBe(30000)
    expect(retryDelay(e, 1, policy, () => 0)).toBe(1600)
  })
})

describe("catalogue", () => {
  test("config overrides, dated ids, unknown defaults", () => {
    expect(modelInfo(undefined, "claude-sonnet-4-5-20250929").context).toBe(200_000)
    expect(modelInfo({ type: "openai-compatible", models: { x: { context: 8000, output: 1000 } } }, "x")).toMatchObject({ context: 8000 })
    expect(modelInfo(undefined, "my-local-model")).toEqual(UNKNOWN_MODEL)
  })
})
