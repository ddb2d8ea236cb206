import { Effect, Layer } from "effect"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import { createHmac, timingSafeEqual } from "node:crypto"

/** How runners know each other: a shared secret every frame is signed with. */
export interface TransportSecurity {
  /** The same on every runner (`REINS_CLUSTER_SECRET`): a frame without its signature closes the connection. */
  readonly secret?: string
}

const HEADER = 4 + 32
/** A frame longer than this is no runner's: the connection closes (the library's own frames stop at 16 MiB). */
const MAX_FRAME = 64 * 1024 * 1024

const bytesOf = (data: Uint8Array | string) => (typeof data === "string" ? new TextEncoder().encode(data) : data)

/** Closes the connection: the RPC server closes a socket whose parser throws this (and answers any other throw on it). */
const refuse = () => new RpcSerialization.MaxBufferSizeExceeded({ maxBufferSize: 0 })

/**
 * `inner`'s frames, each signed: [payload length: u32][HMAC-SHA256(key, frame number: u64 ‖ payload)][payload]. The
 * frame number counts each direction of one connection from 0, so a frame cannot be dropped, reordered or repeated
 * within it. A frame that fails its check closes the connection before anything in it is read; `onRefused` is told.
 * It authenticates runners to each other; it does not hide the traffic, nor stop a replay of a whole recorded
 * connection by someone on the path: on a network you do not trust, run the runners' traffic over a private network
 * or a tunnel (WireGuard, an SSH or stunnel tunnel).
 */
export const signed = (
  inner: RpcSerialization.RpcSerialization["Service"],
  secret: string,
  onRefused: () => void
): RpcSerialization.RpcSerialization["Service"] => {
  const key = createHmac("sha256", secret).update("reins cluster frames v1").digest()
  const mac = (n: bigint, payload: Uint8Array) => {
    const count = Buffer.alloc(8)
    count.writeBigUInt64BE(n)
    return createHmac("sha256", key).update(count).update(payload).digest()
  }
  return RpcSerialization.RpcSerialization.of({
    contentType: `${inner.contentType}+signed`,
    includesFraming: true,
    codecFor: inner.codecFor,
    makeUnsafe: () => {
      const parser = inner.makeUnsafe()
      let sent = 0n
      let received = 0n
      let buffer: Buffer = Buffer.alloc(0)
      let closed = false
      const frame = (payload: Uint8Array) => {
        const header = Buffer.alloc(HEADER)
        header.writeUInt32BE(payload.length, 0)
        mac(sent++, payload).copy(header, 4)
        return new Uint8Array(Buffer.concat([header, payload]))
      }
      return {
        encode: (message) => {
          const encoded = parser.encode(message)
          return encoded === undefined ? undefined : frame(bytesOf(encoded))
        },
        decode: (data) => {
          if (closed) throw refuse()
          buffer = buffer.length === 0 ? Buffer.from(bytesOf(data)) : Buffer.concat([buffer, bytesOf(data)])
          const out: Array<unknown> = []
          while (buffer.length >= HEADER) {
            const length = buffer.readUInt32BE(0)
            if (length > MAX_FRAME) {
              closed = true
              onRefused()
              throw refuse()
            }
            if (buffer.length < HEADER + length) break
            const payload = buffer.subarray(HEADER, HEADER + length)
            if (!timingSafeEqual(buffer.subarray(4, HEADER), mac(received, payload))) {
              closed = true
              onRefused()
              throw refuse()
            }
            received++
            out.push(...parser.decode(new Uint8Array(payload)))
            buffer = buffer.subarray(HEADER + length)
          }
          return out
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
