import { Clock, Effect, type Scope } from "effect"
import type { ProviderTimeoutConfig } from "@reins/domain"
import { isConnectionRefused, isLocalURL, ProviderError, unreachableError } from "./ProviderError.ts"

/** Seconds a provider may stay silent when neither reins.json nor the provider says otherwise. */
export const DEFAULT_TIMEOUTS = { connect: 60, first_byte: 180, idle: 120 } as const

/** The limits of one provider call in milliseconds; 0 means no limit. */
export interface Timeouts {
  /** From sending the request to the response headers. */
  readonly connect: number
  /** From the headers to the first bytes of the body. */
  readonly first_byte: number
  /** The longest wait for each further chunk. */
  readonly idle: number
}

/** A provider's own timeouts, field by field over the global ones, over the defaults. */
export const resolveTimeouts = (global: ProviderTimeoutConfig | undefined, own: ProviderTimeoutConfig | undefined): Timeouts => {
  const ms = (key: keyof Timeouts) => Math.round((own?.[key] ?? global?.[key] ?? DEFAULT_TIMEOUTS[key]) * 1000)
  return { connect: ms("connect"), first_byte: ms("first_byte"), idle: ms("idle") }
}

type Phase = keyof Timeouts | "done"

/** Where a call stands, written by the fetch below and read by the watchdog. */
interface Progress {
  phase: Phase
  /** True while reins waits on the provider (not while a slow consumer has not asked for more). */
  waiting: boolean
  since: number
  cut: (error: ProviderError) => void
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`

/** The error a silent provider ends with: transient, so it is retried like a dropped connection. */
export const timeoutError = (phase: keyof Timeouts, limitMs: number, providerID: string, where: string) => {
  const what = {
    connect: `sent no response for ${seconds(limitMs)} (connect timeout`,
    first_byte: `answered but sent nothing for ${seconds(limitMs)} (first-byte timeout`,
    idle: `sent nothing for ${seconds(limitMs)} mid-stream (idle timeout`
  }[phase]
  return new ProviderError({
    reason: "transient",
    message: `the provider at ${where} ${what}; set provider.${providerID}.timeout.${phase} in reins.json to wait longer)`
  })
}

const isEventStream = (contentType: string) => /^\s*text\/event-stream\b/i.test(contentType)

/** The first few KB of a body, for saying what came back instead of a stream. */
const excerpt = async (response: Response) => {
  const reader = response.body?.getReader()
  if (!reader) return ""
  const decoder = new TextDecoder()
  let text = ""
  while (text.length < 4096) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel().catch(() => undefined)
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]
  const plain = (title ?? text).replace(/\s+/g, " ").trim()
  return plain.length > 160 ? `${plain.slice(0, 160)}…` : plain
}

/** A 200 that is not an event stream: mostly a web page or an API root from a wrong `baseURL`. */
export const notAStreamError = (where: string, contentType: string, said: string) =>
  new ProviderError({
    reason: "invalid",
    message: `the provider at ${where} answered with ${contentType.split(";")[0]!.trim()}, not an event stream — check baseURL (it usually ends in /v1)${said ? `; it said: "${said}"` : ""}`
  })

/**
 * The fetch one provider call hands to the AI SDK, and the watchdog fiber that cuts it off when
 * the provider is silent longer than its limit. Cutting aborts the request with the timeout
 * error, which the SDK passes on as the call's failure. Bun's own 5-minute socket timeout is
 * off: these limits govern. The watchdog lives in the caller's scope.
 */
export const watchedFetch = Effect.fnUntraced(function* (
  limits: Timeouts,
  providerID: string,
  baseURL: string | undefined
): Effect.fn.Return<typeof globalThis.fetch, never, Scope.Scope> {
  const clock = yield* Clock.Clock
  const progress: Progress = { phase: "connect", waiting: false, since: 0, cut: () => undefined }
  let where = baseURL ?? "the provider's API"

  const watchdog = Effect.gen(function* () {
    const limitsOn = Object.values(limits).filter((limit) => limit > 0)
    if (limitsOn.length === 0) return
    const recheck = Math.min(...limitsOn)
    while (progress.phase !== "done") {
      const phase = progress.phase
      const limit = limits[phase]
      const silent = progress.waiting ? (yield* Clock.currentTimeMillis) - progress.since : 0
      if (limit > 0 && progress.waiting && silent >= limit) return progress.cut(timeoutError(phase, limit, providerID, where))
      // Until this wait's deadline, but never longer than the shortest limit: by then the call may
      // wait in a phase with a shorter one.
      yield* Effect.sleep(limit > 0 && progress.waiting ? Math.min(limit - silent, recheck) : recheck)
    }
  })
  yield* Effect.forkScoped(watchdog)

  const wait = (phase: Phase) => {
    progress.phase = phase
    progress.waiting = true
    progress.since = clock.currentTimeMillisUnsafe()
  }

  const watched = async (input: string | URL | Request, init?: BunFetchRequestInit): Promise<Response> => {
    const controller = new AbortController()
    const outer = init?.signal
    const forward = () => controller.abort(outer?.reason)
    if (outer?.aborted) forward()
    else outer?.addEventListener("abort", forward, { once: true })
    progress.cut = (error) => controller.abort(error)
    const url = input instanceof Request ? input.url : String(input)
    if (baseURL === undefined) where = new URL(url).origin
    wait("connect")
    const response = await fetch(input, { ...init, signal: controller.signal, timeout: false }).catch((error: unknown) => {
      // a local server that is down fails now, naming its URL, instead of after every retry
      throw isLocalURL(url) && isConnectionRefused(error) ? unreachableError(where, providerID) : error
    })
    progress.phase = "first_byte"
    progress.waiting = false
    const contentType = response.headers.get("content-type")
    if (response.ok && contentType && !isEventStream(contentType)) {
      wait("first_byte")
      const said = await excerpt(response)
      progress.phase = "done"
      throw notAStreamError(where, contentType, said)
    }
    const body = response.body
    if (!body) {
      progress.phase = "done"
      return response
    }
    const reader = body.getReader()
    const stream = new ReadableStream<Uint8Array>({
      async pull(out) {
        wait(progress.phase === "first_byte" ? "first_byte" : "idle")
        const { done, value } = await reader.read()
        progress.waiting = false
        if (done) {
          progress.phase = "done"
          return out.close()
        }
        progress.phase = "idle"
        out.enqueue(value)
      },
      cancel: (reason) => {
        progress.phase = "done"
        return reader.cancel(reason)
      }
    })
    return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
  return Object.assign(watched, { preconnect: fetch.preconnect })
})
