import { decodeMetrics, decodeTraces, type ReceivedDataPoint, type ReceivedSpan } from "./OtlpDecode.ts"
import { HANG_MS, waitFor } from "./Wait.ts"

/**
 * A real OTLP/HTTP collector on 127.0.0.1 for tests and benchmarks: `POST /v1/traces` and
 * `POST /v1/metrics`, `http/protobuf` or `http/json` by content type, decoded into plain spans and
 * data points. It can also be a collector that is down (a closed port) or one that hangs (accepts
 * the connection and never answers).
 */

export type OtlpReceiverMode = "up" | "down" | "hang"

/** One export request as it arrived. */
export interface OtlpRequest {
  readonly path: string
  readonly contentType: string
  readonly headers: Record<string, string>
  readonly bytes: number
}

export interface OtlpReceiver {
  /** The base URL, e.g. for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  readonly port: number
  readonly mode: OtlpReceiverMode
  readonly spans: ReadonlyArray<ReceivedSpan>
  readonly dataPoints: ReadonlyArray<ReceivedDataPoint>
  readonly requests: ReadonlyArray<OtlpRequest>
  /** Bodies that failed to decode, with the reason (the request got status 400). */
  readonly errors: ReadonlyArray<string>
  /** Connections accepted (the `hang` mode counts them; it never reads a request). */
  readonly connections: number
  /** Resolves once `predicate` holds, looking again every few ms; rejects after the hang guard `timeoutMs` (default HANG_MS), saying what arrived. */
  waitFor(predicate: (r: OtlpReceiver) => boolean, timeoutMs?: number): Promise<void>
  /** Forgets what was received. */
  clear(): void
  stop(): Promise<void>
}

// a port that was free a moment ago: nothing listens on it, so a connection is refused
const closedPort = (): number => {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() })
  const port = probe.port ?? 0
  probe.stop(true)
  return port
}

/** Starts a receiver; `mode` "down" gives a closed port, "hang" a listener that never answers. */
export async function startOtlpReceiver(options: { readonly mode?: OtlpReceiverMode } = {}): Promise<OtlpReceiver> {
  const mode = options.mode ?? "up"
  const spans: Array<ReceivedSpan> = []
  const dataPoints: Array<ReceivedDataPoint> = []
  const requests: Array<OtlpRequest> = []
  const errors: Array<string> = []
  let connections = 0
  let port: number
  let stop: () => void

  if (mode === "down") {
    port = closedPort()
    stop = () => {}
  } else if (mode === "hang") {
    const sockets = new Set<{ end(): void }>()
    const listener = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(socket) {
          connections++
          sockets.add(socket)
        },
        data() {},
        close(socket) {
          sockets.delete(socket)
        }
      }
    })
    port = listener.port
    stop = () => {
      for (const s of sockets) s.end()
      listener.stop(true)
    }
  } else {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        connections++
        const path = new URL(req.url).pathname
        if (req.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/metrics")) return new Response("not found", { status: 404 })
        const contentType = req.headers.get("content-type") ?? ""
        const body = new Uint8Array(await req.arrayBuffer())
        requests.push({ path, contentType, headers: Object.fromEntries(req.headers), bytes: body.byteLength })
        const json = contentType.includes("json")
        const decoded = Promise.try(() =>
          path === "/v1/traces" ? spans.push(...decodeTraces(contentType, body)) : dataPoints.push(...decodeMetrics(contentType, body))
        )
        return decoded.then(
          // an empty ExportServiceResponse: `{}` in JSON, no bytes in protobuf
          () => (json ? Response.json({}) : new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } })),
          (cause: unknown) => {
            errors.push(`${path} (${contentType}): ${String(cause)}`)
            return new Response(String(cause), { status: 400 })
          }
        )
      }
    })
    port = server.port ?? 0
    stop = () => server.stop(true)
  }

  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${port}`,
    port,
    mode,
    spans,
    dataPoints,
    requests,
    errors,
    get connections() {
      return connections
    },
    async waitFor(predicate, timeoutMs = HANG_MS) {
      await waitFor(() => predicate(receiver), { what: "the OTLP receiver's condition", timeout: timeoutMs }).catch((e: Error) => {
        throw new Error(`${e.message} (${spans.length} spans, ${dataPoints.length} data points, errors: ${errors.join("; ") || "none"})`)
      })
    },
    clear() {
      spans.length = 0
      dataPoints.length = 0
      requests.length = 0
      errors.length = 0
    },
    async stop() {
      stop()
    }
  }
  return receiver
}
