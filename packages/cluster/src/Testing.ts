// For tests of a cluster (this package's and the runtime's): a fresh PostgreSQL database, the wait until the
// shards have settled on the runners, a free port, and a runner process's JSON lines.
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RUNNER_APPLICATION_PREFIX } from "./Health.ts"
import { type ClusterTiming, defaultTiming } from "./Timing.ts"

/** Runs one statement on its own short-lived connection; its rows. */
const query = <A extends object>(url: string, statement: string): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      return yield* sql.unsafe<A>(statement)
    }).pipe(Effect.provide(Reactivity.layer), Effect.scoped, Effect.orDie)
  )
const admin = (url: string, statement: string): Promise<void> => query(url, statement).then(() => undefined)

/**
 * A new empty database on the server at `url` (a database, not a schema: the cluster's shard locks are advisory locks,
 * which are per database), and the function that drops it with its connections.
 */
export const freshDatabase = async (url: string) => {
  // those a test killed outright left behind go first: named with their creation time, and only those an hour old
  // (another test process running at the same time may have made one a moment ago, not yet connected to); DROP
  // DATABASE cannot run in a block
  const stale = await query<{ datname: string }>(
    url,
    `SELECT datname FROM pg_database WHERE datname LIKE 'reins\\_cluster\\_t\\_%'
     AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = pg_database.datname)`
  )
  const hourAgo = Date.now() - 3_600_000
  for (const { datname } of stale) {
    const made = Number(/^reins_cluster_t_(\d+)_/.exec(datname)?.[1] ?? 0)
    if (made < hourAgo) await admin(url, `DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined)
  }
  const name = `reins_cluster_t_${Date.now()}_${crypto.randomUUID().replaceAll("-", "")}`
  await admin(url, `CREATE DATABASE ${name}`)
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return { url: parsed.toString(), drop: () => admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** Which runner holds each shard's lock now: on PostgreSQL the shard locks are advisory locks of the runner's connection (named after it). */
const shardHolders = (url: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      const rows = yield* sql.unsafe<{ lock: string; runner: string }>(
        `SELECT l.objid::text AS lock, a.application_name AS runner FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND a.datname = current_database() AND starts_with(a.application_name, $1)
         ORDER BY l.objid`,
        [RUNNER_APPLICATION_PREFIX]
      )
      return new Map(rows.map((row) => [row.lock, row.runner.slice(RUNNER_APPLICATION_PREFIX.length)]))
    }).pipe(Effect.provide(Reactivity.layer), Effect.scoped, Effect.orDie)
  )

/**
 * Resolves once the shards have moved to where they belong with these runners: every shard locked, each of `runners`
 * holding some, and nothing moved for a whole lock refresh (a runner that joined takes its share over a few
 * refreshes; a message sent meanwhile is still handled once, by whichever runner holds its shard then).
 */
export const settled = async (url: string, runners: ReadonlyArray<string>, shards: number, refreshMs: number, deadlineMs = 45_000) => {
  let last = ""
  let since = Date.now()
  const deadline = Date.now() + deadlineMs
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the shards did not settle on ${runners.join(", ")} in ${deadlineMs} ms; last seen: ${last.slice(0, 1500)}`)
    const holders = await shardHolders(url)
    const key = JSON.stringify([...holders])
    const owners = new Set(holders.values())
    if (key !== last) {
      last = key
      since = Date.now()
    } else if (holders.size === shards && runners.every((r) => owners.has(r)) && owners.size === runners.length && Date.now() - since >= refreshMs)
      return holders
    await Bun.sleep(250)
  }
}

/**
 * The shard of the "default" group an entity id (or a singleton's name) falls on with `shards` shards a group:
 * effect/cluster's routing hash (its internal/hash.ts, not exported; copied, as a test's view of where things run).
 */
export const shardOf = (id: string, shards: number) => {
  let h = 5381
  for (let i = id.length; i > 0; ) h = (h * 33) ^ id.charCodeAt(--i)
  const hash = (h & 0xbfffffff) | ((h >>> 1) & 0x40000000)
  return Math.abs(hash % shards) + 1
}

/** The key `settled` gives a shard of the "default" group under: its advisory lock's number (group 1 × 1,000,000 + shard). */
export const lockOfShard = (shard: number) => String(1_000_000 + shard)

/** The cluster singleton that checks the runners' health (pings them; one runner runs it, on its shard). */
export const healthCheckSingleton = "effect/cluster/Sharding/RunnerHealth"

/**
 * A CA and a certificate it signed for 127.0.0.1 (server and client use), made with openssl as an operator would, in
 * a directory of their own: ca.pem, runner.pem, runner-key.pem (and ext.cnf, not a PEM file). Needs `openssl`.
 */
export const makeCertificates = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reins-tls-${name}-`))
  const run = (...args: Array<string>) => {
    const done = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" })
    if (done.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${done.stderr.toString()}`)
  }
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  run("req", "-x509", ...ec, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", `/CN=${name} CA`)
  run("req", ...ec, "-keyout", "runner-key.pem", "-out", "runner.csr", "-subj", "/CN=runner")
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
  return { dir, cert: read("runner.pem"), key: read("runner-key.pem"), ca: read("ca.pem"), remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** A PostgreSQL client layer for `url`. */
export const pgLayer = (url: string) => PgClient.layer({ url: Redacted.make(url), applicationName: "reins-cluster-test" }).pipe(Layer.provide(Reactivity.layer))

/** A port free on 127.0.0.1 now. */
export const freePort = () => {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

/** One JSON object a line from a child process's stdout (other lines are kept as its log). */
export const jsonLines = <L extends object>(
  proc: { readonly stdout: ReadableStream<Uint8Array>; readonly stderr: ReadableStream<Uint8Array>; readonly exited: Promise<number> },
  name: string
) => {
  const lines: Array<L> = []
  const waiters = new Set<() => void>()
  let stderr = ""
  let log = ""
  void (async () => {
    let rest = ""
    for await (const chunk of proc.stdout) {
      rest += new TextDecoder().decode(chunk)
      const parts = rest.split("\n")
      rest = parts.pop() ?? ""
      for (const part of parts) {
        try {
          if (part.startsWith("{")) lines.push(JSON.parse(part))
          else log += `${part}\n`
        } catch {
          log += `${part}\n`
        }
      }
      for (const wake of waiters) wake()
    }
  })()
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  /** Resolves with the first line (said so far or later) that `match` accepts; rejects if the process exits first. */
  const said = (match: (line: L) => boolean) =>
    new Promise<L>((resolve, reject) => {
      const check = () => {
        const found = lines.find(match)
        if (found !== undefined) {
          waiters.delete(check)
          resolve(found)
        }
      }
      waiters.add(check)
      check()
      void proc.exited.then((code) => {
        check()
        if (!lines.some(match)) reject(new Error(`${name} exited (${code}) before saying it: ${stderr.slice(-2000)}`))
      })
    })
  return { lines, said, stderr: () => stderr, log: () => log }
}

/** The secret the test runners sign their frames with. */
export const secret = "reins-cluster-test-secret"

/**
 * A faster health check and polls than the defaults (a kill is noticed sooner); the locks' refresh as the defaults',
 * so a loaded 2-core machine does not make a runner give its shards up.
 */
export const testTiming: ClusterTiming = { ...defaultTiming, healthCheckMs: 500, pollMs: 250, assignmentsMs: 500 }
