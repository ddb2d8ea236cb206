/**
 * A scripted Anthropic Messages API server (`POST /v1/messages`) for tests and benchmarks: the
 * same script as the OpenAI-compatible one (steps of text, reasoning and/or tool calls), answered
 * in Anthropic's event stream so the real `@ai-sdk/anthropic` talks to it over HTTP. A step's
 * `reasoning` is a thinking block signed with `thinkingSignature(reasoning)`. Usage comes from a
 * model of Anthropic's prefix caching (`PromptCache`): input, cache read and cache creation tokens.
 */
import { approxTokens, PromptCache, type CacheUsage } from "./PromptCache.ts"
import { receive, splitPieces, streamFrames, type ScriptedRequest, type ScriptedStep } from "./ScriptedServer.ts"

/** One request the server received, with what it was billed. */
export interface AnthropicRequest extends ScriptedRequest {
  /** The cache model's figures for this request (unset for a body that is not JSON). */
  usage?: CacheUsage
}

export interface AnthropicServerOptions {
  port?: number
  /** Once the steps are used up, answer every further request with the last one. */
  repeatLast?: boolean
  /** Consulted first for every request (its parsed body and 0-based index): a step answers it without consuming the script. */
  respond?: (body: any, index: number) => ScriptedStep | undefined
  /** False: request bodies are not kept (their usage still is), so a long benchmark does not hold every body. */
  keepBodies?: boolean
}

export interface AnthropicServer {
  /** Base URL including `/v1` (the `baseURL` of `createAnthropic`). */
  url: string
  requests: Array<AnthropicRequest>
  /** The server's prefix caches (`clear()` empties them). */
  cache: PromptCache
  remaining(): number
  stop(): Promise<void>
}

export const ANTHROPIC_MODEL_ID = "claude-sonnet-4-5"

type ContentStep = Exclude<ScriptedStep, { error: unknown } | { hang: true } | { stall: unknown } | { raw: unknown }>

const randomId = () => crypto.randomUUID().replaceAll("-", "").slice(0, 24)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The signature the server gives a thinking block with this text (so a test can check it is replayed). */
export const thinkingSignature = (thinking: string) => `sig_${Bun.hash(thinking).toString(36)}`

const STOP_REASONS: Readonly<Record<string, string>> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" }

const errorResponse = (status: number, message: string, type = "api_error", headers: Record<string, string> = {}) =>
  Response.json({ type: "error", error: { type, message } }, { status, headers })

/** The content blocks of a step, in Anthropic's order: thinking, text, tool uses. */
const contentOf = (step: ContentStep) => {
  const blocks: Array<
    { type: "thinking"; thinking: string; signature: string } | { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: string }
  > = []
  if (step.reasoning) blocks.push({ type: "thinking", thinking: step.reasoning, signature: thinkingSignature(step.reasoning) })
  if (step.text) blocks.push({ type: "text", text: step.text })
  for (const call of step.toolCalls ?? []) {
    const id = call.id ?? `toolu_${randomId()}`
    blocks.push({ type: "tool_use", id, name: call.name, input: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) })
  }
  return blocks
}

const stopReason = (step: ContentStep, hasTools: boolean) => {
  const reason = step.finishReason ?? (hasTools ? "tool_calls" : "stop")
  return STOP_REASONS[reason] ?? reason
}

const outputTokens = (step: ContentStep, blocks: ReturnType<typeof contentOf>) =>
  step.usage?.completion_tokens ??
  approxTokens(blocks.map((b) => (b.type === "thinking" ? b.thinking : b.type === "text" ? b.text : b.name + b.input)).join("").length)

/** The event stream of one step (`event:` and `data:` lines, one frame per event). */
const frames = (step: ContentStep, model: string, usage: CacheUsage): Array<string> => {
  const blocks = contentOf(step)
  const frame = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const out = [
    frame("message_start", {
      message: {
        id: `msg_${randomId()}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 }
      }
    })
  ]
  blocks.forEach((block, index) => {
    const delta = (d: Record<string, unknown>) => out.push(frame("content_block_delta", { index, delta: d }))
    if (block.type === "thinking") {
      out.push(frame("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }))
      for (const piece of splitPieces(block.thinking, 4)) delta({ type: "thinking_delta", thinking: piece })
      delta({ type: "signature_delta", signature: block.signature })
    } else if (block.type === "text") {
      out.push(frame("content_block_start", { index, content_block: { type: "text", text: "" } }))
      for (const piece of splitPieces(block.text, step.textChunks ?? 6)) delta({ type: "text_delta", text: piece })
    } else {
      out.push(frame("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }))
      for (const piece of splitPieces(block.input, 3)) delta({ type: "input_json_delta", partial_json: piece })
    }
    out.push(frame("content_block_stop", { index }))
  })
  const hasTools = blocks.some((b) => b.type === "tool_use")
  out.push(
    frame("message_delta", {
      delta: { stop_reason: stopReason(step, hasTools), stop_sequence: null },
      usage: { ...usage, output_tokens: outputTokens(step, blocks) }
    })
  )
  out.push(frame("message_stop", {}))
  return out
}

/** The whole message of a non-streamed request. */
const message = (step: ContentStep, model: string, usage: CacheUsage) => {
  const blocks = contentOf(step)
  const content = blocks.map((b) => (b.type === "tool_use" ? { ...b, input: JSON.parse(b.input) as unknown } : b))
  const hasTools = blocks.some((b) => b.type === "tool_use")
  return {
    id: `msg_${randomId()}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason(step, hasTools),
    stop_sequence: null,
    usage: { ...usage, output_tokens: outputTokens(step, blocks) }
  }
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })))

/** Starts the server on 127.0.0.1. Each `POST /v1/messages` takes the next step. */
export async function startAnthropicServer(steps: ReadonlyArray<ScriptedStep>, options: AnthropicServerOptions = {}): Promise<AnthropicServer> {
  const script = [...steps]
  const requests: Array<AnthropicRequest> = []
  const cache = new PromptCache()
  let next = 0
  const takeStep = (): ScriptedStep | undefined => (next < script.length ? script[next++] : options.repeatLast ? script.at(-1) : undefined)

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 0,
    async fetch(req) {
      const { pathname } = new URL(req.url)
      if (req.method !== "POST" || !pathname.endsWith("/messages")) {
        return errorResponse(404, `scripted anthropic server: no route ${req.method} ${pathname}`, "not_found_error")
      }
      const { record, index, sent, aborted, body } = await receive(req, requests, options)
      if (body === undefined) return sent(errorResponse(400, "scripted anthropic server: request body is not JSON", "invalid_request_error"))
      const step = options.respond?.(body, index) ?? takeStep()
      if (step === undefined) return sent(errorResponse(500, "scripted anthropic server: no more steps"))
      if ("error" in step) return sent(errorResponse(step.error.status, step.error.message, step.error.type, step.error.headers))
      if ("hang" in step || "stall" in step) {
        record.stalledAt ??= performance.now()
        return untilAborted(req.signal).then(() => new Response(null, { status: 499 }))
      }
      if ("raw" in step) {
        const { status = 200, contentType = "text/html; charset=utf-8", body: text } = step.raw
        return sent(new Response(text, { status, headers: { "content-type": contentType } }))
      }
      // billed only when answered: a failed request caches nothing, as with Anthropic
      const usage = cache.bill(body)
      record.usage = usage
      const model = typeof body?.model === "string" ? body.model : ANTHROPIC_MODEL_ID
      if (body?.stream !== true) {
        if (step.holdUntil) await step.holdUntil
        if (step.delayMs) await sleep(step.delayMs)
        return sent(Response.json(message(step, model, usage)))
      }
      return streamFrames(
        step,
        frames(step, model, usage),
        () => sent(undefined),
        aborted,
        () => void (record.stalledAt ??= performance.now())
      )
    }
  })

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests,
    cache,
    remaining: () => Math.max(0, script.length - next),
    stop: async () => {
      await server.stop(true)
    }
  }
}
