import { Effect, Layer } from "effect"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import { createHmac, timingSafeEqual } from "node:crypto"

/** How runners know each other: a shared secret every frame is signed with. */
export interface TransportSecurity {
  /** The same on every runner (`REINS_CLUSTER_SECRET`): a frame without its signature closes the connection. */
  readonly secret?: string
  /** Mutual TLS between runners (`REINS_CLUSTER_TLS_*`): traffic encrypted, each side's certificate checked against `ca`. */
  readonly tls?: ClusterTls
}

/** PEM texts: this runner's certificate and key (it shows them as a server and as a client), and the CA that signed every runner's. */
export interface ClusterTls {
  readonly cert: string
  readonly key: string
  readonly ca: string
}

// [payload length: u32][sent at: u64 ms][HMAC-SHA256: 32 bytes][payload]
const HEADER = 4 + 8 + 32
/** A frame longer than this is no runner's (the library's own stop at 16 MiB): the connection closes. */
const MAX_FRAME = 16 * 1024 * 1024 + 1024
/** Until a frame on the connection has checked out, a longer one is refused before it is buffered (a stranger's). */
const FIRST_FRAME = 4 * 1024 * 1024
/** A frame sent longer ago than this (or this far in the future) is refused: the runners' clocks must agree to within it. */
const MAX_AGE_MS = 60_000

const bytesOf = (data: Uint8Array | string) => (typeof data === "string" ? new TextEncoder().encode(data) : data)

/** Closes the connection: the RPC server closes a socket whose parser throws this (and answers any other throw on it). */
const refuse = () => new RpcSerialization.MaxBufferSizeExceeded({ maxBufferSize: 0 })

/**
 * `inner`'s frames, each signed: [payload length: u32][sent at: u64 ms][HMAC-SHA256(key, length ‖ sent at ‖ payload)]
 * [payload]. A frame that fails its check, is older than a minute (or that far ahead), or is longer than a runner
 * sends (4 MiB until one frame on the connection has checked out, then 16 MiB) closes the connection before anything
 * in it is read; `onRefused` is told. A frame is buffered as chunks and joined once, when it is whole.
 * It authenticates runners to each other; it does not hide the traffic, and someone on the path could replay a
 * recorded frame within its minute: on a network you do not trust, run the runners' traffic over a private network
 * or a tunnel (WireGuard, an SSH or stunnel tunnel). (Frames carry no per-connection counter: Effect's RPC client
 * encodes with one parser a frame it sends on the next connection.)
 */
export const signed = (
  inner: RpcSerialization.RpcSerialization["Service"],
  secret: string,
  onRefused: () => void,
  now: () => number = Date.now
): RpcSerialization.RpcSerialization["Service"] => {
  const key = createHmac("sha256", secret).update("reins cluster frames v2").digest()
  const mac = (head: Uint8Array, payload: Uint8Array) => createHmac("sha256", key).update(head).update(payload).digest()
  return RpcSerialization.RpcSerialization.of({
    contentType: `${inner.contentType}+signed`,
    includesFraming: true,
    codecFor: inner.codecFor,
    makeUnsafe: () => {
      const parser = inner.makeUnsafe()
      let chunks: Array<Buffer> = []
      let size = 0
      // the length of the frame being read, once its header is in
      let length: number | undefined
      let verified = false
      let closed = false
      const close = () => {
        closed = true
        chunks = []
        onRefused()
        return refuse()
      }
      return {
        encode: (message) => {
          const encoded = parser.encode(message)
          if (encoded === undefined) return undefined
          const payload = bytesOf(encoded)
          const header = Buffer.alloc(HEADER)
          header.writeUInt32BE(payload.length, 0)
          header.writeBigUInt64BE(BigInt(now()), 4)
          mac(header.subarray(0, 12), payload).copy(header, 12)
          return new Uint8Array(Buffer.concat([header, payload]))
        },
        decode: (data) => {
          if (closed) throw refuse()
          const bytes = Buffer.from(bytesOf(data))
          chunks.push(bytes)
          size += bytes.length
          const out: Array<unknown> = []
          for (;;) {
            const need = length === undefined ? HEADER : HEADER + length
            if (size < need) return out
            // joined once what is needed is in: a frame trickled in byte by byte is not copied again at each byte
            const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
            chunks = [all]
            if (length === undefined) {
              const declared = all.readUInt32BE(0)
              if (declared > (verified ? MAX_FRAME : FIRST_FRAME)) throw close()
              length = declared
              continue
            }
            const payload = all.subarray(HEADER, need)
            const sentAt = Number(all.readBigUInt64BE(4))
            if (!timingSafeEqual(all.subarray(12, HEADER), mac(all.subarray(0, 12), payload)) || Math.abs(now() - sentAt) > MAX_AGE_MS) throw close()
            verified = true
            out.push(...parser.decode(new Uint8Array(payload)))
            const rest = all.subarray(need)
            chunks = rest.length > 0 ? [rest] : []
            size = rest.length
            length = undefined
          }
        }
      }
    }
  })
}

/** The runners' frames: schema-encoded binary, signed with the secret when there is one. */
export const serializationLayer = (security: TransportSecurity) => {
  const binary = RpcSerialization.layerSchemaBinary()
  const secret = security.secret
  if (secret === undefined) return binary
  return Layer.effect(
    RpcSerialization.RpcSerialization,
    Effect.gen(function* () {
      const inner = yield* RpcSerialization.RpcSerialization
      const context = yield* Effect.context<never>()
      // told once a minute at most: a scanner knocking on the port is not news each time
      let lastTold = 0
      const told = () => {
        const now = Date.now()
        if (now - lastTold < 60_000) return
        lastTold = now
        Effect.runForkWith(context)(
          Effect.logWarning(
            "A connection to this runner sent a frame not signed with the cluster's secret: it was closed. Every runner needs the same REINS_CLUSTER_SECRET."
          )
        )
      }
      return signed(inner, secret, told)
    })
  ).pipe(Layer.provide(binary))
}
