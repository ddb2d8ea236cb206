import { responsesFrames } from "./ResponsesStream.ts"

/**
 * A scripted OpenAI-compatible Chat Completions server for end-to-end tests and benchmarks.
 * Every `POST /v1/chat/completions` consumes the next scripted step, in arrival order, unless
 * `options.respond` answers the request itself. `POST /v1/responses` (the OpenAI Responses API,
 * streamed only) takes steps the same way.
 */

export type ScriptedToolCall = { name: string; arguments: Record<string, unknown> | string; id?: string }

export type ScriptedStep =
  | {
      text?: string
      reasoning?: string
      toolCalls?: ReadonlyArray<ScriptedToolCall>
      usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number }
      finishReason?: string
      /** Delay before the first chunk (stream) or before the response (non-stream). */
      delayMs?: number
      /**
       * Holds the answer back until this settles (before `delayMs` and the first chunk; Bun sends the
       * headers with the first chunk, so nothing at all arrives): a test releases it once what must
       * happen while the provider is still answering has happened, instead of hoping a delay is enough.
       */
      holdUntil?: PromiseLike<unknown>
      /** Delay between streamed chunks. */
      chunkDelayMs?: number
      /** How many pieces the text is streamed in, at most (default 6). */
      textChunks?: number
      /** Stream only the first n chunks (text, tool calls, the finish, usage and `[DONE]` are chunks), then hold the connection open. */
      stallAfterChunks?: number
      /** Stream only the first n chunks, then end the response cleanly: no finish reason, no `[DONE]`. */
      closeAfterChunks?: number
    }
  | { error: { status: number; message: string; type?: string; code?: string; headers?: Record<string, string> } }
  | { hang: true }
  /**
   * Holds the request open until the client goes: `"headers"` sends nothing at all; `"body"` sends
   * the headers of an event stream and then not one byte.
   */
  | { stall: "headers" | "body" }
  /** Answers with exactly this (e.g. an HTML page with status 200, as a wrong `baseURL` gets). */
  | { raw: { status?: number; contentType?: string; body: string } }

/** One chat-completions request the server received. */
export interface ScriptedRequest {
  /** The parsed body (the raw text when it is not JSON; undefined with `keepBodies: false`). */
  body: any
  headers: Record<string, string>
  /** `performance.now()` when the request's body had been read. */
  receivedAt: number
  /** `performance.now()` when the response was sent: a stream's last chunk queued, else the response built; unset for a hang. */
  respondedAt?: number
  /** Characters of the raw request body (the default `prompt_tokens` is a quarter of this, rounded up). */
  bodyLength: number
  /** `performance.now()` when the client went away before the response was complete (aborted, or the stream cancelled). */
  abortedAt?: number
  /**
   * `performance.now()` when the server began to hold the request open: at once for a stall of the
   * headers, once the headers are sent for a stall of the body, once the chunks before the stall
   * (or a hang's first byte) have been handed to the connection. A test waits for it instead of
   * guessing how long the client takes to get there.
   */
  stalledAt?: number
}

/** Options of `startScriptedServer`. */
export interface ScriptedServerOptions {
  port?: number
  /** Once the steps are used up, answer every further request with the last one. */
  repeatLast?: boolean
  /**
   * Consulted first for every chat-completions request (its parsed body and 0-based index among
   * them): a step answers it without consuming the script; undefined falls back to the next step.
   */
  respond?: (body: any, index: number) => ScriptedStep | undefined
  /** Called once a response has been sent completely (when `respondedAt` is set), with the request's index. */
  onResponded?: (index: number) => void
  /** False: `requests[i].body` is not kept (the raw text of a non-JSON body still is), so a long benchmark does not hold every body. */
  keepBodies?: boolean
}

export interface ScriptedServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string
  requests: Array<ScriptedRequest>
  /** Steps not yet consumed (with repeatLast, it stays at 0 once exhausted). */
  remaining(): number
  stop(): Promise<void>
}

export const SCRIPTED_MODEL_ID = "scripted-model"

type ContentStep = Exclude<ScriptedStep, { error: unknown } | { hang: true } | { stall: unknown } | { raw: unknown }>

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const randomId = () => crypto.randomUUID().replaceAll("-", "").slice(0, 24)
const approxTokens = (s: string) => Math.ceil(s.length / 4)

/** Splits `s` into at most `max` pieces that join back to `s` exactly (word boundaries when possible). */
export function splitPieces(s: string, max: number): string[] {
  if (s.length === 0) return []
  let tokens = s.split(/(?<=\s)/)
  if (tokens.length < Math.min(max, 3) && s.length >= 3) tokens = Array.from(s) // few words: split by chars
  const per = Math.ceil(tokens.length / max)
  const out: string[] = []
  for (let i = 0; i < tokens.length; i += per) out.push(tokens.slice(i, i + per).join(""))
  return out
}

const errorResponse = (status: number, message: string, type = "scripted_error", code: string | null = null, headers: Record<string, string> = {}) =>
  Response.json({ error: { message, type, code } }, { status, headers })

function resolveCalls(step: ContentStep) {
  return (step.toolCalls ?? []).map((c) => ({
    id: c.id ?? `call_${randomId()}`,
    name: c.name,
    args: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)
  }))
}

function usageOf(step: ContentStep, rawBody: string, calls: ReturnType<typeof resolveCalls>) {
  const output = (step.text ?? "") + (step.reasoning ?? "") + calls.map((c) => c.name + c.args).join("")
  const prompt_tokens = step.usage?.prompt_tokens ?? approxTokens(rawBody)
  const completion_tokens = step.usage?.completion_tokens ?? approxTokens(output)
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    prompt_tokens_details: { cached_tokens: step.usage?.cached_tokens ?? 0 }
  }
}

/** Resolves when the client goes away. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })))

function streamResponse(
  step: ContentStep,
  model: string,
  rawBody: string,
  onSent: () => void = () => {},
  onCancel: () => void = () => {},
  responses = false,
  onStalled: () => void = () => {}
): Response {
  if (responses) return streamFrames(step, responsesFrames(step, model, rawBody), onSent, onCancel, onStalled)
  const id = `chatcmpl-${randomId()}`
  const created = Math.floor(Date.now() / 1000)
  const calls = resolveCalls(step)
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`
  const deltas: Array<Record<string, unknown>> = []
  for (const r of splitPieces(step.reasoning ?? "", 4)) deltas.push({ reasoning_content: r })
  for (const t of splitPieces(step.text ?? "", step.textChunks ?? 6)) deltas.push({ content: t })
  calls.forEach((c, index) => {
    deltas.push({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] })
    for (const a of splitPieces(c.args, 3)) deltas.push({ tool_calls: [{ index, function: { arguments: a } }] })
  })
  if (deltas.length === 0) deltas.push({ content: "" })
  const first = deltas[0]!
  deltas[0] = { role: "assistant", ...(first.tool_calls ? { content: null } : {}), ...first }
  const frames = deltas.map((delta) => chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]))
  const finishReason = step.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop")
  frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]))
  frames.push(chunk([], { usage: usageOf(step, rawBody, calls) }))
  frames.push("data: [DONE]\n\n")
  return streamFrames(step, frames, onSent, onCancel, onStalled)
}

/** Streams pre-made SSE frames with the step's delays, stalls and early closes (every scripted server's stream). */
export function streamFrames(
  step: ContentStep,
  frames: ReadonlyArray<string>,
  onSent: () => void,
  onCancel: () => void,
  onStalled: () => void = () => {}
): Response {
  const encoder = new TextEncoder()
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i === 0 && step.holdUntil) await step.holdUntil
      const wait = i === 0 ? step.delayMs : step.chunkDelayMs
      if (wait) await sleep(wait)
      if (i === step.closeAfterChunks) return controller.close()
      if (i === step.stallAfterChunks) {
        onStalled()
        return new Promise<void>(() => {}) // held until the client cancels
      }
      const frame = frames[i++]
      if (frame === undefined) return controller.close()
      controller.enqueue(encoder.encode(frame))
      if (i === frames.length) onSent()
    },
    cancel: onCancel
  })
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } })
}

async function jsonResponse(step: ContentStep, model: string, rawBody: string): Promise<Response> {
  if (step.holdUntil) await step.holdUntil
  if (step.delayMs) await sleep(step.delayMs)
  const calls = resolveCalls(step)
  const message: Record<string, unknown> = { role: "assistant", content: step.text ?? null }
  if (step.reasoning) message.reasoning_content = step.reasoning
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.args } }))
  }
  return Response.json({
    id: `chatcmpl-${randomId()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: step.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop") }],
    usage: usageOf(step, rawBody, calls)
  })
}

/** Sends headers (plus an ignorable first byte so they are flushed) and then never finishes. */
function hangResponse(stream: boolean, onStalled: () => void): Response {
  let pulls = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulls++ === 0) return controller.enqueue(new TextEncoder().encode(stream ? ": scripted hang\n\n" : " "))
      // asked for more: the first byte has been handed to the connection
      onStalled()
      return new Promise<void>(() => {})
    }
  })
  return new Response(body, { headers: { "content-type": stream ? "text/event-stream" : "application/json" } })
}

/**
 * Bun.serve sends a response's headers only with its first body byte, so headers followed by
 * nothing come from this node:http listener instead; the scripted server redirects there (a 307
 * keeps the method and body).
 */
async function startHeadersOnlyServer(onClosed: (index: number) => void, onStalled: (index: number) => void) {
  const { createServer } = await import("node:http")
  const server = createServer((req, res) => {
    const index = Number(req.url?.split("/").at(-1))
    res.on("close", () => onClosed(index))
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.flushHeaders()
    onStalled(index)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: (index: number) => `http://127.0.0.1:${port}/stalled/${index}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * A request as a scripted server receives it: recorded in `requests` (headers, body, when it came,
 * when it was answered — `sent` marks that — or abandoned), and its body parsed; `body` is
 * undefined when it is not JSON. `keepBodies: false` keeps only the raw text of a body that is not JSON.
 */
export async function receive<R extends ScriptedRequest>(
  req: Request,
  requests: Array<R>,
  options: { readonly keepBodies?: boolean; readonly onResponded?: (index: number) => void }
) {
  const rawBody = await req.text()
  const record = { body: rawBody, headers: Object.fromEntries(req.headers), receivedAt: performance.now(), bodyLength: rawBody.length } as R
  const index = requests.length
  requests.push(record)
  const sent = <X>(response: X): X => {
    record.respondedAt = performance.now()
    options.onResponded?.(index)
    return response
  }
  /** The client went away before the response was complete. */
  const aborted = () => void (record.respondedAt === undefined && (record.abortedAt ??= performance.now()))
  req.signal.addEventListener("abort", aborted, { once: true })
  let body: any
  try {
    body = JSON.parse(rawBody)
  } catch {
    return { record, index, sent, aborted, rawBody, body: undefined }
  }
  record.body = options.keepBodies === false ? undefined : body
  return { record, index, sent, aborted, rawBody, body }
}

export async function startScriptedServer(steps: ReadonlyArray<ScriptedStep>, options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const script = [...steps]
  const requests: ScriptedServer["requests"] = []
  let next = 0

  const takeStep = (): ScriptedStep | undefined => {
    if (next < script.length) return script[next++]
    return options.repeatLast ? script[script.length - 1] : undefined
  }

  let headersOnly: Promise<Awaited<ReturnType<typeof startHeadersOnlyServer>>> | undefined

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 0, // hang/delay steps must not be cut by Bun's default 10s idle timeout
    async fetch(req) {
      const { pathname } = new URL(req.url)
      if (req.method === "GET" && pathname.endsWith("/models")) {
        return Response.json({
          object: "list",
          data: [{ id: SCRIPTED_MODEL_ID, object: "model", created: 0, owned_by: "reins-testkit" }]
        })
      }
      if (req.method !== "POST" || !(pathname.endsWith("/chat/completions") || pathname.endsWith("/responses"))) {
        return errorResponse(404, `scripted server: no route ${req.method} ${pathname}`, "not_found")
      }
      const { record, index, sent, aborted, rawBody, body } = await receive(req, requests, options)
      const stalled = () => void (record.stalledAt ??= performance.now())
      if (body === undefined) return sent(errorResponse(400, "scripted server: request body is not JSON", "invalid_request_error"))
      const step = options.respond?.(body, index) ?? takeStep()
      if (step === undefined) return sent(errorResponse(500, "scripted server: no more steps", "server_error"))
      const stream = body?.stream === true
      if ("error" in step) {
        const e = step.error
        return sent(errorResponse(e.status, e.message, e.type, e.code ?? null, e.headers))
      }
      if ("hang" in step) return hangResponse(stream, stalled)
      if ("stall" in step) {
        if (step.stall === "headers") {
          stalled()
          return untilAborted(req.signal).then(() => new Response(null, { status: 499 }))
        }
        headersOnly ??= startHeadersOnlyServer(
          (i) => void (requests[i] && (requests[i].abortedAt ??= performance.now())),
          (i) => void (requests[i] && (requests[i].stalledAt ??= performance.now()))
        )
        return Response.redirect((await headersOnly).url(index), 307)
      }
      if ("raw" in step) {
        const { status = 200, contentType = "text/html; charset=utf-8", body: text } = step.raw
        return sent(new Response(text, { status, headers: { "content-type": contentType } }))
      }
      const model = typeof body?.model === "string" ? body.model : SCRIPTED_MODEL_ID
      return stream
        ? streamResponse(step, model, rawBody, () => sent(undefined), aborted, pathname.endsWith("/responses"), stalled)
        : sent(await jsonResponse(step, model, rawBody))
    }
  })

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests,
    remaining: () => Math.max(0, script.length - next),
    stop: async () => {
      await server.stop(true)
      await (await headersOnly)?.stop()
    }
  }
}
