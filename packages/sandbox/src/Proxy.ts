// reins's side of the network allowlist: an HTTP proxy (CONNECT for https and anything over TLS, an
// absolute URI for plain http) that reaches only the listed hosts. It serves each sandboxed command over
// the channel its bridge speaks (Mux.ts), never on a port or a socket file: nothing but that sandbox can
// reach it. It resolves names itself and connects to the address it checked (no second lookup for a
// rebinding name to change), refuses IP literals that are not listed, and refuses a name that resolves
// to a loopback or private address unless the list names that host exactly.
import type * as net from "node:net"
import { type Duplex, duplexPair } from "node:stream"
import { hostListing, isPrivateAddress, normalizeHost } from "./Hosts.ts"
import { muxCodec, muxEndpoint } from "./Mux.ts"

// loaded on first use: a command that never runs the proxy does not pay for node:dns and node:net at startup
const dns = () => process.getBuiltinModule("node:dns")
const netModule = () => process.getBuiltinModule("node:net")

/** How the proxy resolves a name: every address, as `dns.lookup` gives them. */
export type Resolve = (host: string) => Promise<ReadonlyArray<{ readonly address: string }>>

/** The proxy's settings: the expanded allowlist, and (tests) the resolver. */
export interface ProxyOptions {
  readonly allow: ReadonlyArray<string>
  readonly resolve?: Resolve
  /** How long connecting to a host may take; default 15 s. */
  readonly connectTimeoutMs?: number
}

/** One sandboxed command's channel: hand it the parent's end of the socketpair; it records the hosts refused. */
export interface Channel {
  attach(stream: Duplex): void
  /** Hosts refused on this channel so far, in order, without repeats. */
  readonly refused: ReadonlyArray<string>
}

type Decision = { readonly ok: true; readonly address: string } | { readonly ok: false; readonly status: number; readonly message: string }

const defaultResolve: Resolve = (host) => dns().promises.lookup(host, { all: true, verbatim: true })

const MAX_HEAD = 64 * 1024
/** How long a request head may take to arrive. */
const HEAD_TIMEOUT_MS = 30_000
/** Connections one command may hold open through the proxy at once. */
export const MAX_CONNECTIONS = 64
const REASONS: Record<number, string> = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 504: "Gateway Timeout" }

/** What a refused request's body says: the host, why, and how the user allows it. */
export const refusalMessage = (host: string, why?: string) =>
  `reins's sandbox refused ${host}: ${why ?? "it is not in sandbox.network.allow"}. ` +
  `To reach it, the user adds "${host}" to "sandbox": {"network": {"allow": [...]}} in reins.json.`

/** Whether `host` may be reached, and at which address: the allowlist, then the resolved addresses. */
export const decide = async (allow: ReadonlyArray<string>, rawHost: string, resolve: Resolve = defaultResolve): Promise<Decision> => {
  const host = normalizeHost(rawHost)
  const listing = hostListing(allow, host)
  if (listing === undefined) return { ok: false, status: 403, message: refusalMessage(host) }
  if (netModule().isIP(host) !== 0) return { ok: true, address: host }
  let addresses: ReadonlyArray<{ readonly address: string }>
  try {
    addresses = await resolve(host)
  } catch (error) {
    return { ok: false, status: 502, message: `reins's sandbox proxy could not resolve ${host}: ${(error as Error).message}` }
  }
  const first = addresses[0]
  if (first === undefined) return { ok: false, status: 502, message: `reins's sandbox proxy could not resolve ${host}` }
  const inner = addresses.find((a) => isPrivateAddress(a.address))
  if (inner !== undefined && listing !== "exact")
    return {
      ok: false,
      status: 403,
      message: refusalMessage(host, `it resolves to ${inner.address}, a loopback or private address, which only a host listed by its exact name may`)
    }
  return { ok: true, address: first.address }
}

const respond = (client: Duplex, status: number, body: string) => {
  const text = `${body}\n`
  client.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Connection: close\r\nX-Reins-Sandbox: ${status === 403 ? "refused" : "error"}\r\n\r\n${text}`
  )
}

/** Splits `host:port` (`[v6]:port`); undefined when it is not one. */
const hostPort = (target: string, defaultPort?: number) => {
  const m = /^(\[[^\]]+\]|[^:/[\]]+)(?::(\d{1,5}))?$/.exec(target)
  const port = m?.[2] !== undefined ? Number(m[2]) : defaultPort
  if (!m?.[1] || port === undefined || port < 1 || port > 65535) return undefined
  return { host: m[1], port }
}

interface Request {
  readonly host: string
  readonly port: number
  /** What to send the host first: nothing for CONNECT (the client speaks after 200), the rewritten head for http. */
  readonly head: string | undefined
}

/** The request a head asks for; a string is why it cannot be served (400). */
export const parseHead = (head: string): Request | string => {
  const [line = "", ...headers] = head.split("\r\n")
  const [method, target, version] = line.split(" ")
  if (method === undefined || target === undefined || version === undefined || !/^HTTP\/1\.[01]$/.test(version)) return "not an HTTP/1.x request"
  if (method === "CONNECT") {
    const hp = hostPort(target)
    return hp === undefined ? `CONNECT needs host:port, not ${target}` : { ...hp, head: undefined }
  }
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return "this is a proxy: the request needs an absolute http:// URI (use CONNECT for https)"
  }
  if (url.protocol !== "http:") return `only http:// is forwarded as a request (${url.protocol} goes through CONNECT)`
  const hp = hostPort(url.host, 80)
  if (hp === undefined) return `no host in ${target}`
  // the host gets an origin-form request and one request a connection (no keep-alive across hosts)
  // the Host header is the judged target's (a different one would reach another site behind the same address)
  const kept = headers.filter((h) => h !== "" && !/^(proxy-connection|proxy-authorization|connection|keep-alive|host)\s*:/i.test(h))
  return { ...hp, head: [`${method} ${url.pathname}${url.search} ${version}`, `Host: ${url.host}`, ...kept, "Connection: close", "", ""].join("\r\n") }
}

/** Serves one proxy connection: reads the request head, decides, then relays both ways. */
export const serveConnection = (client: Duplex, options: ProxyOptions, onRefused: (host: string) => void, track: (socket: net.Socket) => void) => {
  let buffered = Buffer.alloc(0)
  // a head that never ends holds memory: it has HEAD_TIMEOUT_MS to arrive
  const headTimer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS)
  client.once("close", () => clearTimeout(headTimer))
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    const end = buffered.indexOf("\r\n\r\n")
    if (end === -1) {
      if (buffered.length > MAX_HEAD) {
        client.off("data", onData)
        respond(client, 400, "reins's sandbox proxy: the request head is too large")
      }
      return
    }
    client.off("data", onData)
    clearTimeout(headTimer)
    client.pause()
    const rest = buffered.subarray(end + 4)
    void relay(parseHead(buffered.subarray(0, end).toString("latin1")), rest)
  }
  const relay = async (request: Request | string, rest: Buffer) => {
    if (typeof request === "string") return respond(client, 400, `reins's sandbox proxy: ${request}`)
    const decision = await decide(options.allow, request.host, options.resolve)
    if (!decision.ok) {
      if (decision.status === 403) onRefused(normalizeHost(request.host))
      return respond(client, decision.status, decision.message)
    }
    const upstream = netModule().connect({ host: decision.address, port: request.port, allowHalfOpen: true })
    track(upstream)
    const timer = setTimeout(() => upstream.destroy(new Error("timed out")), options.connectTimeoutMs ?? 15_000)
    upstream.once("error", (error) => {
      clearTimeout(timer)
      if (upstream.connecting || upstream.bytesWritten === 0) {
        const status = /timed out/.test(error.message) ? 504 : 502
        respond(client, status, `reins's sandbox proxy could not reach ${request.host}:${request.port}: ${error.message}`)
      } else client.destroy()
    })
    upstream.once("connect", () => {
      clearTimeout(timer)
      if (request.head === undefined) client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      else upstream.write(request.head)
      if (rest.length > 0) upstream.write(rest)
      client.pipe(upstream)
      upstream.pipe(client)
      client.resume()
    })
    client.once("close", () => upstream.destroy())
    upstream.once("close", () => client.destroy())
  }
  client.on("data", onData)
  client.on("error", () => {})
}

/** The proxy: a channel for each sandboxed command; `close` ends every connection (the runtime is stopping). */
export const makeProxy = (options: ProxyOptions) => {
  const closers = new Set<() => void>()
  /** A channel for one command; `allow`: its own list (a grant widened it for that command), default the proxy's. */
  const openChannel = (allow?: ReadonlyArray<string>): Channel => {
    const refused: Array<string> = []
    const served = allow === undefined ? options : { ...options, allow }
    let open = 0
    const attach = (stream: Duplex) => {
      const codec = muxCodec()
      const upstreams = new Set<net.Socket>()
      const mux = muxEndpoint(codec, (frame) => stream.write(frame))
      let closed = false
      const close = () => {
        if (closed) return
        closed = true
        closers.delete(close)
        mux.closeAll()
        for (const u of upstreams) u.destroy()
        stream.destroy()
      }
      closers.add(close)
      stream.on("drain", () => mux.drained())
      stream.on(
        "data",
        codec.decoder(
          (kind, id, payload) => {
            if (kind !== codec.kinds.open) return mux.receive(kind, id, payload)
            // the bridge's end of this connection is carried by `inner`; the proxy serves `outer`
            const [inner, outer] = duplexPair()
            inner.on("close", () => outer.destroy())
            outer.on("close", () => {
              open--
              inner.destroy()
            })
            mux.attach(id, inner)
            if (++open > MAX_CONNECTIONS) return respond(outer, 503, `reins's sandbox proxy: more than ${MAX_CONNECTIONS} connections open at once`)
            serveConnection(
              outer,
              served,
              (host) => {
                if (!refused.includes(host)) refused.push(host)
              },
              (socket) => {
                upstreams.add(socket)
                socket.once("close", () => upstreams.delete(socket))
              }
            )
          },
          () => close()
        )
      )
      stream.on("end", close)
      stream.on("error", close)
      stream.on("close", close)
    }
    return { attach, refused }
  }
  return {
    openChannel,
    close: () => {
      for (const close of [...closers]) close()
    }
  }
}
