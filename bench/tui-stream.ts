// For bench/tui.ts: an OpenAI-compatible streaming server that sends each chunk of an answer on a fixed schedule and
// records when it sent it (same clock as the bench, performance.now()), and the markdown answers it streams.
// testkit's scripted server paces chunks by a delay after each one, which drifts under load; here chunk k goes at
// start + k × interval, so "200 chunks/s" holds and every chunk's send time is known.

/** One streamed answer: its text pieces and the pause between them. */
export interface StreamPlan {
  readonly chunks: ReadonlyArray<string>
  readonly intervalMs: number
  /** Wait before the first chunk (the model "thinking"). */
  readonly delayMs?: number
}

export interface StreamServer {
  /** Base URL including `/v1`. */
  readonly url: string
  /** Queues the answer to the next chat-completions request (a request with none queued gets a one-word answer). */
  plan(p: StreamPlan): void
  /** For each streamed request, `performance.now()` when each chunk was written. */
  readonly sent: Array<Array<number>>
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export const startStreamServer = (): StreamServer => {
  const plans: Array<StreamPlan> = []
  const sent: Array<Array<number>> = []
  const encoder = new TextEncoder()
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: async (req) => {
      if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/chat/completions")) return new Response("not found", { status: 404 })
      const body = (await req.json()) as { stream?: boolean; model?: string }
      const plan = plans.shift() ?? { chunks: ["ok"], intervalMs: 0 }
      const model = body.model ?? "scripted"
      const frame = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
      if (body.stream !== true) {
        return Response.json({
          id: "chatcmpl-bench",
          object: "chat.completion",
          created: 0,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: plan.chunks.join("") }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }
        })
      }
      const times: Array<number> = []
      sent.push(times)
      const stream = new ReadableStream<Uint8Array>({
        start: async (controller) => {
          const start = performance.now() + (plan.delayMs ?? 0)
          for (const [k, text] of plan.chunks.entries()) {
            const wait = start + k * plan.intervalMs - performance.now()
            if (wait > 0) await sleep(wait)
            controller.enqueue(encoder.encode(frame(k === 0 ? { role: "assistant", content: text } : { content: text })))
            times.push(performance.now())
          }
          const completion = Math.ceil(plan.chunks.join("").length / 4)
          controller.enqueue(encoder.encode(frame({}, "stop")))
          controller.enqueue(
            encoder.encode(
              `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model, choices: [], usage: { prompt_tokens: 1000, completion_tokens: completion, total_tokens: 1000 + completion } })}\n\n`
            )
          )
          controller.enqueue(encoder.encode("data: [DONE]\n\n"))
          controller.close()
        }
      })
      return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } })
    }
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    plan: (p) => void plans.push(p),
    sent,
    stop: () => server.stop(true)
  }
}

/** Splits `text` into pieces of about `size` characters, cut after whitespace where there is some (as tokens come). */
export const pieces = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  let at = 0
  while (at < text.length) {
    let end = Math.min(text.length, at + size)
    const space = text.lastIndexOf(" ", end)
    if (end < text.length && space > at + size / 2) end = space + 1
    out.push(text.slice(at, end))
    at = end
  }
  return out
}

const words =
  "the cache keeps each entry until its deadline passes and then writes a summary so that readers never block on slow upstream calls while retries back off".split(
    " "
  )

/** A markdown answer of about `bytes` characters (paragraphs, lists, TypeScript blocks) ending with the line `end`. */
export const markdownAnswer = (bytes: number, end: string): string => {
  let seed = 7
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  const sentence = () => {
    const s = Array.from({ length: 8 + Math.floor(rand() * 10) }, () => words[Math.floor(rand() * words.length)]!).join(" ")
    return `${s[0]!.toUpperCase()}${s.slice(1)}.`
  }
  const blocks: Array<string> = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const block =
      i % 4 === 0
        ? `## Part ${i / 4 + 1}\n\n${sentence()} ${sentence()} **${sentence()}** ${sentence()}`
        : i % 4 === 1
          ? Array.from({ length: 4 }, () => `- ${sentence()} \`cache.get(key)\``).join("\n")
          : i % 4 === 2
            ? "```ts\n" +
              `export function step${i}(input: Input): Output {\n  const items = input.items.filter((x) => x.quantity > ${i})\n  return { total: items.reduce((s, x) => s + x.price, 0) }\n}\n` +
              "```"
            : `${sentence()} ${sentence()} ${sentence()}`
    blocks.push(block)
    size += block.length + 2
  }
  return `${blocks.join("\n\n")}\n\n${end}`
}
