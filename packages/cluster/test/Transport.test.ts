// Security between runners (issue 28): every frame signed with the cluster's secret. A frame that is not the secret's — forged, altered, replayed, reordered, oversized, or from another secret —
// closes its connection before anything in it is read; the runners go on serving each other.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer } from "effect"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as net from "node:net"
import { clientLayer, SessionEntity, signed } from "../src/index.ts"
import { testTiming } from "../src/Testing.ts"
import { freePort, freshDatabase, pgLayer, pgUrl, settled, startRunner } from "./support.ts"

const cleanups: Array<() => unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const SECRET = "a-secret-of-the-cluster-0123456789"
const binary = Effect.runSync(Effect.provide(RpcSerialization.RpcSerialization, RpcSerialization.layerSchemaBinary()))
const message = (id: string) => ({ _tag: "Interrupt" as const, requestId: id })
const pair = (secret = SECRET, now: () => number = Date.now) => {
  let refused = 0
  const serialization = signed(binary, secret, () => refused++, now)
  return { parser: serialization.makeUnsafe(), refused: () => refused }
}
const bytes = (data: Uint8Array | string | undefined) => (typeof data === "string" ? new TextEncoder().encode(data) : data!)
const closes = (decode: () => unknown) => {
  try {
    decode()
  } catch (error) {
    return (error as { _tag?: string })._tag
  }
  return "read"
}

describe("signed frames", () => {
  test("frames in any chunking are read in order, each once", () => {
    const sender = pair().parser
    const frames = [sender.encode(message("a")), sender.encode(message("b")), sender.encode(message("c"))].map(bytes)
    const all = new Uint8Array(Buffer.concat(frames))
    const receiver = pair().parser
    const read: Array<unknown> = []
    // one byte at a time, then the rest
    for (let i = 0; i < all.length; i++) read.push(...receiver.decode(all.subarray(i, i + 1)))
    expect(read).toEqual([message("a"), message("b"), message("c")])
  })

  test("a frame encoded by one connection's parser is read by the next one's (Effect's client sends a frame encoded before a reconnect on the new connection)", () => {
    const before = pair().parser
    before.encode(message("earlier"))
    const late = bytes(before.encode(message("sent after the reconnect")))
    expect(pair().parser.decode(late)).toEqual([message("sent after the reconnect")])
  })

  test("a large frame trickled in 1 KiB pieces is read once whole", () => {
    const big = { _tag: "Interrupt" as const, requestId: "x".repeat(2_000_000) }
    const frame = bytes(pair().parser.encode(big))
    const receiver = pair().parser
    let read: ReadonlyArray<unknown> = []
    for (let i = 0; i < frame.length; i += 1024) read = [...read, ...receiver.decode(frame.subarray(i, i + 1024))]
    expect(read).toEqual([big])
  })

  const variants: Array<[string, (frames: Array<Uint8Array>) => Uint8Array]> = [
    ["a payload byte altered", ([f]) => Uint8Array.from(f!, (b, i) => (i === f!.length - 1 ? b ^ 1 : b))],
    ["a signature byte altered", ([f]) => Uint8Array.from(f!, (b, i) => (i === 10 ? b ^ 1 : b))],
    ["the length altered", ([f]) => Uint8Array.from(f!, (b, i) => (i === 3 ? b - 1 : b))],
    ["a frame sent more than a minute ago (a late replay)", () => bytes(pair(SECRET, () => Date.now() - 61_000).parser.encode(message("x")))],
    ["a frame stamped more than a minute ahead", () => bytes(pair(SECRET, () => Date.now() + 61_000).parser.encode(message("x")))],
    ["a first frame claiming more than 4 MiB", () => new Uint8Array([0x00, 0x50, 0x00, 0x00, ...new Array(60).fill(0)])],
    ["a frame signed with another secret", () => bytes(pair("another-secret-0123456789").parser.encode(message("x")))],
    [
      "unsigned frames of the library's own format",
      () => new Uint8Array(Buffer.concat(Array.from({ length: 8 }, (_, i) => bytes(binary.makeUnsafe().encode(message(`x${i}`))))))
    ],
    ["a length past 16 MiB", () => new Uint8Array([0xff, 0xff, 0xff, 0xff, ...new Array(60).fill(0)])],
    ["an HTTP request (a scanner)", () => new TextEncoder().encode(`GET / HTTP/1.1\r\nHost: x\r\n${"x".repeat(64)}\r\n\r\n`)]
  ]
  test.each(variants)("%s closes the connection, nothing of it read", (_name, forge) => {
    const sender = pair().parser
    const frames = [sender.encode(message("a")), sender.encode(message("b"))].map(bytes)
    const receiver = pair()
    const forged = forge(frames)
    // whatever came before the bad frame was read; the bad one and everything after it are not
    let read: ReadonlyArray<unknown> = []
    const outcome = closes(() => {
      read = receiver.parser.decode(forged)
    })
    expect(outcome).toBe("MaxBufferSizeExceeded")
    expect(read).toEqual([])
    expect(receiver.refused()).toBe(1)
    // and the connection stays closed
    expect(closes(() => receiver.parser.decode(frames[0]!))).toBe("MaxBufferSizeExceeded")
  })
})

describe.skipIf(pgUrl === undefined)("runners with a secret", () => {
  test("a client with the secret is answered; a connection with another secret or none is closed, and the runner says so", async () => {
    const db = await freshDatabase(pgUrl!)
    cleanups.push(db.drop)
    const runner = startRunner(db.url, freePort(), undefined, { secret: SECRET })
    cleanups.push(() => runner.proc.kill(9))
    await runner.said((l) => l.ready === true)
    await settled(db.url, [runner.address], 300, testTiming.lockRefreshMs)
    const ask = (secret: string) =>
      Effect.scoped(
        Effect.gen(function* () {
          const sessions = yield* SessionEntity.client
          return yield* sessions("ses_secret").Abort({ sessionID: "ses_secret" })
        })
      ).pipe(Effect.provide(Layer.fresh(clientLayer(testTiming, { secret })).pipe(Layer.provide(pgLayer(db.url)))))
    expect(await Effect.runPromise(ask(SECRET))).toEqual({ aborted: false, runner: runner.address })

    // a raw connection that sends the library's own unsigned frame
    const raw = net.connect(Number(runner.address.split(":")[1]), "127.0.0.1")
    raw.write(new Uint8Array(Buffer.concat(Array.from({ length: 8 }, () => bytes(binary.makeUnsafe().encode({ _tag: "Ping" }))))))
    await new Promise<void>((resolve) => raw.once("close", () => resolve()))
    // another secret's client: never answered (its frames refused), while the runner tells why
    const wrong = Effect.runFork(ask("not-the-cluster-secret-0000"))
    await new Promise<void>((resolve) => {
      const look = setInterval(() => {
        if ((runner.log() + runner.stderr()).includes("not signed with the cluster's secret")) {
          clearInterval(look)
          resolve()
        }
      }, 50)
    })
    expect(runner.lines.filter((l) => l.handling === "Abort")).toHaveLength(1)
    // and the runner still answers its own
    expect(await Effect.runPromise(ask(SECRET))).toEqual({ aborted: false, runner: runner.address })
    expect(runner.lines.filter((l) => l.handling === "Abort")).toHaveLength(2)
    // the other secret's message still unanswered: given up
    expect(wrong.pollUnsafe()).toBeUndefined()
    await Effect.runPromise(Fiber.interrupt(wrong))
  }, 60_000)
})
