// Mutual TLS between runners (issue 28): with the cluster's certificates a runner listens only for TLS clients whose
// certificate the cluster's CA signed, and reaches the others over TLS. A plain TCP connection, a client with a
// certificate of another CA or none, and a server of another CA are all refused at the handshake.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as tls from "node:tls"
import { clientLayer, SessionEntity } from "../src/index.ts"
import { testTiming } from "../src/Testing.ts"
import { freePort, freshDatabase, pgLayer, pgUrl, settled, startRunner } from "./support.ts"

const cleanups: Array<() => unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const SECRET = "a-secret-of-the-cluster-0123456789"
const openssl = Bun.which("openssl")

/** A CA and a certificate it signed for 127.0.0.1, in a directory of their own (openssl, as an operator would make them). */
const makeCerts = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reins-tls-${name}-`))
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }))
  const run = (...args: Array<string>) => {
    const done = Bun.spawnSync([openssl!, ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" })
    if (done.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${done.stderr.toString()}`)
  }
  run(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    "ca-key.pem",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    `/CN=${name} CA`
  )
  run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "runner-key.pem", "-out", "runner.csr", "-subj", "/CN=runner")
  fs.writeFileSync(path.join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
  run(
    "x509",
    "-req",
    "-in",
    "runner.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca-key.pem",
    "-CAcreateserial",
    "-out",
    "runner.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf"
  )
  const read = (file: string) => fs.readFileSync(path.join(dir, file), "utf8")
  return { dir, cert: read("runner.pem"), key: read("runner-key.pem"), ca: read("ca.pem") }
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
