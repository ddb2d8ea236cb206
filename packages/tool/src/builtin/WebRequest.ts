// One HTTP exchange of a webfetch call: the host resolved once by reins, the connection made to the address
// that was checked (no second lookup for a rebinding name to change), the body read up to a cap (decompressed
// bytes counted, so a small gzip bomb is as large as it unpacks), and every failure a message the model can
// act on. Interrupting the effect destroys the request.
import { Context, Effect } from "effect"
import type { Resolve } from "@reins/sandbox"
import type * as http from "node:http"
import { ToolError } from "../Tool.ts"
import type { WebTarget } from "./WebUrl.ts"

/** webfetch's limits and how it resolves names (tests map names to their servers). */
export interface WebFetchOptions {
  readonly resolve: Resolve
  /** Bytes a response body may have (after decompression); past them the fetch stops. */
  readonly maxBytes: number
  readonly maxRedirects: number
  readonly defaultTimeoutMs: number
  readonly maxTimeoutMs: number
}

// loaded on first use: a run that fetches nothing does not load node's HTTP clients
const dns = () => process.getBuiltinModule("node:dns")
const net = () => process.getBuiltinModule("node:net")
const zlib = () => process.getBuiltinModule("node:zlib")
const client = (protocol: string) => (protocol === "https:" ? process.getBuiltinModule("node:https") : process.getBuiltinModule("node:http"))

/** webfetch's settings: 5 MiB, 5 redirects, 30 s (at most 120 s), names through `dns.lookup`. */
export const WebFetchSettings = Context.Reference<WebFetchOptions>("reins/tool/WebFetchSettings", {
  defaultValue: () => ({
    resolve: (host) => dns().promises.lookup(host, { all: true, verbatim: true }),
    maxBytes: 5 * 1024 * 1024,
    maxRedirects: 5,
    defaultTimeoutMs: 30_000,
    maxTimeoutMs: 120_000
  })
})

const failed = (message: string) => new ToolError({ reason: "failed", message })

/** An address to connect to, with its family. */
export interface Address {
  readonly address: string
  readonly family: 4 | 6
}

const familyOf = (address: string): 4 | 6 => (net().isIP(address) === 6 ? 6 : 4)

/** Every address `target`'s host has (an IP literal is its own); a lookup that fails is the model's to read. */
export const resolveTarget = (target: WebTarget, resolve: Resolve): Effect.Effect<ReadonlyArray<Address>, ToolError> => {
  if (net().isIP(target.host) !== 0) return Effect.succeed([{ address: target.host, family: familyOf(target.host) }])
  return Effect.tryPromise({
    try: () => resolve(target.host),
    catch: (error) =>
      failed(`Could not resolve the host ${target.host} (${codeOf(error) ?? messageOf(error)}): check the URL's spelling; the site may not exist.`)
  }).pipe(
    Effect.flatMap((found) =>
      found.length === 0
        ? Effect.fail(failed(`The host ${target.host} has no address: check the URL's spelling.`))
        : Effect.succeed(found.map((a) => ({ address: a.address, family: familyOf(a.address) })))
    )
  )
}

/** What one request answered: a redirect's Location is read, any other body up to the cap. */
export interface Exchange {
  readonly status: number
  readonly statusText: string
  readonly contentType: string | undefined
  readonly location: string | undefined
  readonly body: Uint8Array
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A connection's failure, said for the model. */
const connectionFailure = (target: WebTarget, address: Address, error: unknown) => {
  const code = codeOf(error)
  const where = `${target.url.host}${target.host === address.address ? "" : ` (${address.address})`}`
  if (code === "ECONNREFUSED") return failed(`Connection refused by ${where}: nothing is listening there. Check the URL and port.`)
  if (code === "ECONNRESET" || code === "EPIPE") return failed(`The connection to ${where} was reset before the response was complete: try again later.`)
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return failed(`${where} cannot be reached from here (${code}).`)
  if (code !== undefined && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
    return failed(`The TLS certificate of ${target.url.host} was not accepted (${code}): the page was not fetched.`)
  return failed(`Fetching ${target.subject} failed: ${code ? `${code}: ` : ""}${messageOf(error)}`)
}

/** The cap said for the model. */
export const tooLarge = (target: WebTarget, maxBytes: number, size?: number) =>
  failed(
    `The response from ${target.subject} is larger than ${formatBytes(maxBytes)}${size === undefined ? "" : ` (${formatBytes(size)})`}, webfetch's limit: it was not read. ` +
      "Fetch a more specific page, or download it with a command if the task needs all of it."
  )

export const formatBytes = (n: number) =>
  n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`

/** The decoder of one content coding; `identity` needs none; undefined for one reins cannot undo. */
const codingDecoder = (coding: string) => {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib().createGunzip()
    case "deflate":
      return zlib().createInflate()
    case "br":
      return zlib().createBrotliDecompress()
    default:
      return undefined
  }
}

/** The content codings of a response, the last applied first; "unknown" names one that cannot be undone (`zstd`). */
const decodersFor = (header: string | undefined): { readonly decoders: ReadonlyArray<NodeJS.ReadWriteStream> } | { readonly unknown: string } => {
  const codings = (header ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity")
    .reverse()
  const unknown = codings.find((c) => codingDecoder(c) === undefined)
  return unknown !== undefined ? { unknown } : { decoders: codings.map((c) => codingDecoder(c)!) }
}

/** GETs `target` from `address` (the host's name kept for the Host header and TLS), reading at most `maxBytes`. */
export const exchange = (target: WebTarget, address: Address, options: { readonly accept: string; readonly maxBytes: number }) =>
  Effect.callback<Exchange, ToolError>((resume) => {
    let done = false
    // the decoders and the response stop with the request: an inflating bomb stops burning CPU at the cap
    const streams: Array<{ destroy(): void }> = []
    const stop = () => {
      request.destroy()
      for (const stream of streams) stream.destroy()
    }
    const finish = (effect: Effect.Effect<Exchange, ToolError>) => {
      if (done) return
      done = true
      stop()
      resume(effect)
    }
    const request = client(target.url.protocol).request(
      target.url,
      {
        method: "GET",
        headers: {
          "User-Agent": "reins-webfetch (+https://github.com/reins-dev/reins)",
          Accept: options.accept,
          "Accept-Language": "en-US,en;q=0.9",
          "Accept-Encoding": "gzip, deflate, br"
        },
        // no pooled connection, no proxy from the environment: this socket, to this address
        agent: false,
        lookup: ((_host: string, opts: { all?: boolean }, callback: (...args: Array<unknown>) => void) =>
          opts.all ? callback(null, [address]) : callback(null, address.address, address.family)) as unknown as http.RequestOptions["lookup"]
      },
      (response) => {
        const status = response.statusCode ?? 0
        const base = {
          status,
          statusText: response.statusMessage ?? "",
          contentType: response.headers["content-type"],
          location: response.headers.location
        }
        if (status >= 300 && status < 400 && base.location !== undefined) return finish(Effect.succeed({ ...base, body: new Uint8Array() }))
        const declared = Number(response.headers["content-length"])
        if (Number.isFinite(declared) && declared > options.maxBytes && response.headers["content-encoding"] === undefined)
          return finish(Effect.fail(tooLarge(target, options.maxBytes, declared)))
        streams.push(response)
        const coded = decodersFor(response.headers["content-encoding"])
        if ("unknown" in coded)
          return finish(
            Effect.fail(failed(`${target.subject} answered in the "${coded.unknown}" content coding, which webfetch cannot decode: try another URL.`))
          )
        let body: NodeJS.ReadableStream = response
        for (const decoder of coded.decoders) {
          streams.push(decoder as unknown as { destroy(): void })
          body = body.pipe(decoder)
        }
        const chunks: Array<Buffer> = []
        let size = 0
        body.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > options.maxBytes) return finish(Effect.fail(tooLarge(target, options.maxBytes)))
          chunks.push(chunk)
        })
        body.on("end", () => finish(Effect.succeed({ ...base, body: new Uint8Array(Buffer.concat(chunks)) })))
        body.on("error", (error) =>
          finish(
            Effect.fail(failed(`The response from ${target.subject} could not be read (${codeOf(error) ?? messageOf(error)}): try again, or another URL.`))
          )
        )
        response.on("error", (error) => finish(Effect.fail(connectionFailure(target, address, error))))
      }
    )
    request.on("error", (error) => finish(Effect.fail(connectionFailure(target, address, error))))
    request.end()
    // interrupted (the turn, the timeout): the socket goes
    return Effect.sync(() => {
      done = true
      stop()
    })
  })
