import { describe, expect, test } from "bun:test"
import { classify as classifyAt, OVERFLOW_PATTERNS, ProviderError, retryAfterFromHeaders, withoutRuntimeHints } from "../src/ProviderError.ts"
import { retryDelay } from "../src/Retry.ts"
import { modelInfo, UNKNOWN_MODEL } from "../src/Models.ts"

/** At a fixed time: none of these errors carries a retry-after date. */
const classify = (error: unknown) => classifyAt(error, 0)

describe("classify", () => {
  test("overflow messages from several providers", () => {
    expect(OVERFLOW_PATTERNS.length).toBeGreaterThanOrEqual(25)
    for (const message of [
      "prompt is too long: 210000 tokens > 200000 maximum",
      "Your input exceeds the context window of this model",
      "context_length_exceeded",
      "token limit exceeded"
    ]) {
      expect(classify({ statusCode: 400, message, responseBody: "" }).reason).toBe("overflow")
    }
  })
  test("status codes", () => {
    expect(classify({ statusCode: 429, message: "slow down", responseHeaders: { "retry-after": "3" } })).toMatchObject({
      reason: "rate-limit",
      retryAfterMs: 3000
    })
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

describe("messages without runtime hints", () => {
  const BUN_RESET = "ECONNRESET: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()"
  test("Bun's hint for developers is dropped, the rest kept", () => {
    expect(withoutRuntimeHints(BUN_RESET)).toBe("ECONNRESET: The socket connection was closed unexpectedly.")
    expect(withoutRuntimeHints("Unable to connect. Is the computer able to access the url?")).toBe("Unable to connect. Is the computer able to access the url?")
    expect(withoutRuntimeHints("bad field `model`")).toBe("bad field `model`")
  })
  test("classify drops it from every error it maps", () => {
    const reset = Object.assign(new TypeError(BUN_RESET), { code: "ECONNRESET" })
    expect(classify(reset)).toMatchObject({ reason: "transient", message: "ECONNRESET: The socket connection was closed unexpectedly." })
    const broken = { statusCode: 200, message: "Failed to process successful response", isRetryable: true, cause: reset }
    expect(classify(broken)).toMatchObject({
      reason: "transient",
      message: "the response stream broke off: ECONNRESET: The socket connection was closed unexpectedly."
    })
    expect(classify({ statusCode: 502, message: `Cannot connect to API: ${BUN_RESET}` }).message).toBe(
      "Cannot connect to API: ECONNRESET: The socket connection was closed unexpectedly."
    )
  })
  test("a host that does not resolve names the host and says to check baseURL (retried)", () => {
    const cases = [
      Object.assign(new Error("getaddrinfo ENOTFOUND no-such-host.invalid"), { code: "ENOTFOUND" }),
      new Error("Cannot connect to API", { cause: Object.assign(new Error("getaddrinfo ENOTFOUND no-such-host.invalid"), { code: "ENOTFOUND" }) }),
      Object.assign(new Error("getaddrinfo EAI_AGAIN no-such-host.invalid"), { code: "EAI_AGAIN" })
    ]
    for (const error of cases) {
      const mapped = classify(error)
      expect(mapped.reason).toBe("transient")
      expect(mapped.message).toMatch(
        /^could not find the provider's host no-such-host\.invalid \((ENOTFOUND|EAI_AGAIN)\): check baseURL in reins\.json and the network$/
      )
    }
  })
  test("reins' own error wrapped by the SDK comes back as it was", () => {
    const own = new ProviderError({ reason: "transient", message: "the provider sent nothing" })
    expect(classify({ statusCode: 200, message: "Failed to process successful response", cause: own })).toBe(own)
  })
  test("a stream that ended without a finish reason is transient", () => {
    expect(classify(new Error("Response stream ended without a finish reason.")).reason).toBe("transient")
    expect(classify(new Error("No output generated. The model stream ended without a finish chunk.")).reason).toBe("transient")
  })
})
