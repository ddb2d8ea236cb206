import { Schema } from "effect"

/**
 * `unreachable`: nothing listens at a local server's address; retrying would only wait. `too-long`: one answer grew past
 * what a step takes without ending (a provider that never finishes); retrying would only do it again.
 */
export const ErrorReason = Schema.Literals(["overflow", "rate-limit", "transient", "auth", "invalid", "unreachable", "too-long"])
export type ErrorReason = typeof ErrorReason.Type

/** One error for every provider failure, classified by what the caller should do about it. */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  reason: ErrorReason,
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /** Delay the provider asked for, from `retry-after-ms` / `retry-after`. */
  retryAfterMs: Schema.optional(Schema.Number)
}) {
  get retryable() {
    return this.reason === "transient" || this.reason === "rate-limit"
  }
}

/** Messages providers use to say the prompt no longer fits the context window (T23). */
export const OVERFLOW_PATTERNS: ReadonlyArray<RegExp> = [
  /prompt is too long/i,
  /exceeds? the context window/i,
  /maximum context length/i,
  /context_length_exceeded/i,
  /token limit exceeded/i,
  /context window (is )?(full|exceeded)/i,
  /input is too long/i,
  /too many tokens/i,
  /reduce the length of the messages/i,
  /exceeds the maximum (number of )?tokens/i,
  /maximum number of tokens/i,
  /request too large/i,
  /input length .* exceeds/i,
  /prompt .*exceeds .*limit/i,
  /context length of .* tokens/i,
  /string too long/i,
  /model_context_window_exceeded/i,
  /exceeds? (the )?max(imum)? input/i,
  /input tokens exceed/i,
  /longer than the model'?s context length/i,
  /the input or output tokens must be reduced/i,
  /requested \d+ tokens.*(exceed|more than)/i,
  /context size has been exceeded/i,
  /out of context/i,
  /n_ctx|n_keep|slot context/i,
  /prompt has \d+ tokens.*limit/i,
  /too long for (the )?context/i
]

export const isOverflowMessage = (text: string) => OVERFLOW_PATTERNS.some((re) => re.test(text))

// Loopback and this machine's own names: a refused connection there means the server is not running.
const LOCAL_HOST = /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0|\[?::\]?)$/i

// What listens on a port by default, for naming the server to start.
const LOCAL_SERVERS: Readonly<Record<string, string>> = { "11434": "Ollama", "1234": "LM Studio", "8080": "llama.cpp's server" }

/** True when `url` names this machine (localhost, 127.x.x.x, ::1). */
export const isLocalURL = (url: string) => URL.canParse(url) && LOCAL_HOST.test(new URL(url).hostname)

/** True when fetch failed because the connection was refused (Node's and Bun's codes). */
export const isConnectionRefused = (error: unknown) =>
  causes(error).some((e) => {
    const code = typeof e === "object" && e !== null && "code" in e ? String(e.code) : ""
    return code === "ECONNREFUSED" || code === "ConnectionRefused" || /\bECONNREFUSED\b/.test(messageOf(e))
  })

/**
 * A local model server that refused the connection: not retried (it will not start by itself in the
 * next seconds), and the message names the URL and the two ways out.
 */
export const unreachableError = (url: string, providerID: string) => {
  const where = URL.canParse(url) ? new URL(url) : undefined
  const server = (where && LOCAL_SERVERS[where.port]) ?? "the model server"
  return new ProviderError({
    reason: "unreachable",
    message: `could not connect to ${url} (connection refused): is ${server} running? Start it, or change provider.${providerID}.baseURL in reins.json`
  })
}

/** Reads `retry-after-ms`, then `retry-after` (seconds or an HTTP date). */
export const retryAfterFromHeaders = (headers: Record<string, string> | undefined, now: number): number | undefined => {
  if (!headers) return undefined
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
  const ms = Number(lower["retry-after-ms"])
  if (lower["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms
  const after = lower["retry-after"]
  if (after === undefined) return undefined
  const seconds = Number(after)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(after)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

interface ApiCallErrorLike {
  readonly statusCode?: number
  readonly responseBody?: string
  readonly responseHeaders?: Record<string, string>
  readonly isRetryable?: boolean
  readonly message: string
  readonly cause?: unknown
}

const isApiCallError = (u: unknown): u is ApiCallErrorLike =>
  typeof u === "object" && u !== null && "message" in u && ("statusCode" in u || "responseBody" in u)

const NETWORK = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|socket hang up|fetch failed|network|Unable to connect|connection.*closed/i

// getaddrinfo's failures, with the host when the message names it
const DNS = /\b(ENOTFOUND|EAI_AGAIN|EAI_NONAME)\b(?:\s+([\w.-]+))?/

/**
 * Hints a runtime adds to its errors for the developer of the program, not for its user (Bun:
 * "For more information, pass `verbose: true` in the second argument to fetch()").
 */
const RUNTIME_HINTS: ReadonlyArray<RegExp> = [/\s*[^.!?\n]*\bverbose: ?true\b[^.!?\n]*[.!?]?/gi]

/** A message without the runtime's hints for developers. */
export const withoutRuntimeHints = (message: string) => RUNTIME_HINTS.reduce((text, hint) => text.replace(hint, ""), message).trim()

/** The SDK's words for a stream that ended before the provider said why it stopped. */
const NO_FINISH = /stream ended without a finish (reason|chunk)/i

/** A stream the provider closed before its finish reason: transient, so retried while nothing was emitted. */
export const unfinishedStreamError = () =>
  new ProviderError({ reason: "transient", message: "the provider closed the stream before it finished (no finish reason)" })

const causes = (error: unknown): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  for (let e = error; e !== undefined && e !== null && !chain.includes(e); e = (e as { cause?: unknown }).cause) chain.push(e)
  return chain
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error))

/** Maps anything the AI SDK or fetch throws into a ProviderError; `now` (ms, from the Clock) dates a `retry-after` given as a date. */
export const classify = (error: unknown, now: number): ProviderError => {
  const chain = causes(error)
  // Reins' own errors (a timeout, a page that is not a stream) come back wrapped by the SDK.
  const own = chain.find((e): e is ProviderError => e instanceof ProviderError)
  if (own) return own
  const message = withoutRuntimeHints(messageOf(error))
  if (NO_FINISH.test(message)) return unfinishedStreamError()
  if (isApiCallError(error)) {
    const status = error.statusCode
    const text = `${error.message} ${error.responseBody ?? ""}`
    const retryAfterMs = retryAfterFromHeaders(error.responseHeaders, now)
    const base = { message: withoutRuntimeHints(error.message) || `HTTP ${status}`, ...(status !== undefined ? { status } : {}) }
    // A successful response whose body broke off: say what broke, retry it like any dropped connection.
    if (status !== undefined && status < 300) {
      const cause =
        chain
          .slice(1)
          .map(messageOf)
          .map(withoutRuntimeHints)
          .find((m) => m !== "") ?? base.message
      const broken = { message: `the response stream broke off: ${cause}`, status }
      return new ProviderError({ reason: error.isRetryable || NETWORK.test(cause) ? "transient" : "invalid", ...broken })
    }
    if (isOverflowMessage(text)) return new ProviderError({ reason: "overflow", ...base })
    if (status === 429) return new ProviderError({ reason: "rate-limit", ...base, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) })
    if (status === 401 || status === 403) {
      return new ProviderError({ reason: "auth", ...base, message: `${base.message} (check the API key for this provider)` })
    }
    if (status === undefined || status >= 500 || status === 408 || status === 409) {
      return new ProviderError({ reason: "transient", ...base, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) })
    }
    return new ProviderError({ reason: "invalid", ...base })
  }
  if (isOverflowMessage(message)) return new ProviderError({ reason: "overflow", message })
  // a name that does not resolve: a typo in baseURL, or no network (retried: DNS can be flaky)
  const unresolved = chain.map(messageOf).join(" ").match(DNS)
  if (unresolved) {
    return new ProviderError({
      reason: "transient",
      message: `could not find the provider's host${unresolved[2] ? ` ${unresolved[2]}` : ""} (${unresolved[1]}): check baseURL in reins.json and the network`
    })
  }
  if (NETWORK.test(message)) return new ProviderError({ reason: "transient", message })
  return new ProviderError({ reason: "invalid", message })
}
