// Mutual TLS between runners (issue 28): with the cluster's certificates a runner listens only for TLS clients whose
// certificate the cluster's CA signed, and reaches the others over TLS. A plain TCP connection, a client with a
// certificate of another CA or none, and a server of another CA are all refused at the handshake.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import { clientLayer, SessionEntity } from "../src/index.ts"
import { makeCertificates, testTiming } from "../src/Testing.ts"
import { freePort, freshDatabase, pgLayer, pgUrl, settled, startRunner } from "./support.ts"

const cleanups: Array<() => unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const SECRET = "a-secret-of-the-cluster-0123456789"
const openssl = Bun.which("openssl")

const makeCerts = (name: string) => {
  const made = makeCertificates(name)
  cleanups.push(made.remove)
  return made
}

/** Resolves once a raw connection to the runner has closed: "closed" before a TLS session stood, "secure-then-closed" after (TLS 1.3: the client's handshake ends before the server checks its certificate). */
const ends = (socket: net.Socket | tls.TLSSocket) =>
  new Promise<string>((resolve) => {
    let secure = false
    socket.once("secureConnect", () => (secure = true))
    socket.on("error", () => undefined)
    socket.once("close", () => resolve(secure ? "secure-then-closed" : "closed"))
  })

describe.skipIf(pgUrl === undefined || openssl === null)("runners over mutual TLS", () => {
  test("a client with a certificate of the cluster's CA is answered; plain TCP, a certificate of another CA, no certificate, and a server of another CA are refused", async () => {
    const cluster = makeCerts("cluster")
    const stranger = makeCerts("stranger")
    const db = await freshDatabase(pgUrl!)
    cleanups.push(db.drop)
    const runner = startRunner(db.url, freePort(), undefined, { secret: SECRET, tlsDir: cluster.dir })
    cleanups.push(() => runner.proc.kill(9))
    await runner.said((l) => l.ready === true)
    await settled(db.url, [runner.address], 300, testTiming.lockRefreshMs)
    const port = Number(runner.address.split(":")[1])
    const ask = (certs: { cert: string; key: string; ca: string }) =>
      Effect.scoped(
        Effect.gen(function* () {
          const sessions = yield* SessionEntity.client
          return yield* sessions("ses_tls").Abort({ sessionID: "ses_tls" })
        })
      ).pipe(Effect.provide(Layer.fresh(clientLayer(testTiming, { secret: SECRET, tls: certs })).pipe(Layer.provide(pgLayer(db.url)))))
    expect(await Effect.runPromise(ask(cluster))).toEqual({ aborted: false, runner: runner.address })

    // plain TCP with the library's bytes: no TLS session, closed
    const raw = net.connect(port, "127.0.0.1")
    raw.write("not a TLS client hello")
    expect(await ends(raw)).toBe("closed")
    // a client whose certificate another CA signed (it trusts the runner): the runner ends the session
    const foreign = tls.connect({ port, host: "127.0.0.1", ca: cluster.ca, cert: stranger.cert, key: stranger.key })
    expect(["closed", "secure-then-closed"]).toContain(await ends(foreign))
    // no client certificate at all
    const anonymous = tls.connect({ port, host: "127.0.0.1", ca: cluster.ca })
    expect(["closed", "secure-then-closed"]).toContain(await ends(anonymous))
    // a client that trusts only another CA does not take the runner's certificate
    const wary = tls.connect({ port, host: "127.0.0.1", ca: stranger.ca, cert: stranger.cert, key: stranger.key })
    expect(await ends(wary)).toBe("closed")
    // none of them reached the entity; the runner goes on answering its own
    expect(runner.lines.filter((l) => l.handling === "Abort")).toHaveLength(1)
    expect(await Effect.runPromise(ask(cluster))).toEqual({ aborted: false, runner: runner.address })
    expect(runner.lines.filter((l) => l.handling === "Abort")).toHaveLength(2)
  }, 60_000)
})
