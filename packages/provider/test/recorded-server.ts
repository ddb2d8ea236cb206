// A server that answers every request with one recorded event stream (SSE `data:` lines) and keeps
// what each request sent; stopped after each test of the file that uses it.
import { afterEach } from "bun:test"

export interface Seen {
  readonly path: string
  readonly headers: Headers
  readonly body: string
}

const parseOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Registers the afterEach that stops the server; returns `serve(frames)`. */
export const recordedServer = () => {
  let server: ReturnType<typeof Bun.serve> | undefined
  afterEach(async () => {
    await server?.stop(true)
    server = undefined
  })
  return (frames: ReadonlyArray<unknown>) => {
    const seen: Array<Seen> = []
    /** The request bodies, parsed (undefined for one that is not JSON). */
    const bodies: Array<any> = []
    server = Bun.serve({
      port: 0,
      fetch: async (req) => {
        const body = await req.text()
        seen.push({ path: new URL(req.url).pathname + new URL(req.url).search, headers: req.headers, body })
        bodies.push(parseOrUndefined(body))
        const stream = frames.map((f) => `data: ${typeof f === "string" ? f : JSON.stringify(f)}\n\n`).join("")
        return new Response(stream, { headers: { "content-type": "text/event-stream" } })
      }
    })
    return { url: `http://127.0.0.1:${server.port}`, seen, bodies }
  }
}
