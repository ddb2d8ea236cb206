// Benchmark (issue 28): `reins serve --runner` with 1, 2 and 3 runners on one machine and one PostgreSQL database,
// against one `reins serve` on SQLite and one on PostgreSQL (no cluster) in the same run.
// SESSIONS sessions (default 12) each run one turn of STEPS bash steps (default 10), prompted at once, round robin
// through the servers; a client follows every event on the first server's stream. Two kinds of step: CPU-bound
// (`echo N`: the runtime's own work) and I/O-bound (`sleep 0.2; echo N`: the command waits). Each server runs a
// warm-up turn with one command first. Then event latency at a moderate load (MODERATE sessions, default 3, of
// LATENCY_STEPS steps, default 30: enough samples that a p99 is not just the slowest one; prompted a second apart), and failover: 3 fresh runners, a turn holding a long command, its owner killed -9;
// RUNS times (default 5).
//
// Figures:
// - turns/s: SESSIONS / (the last turn.finished the client saw − the prompts posted).
// - event latency, local and cross-node: for each tool part update on the first server's stream, the owner's stamp
//   in the part (state.time.start / end: Date.now() right before it is stored) to the client's arrival time (same
//   machine, same clock). "local" when the session's owner is the first server, "cross" when another runner ran it
//   (its events reached the first runner through the event log: an append, a NOTIFY, a read).
// - server CPU per step: the servers' CPU time over the load / the steps run; the cluster's share: the runners' less
//   that of one reins serve on PostgreSQL under the same load (the per-step bookkeeping a runner adds).
// - PostgreSQL CPU per step: every postgres process's CPU time on this machine over the load / the steps.
// - failover: kill -9 → the first event of the session at a client of a surviving runner (the next owner has the
//   turn and closed the cut-off command), kill → the cut-off command closed as interrupted there, and kill →
//   turn.finished (the model asked again and answered).
// Needs PostgreSQL: REINS_BENCH_PG_URL or REINS_TEST_PG_URL (scripts/pg-test.sh start gives one); without, it says so.
// Usage: bun bench/cluster.ts [--sessions N] [--steps M] [--runs R] [--moderate N] [--latency-steps M] [--only load|latency|failover]
import * as fs from "node:fs"
import { ClusterTesting, defaultTiming } from "../packages/cluster/src/index.ts"
import { cpuMs } from "../apps/cli/test/pty/index.ts"
import { type Frame, launch, percentile, post, startModel, subscribe } from "./serve-support.ts"
import { BIN, machine, project, stepsFlag, table } from "./support.ts"

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name)
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} wants a whole number of at least 1, got ${process.argv[at + 1]}`)
    process.exit(2)
  }
  return value
}
const SESSIONS = flag("--sessions", 12)
const STEPS = stepsFlag(10, 1)
const RUNS = flag("--runs", 5)
const MODERATE = flag("--moderate", 3)
const LATENCY_STEPS = flag("--latency-steps", 30)
/** At a moderate load the sessions come one after another (a second apart), not all in the same instant. */
const STAGGER_MS = 1_000
/** How long the servers are watched idle before a load. */
const IDLE_MS = 3_000
const onlyAt = process.argv.indexOf("--only")
const ONLY = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined
if (ONLY !== undefined && !["load", "latency", "failover"].includes(ONLY)) {
  console.error(`--only wants load, latency or failover, got ${ONLY}`)
  process.exit(2)
}
const part = (name: string) => ONLY === undefined || ONLY === name
const PG = process.env.REINS_BENCH_PG_URL || process.env.REINS_TEST_PG_URL || undefined
const TOKEN = "reins-bench-token"
const SECRET = "reins-bench-cluster-secret-0123456789"
const headers = { authorization: `Bearer ${TOKEN}` }
const WARMUP = "warm up"

if (PG === undefined) {
  console.log("# cluster: skipped — it needs PostgreSQL: set REINS_BENCH_PG_URL (or run scripts/pg-test.sh start and export REINS_TEST_PG_URL)")
  process.exit(0)
}

/** The CPU time of every PostgreSQL server process on this machine (the benchmark's database runs here). */
const postgresCpuMs = () => {
  let total = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += cpuMs(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return total
}

const get = async (url: string) => (await fetch(url, { headers })).json() as Promise<any>

/** How the servers are set up: one `reins serve` on SQLite or on PostgreSQL (the baselines), or `n` runners of a cluster. */
type Setup = { readonly kind: "sqlite" } | { readonly kind: "postgres" } | { readonly kind: "runners"; readonly n: number }
const setupName = (s: Setup) => (s.kind === "runners" ? `${s.n} runner${s.n > 1 ? "s" : ""}` : `serve on ${s.kind === "sqlite" ? "SQLite" : "PostgreSQL"}`)

/** The servers of `setup` on a fresh database, serving one project (the same directory: one machine's shared volume), settled and warmed up. */
const startServers = async (setup: Setup, modelURL: string) => {
  const db = setup.kind === "sqlite" ? undefined : await ClusterTesting.freshDatabase(PG)
  const p = project(modelURL)
  const start = async () => {
    const address = `127.0.0.1:${ClusterTesting.freePort()}`
    const cmd = [process.execPath, BIN, ...(db ? ["--database", db.url] : []), "serve", "--port", "0", "--yolo", "--sandbox", "off"]
    if (setup.kind === "runners") cmd.push("--runner", address)
    const started = await launch(cmd, p.cwd, { ...p.env, REINS_SERVER_TOKEN: TOKEN, REINS_CLUSTER_SECRET: SECRET })
    return { address, ...started }
  }
  const settle = (live: ReadonlyArray<{ readonly address: string }>) =>
    ClusterTesting.settled(
      db!.url,
      live.map((r) => r.address),
      300,
      defaultTiming.lockRefreshMs,
      90_000
    )
  /** One turn with one command through each server, so that each has loaded its provider, tools and routes before the clock runs. */
  const warm = async (servers: ReadonlyArray<{ readonly base: string }>) => {
    for (const server of servers) {
      const id = (await post(`${server.base}/session`, {}, headers)).id
      await post(`${server.base}/session/${id}/message`, { text: `${WARMUP} with a tool` }, headers)
    }
  }
  const runners = await Promise.all(Array.from({ length: setup.kind === "runners" ? setup.n : 1 }, start))
  if (setup.kind === "runners") await settle(runners)
  await warm(runners)
  return {
    runners,
    stop: async () => {
      for (const r of runners) r.proc.kill("SIGKILL")
      await Promise.all(runners.map((r) => r.proc.exited))
      await db?.drop()
      p.cleanup()
    }
  }
}

interface Load {
  readonly turnsPerSecond: number
  readonly local: ReadonlyArray<number>
  readonly cross: ReadonlyArray<number>
  readonly cpuPerStepMs: number
  /** A server's CPU per second with nothing to do, before the load (ms). */
  readonly idleCpuMsPerSecond: number
  readonly failed: number
}

/** One load on `setup`: `sessions` turns of `steps` steps of `mode`, prompted at once (or `staggerMs` apart), round robin through the servers. */
const runLoad = async (setup: Setup, mode: string, sessions: number, steps: number, staggerMs = 0): Promise<Load> => {
  const model = await startModel([String(steps), WARMUP, mode])
  const cluster = await startServers(setup, model.url)
  const n = cluster.runners.length
  try {
    const first = cluster.runners[0]!
    const ids: Array<string> = []
    for (let i = 0; i < sessions; i++) ids.push((await post(`${first.base}/session`, {}, headers)).id)
    const owners = new Map<string, string>()
    const ended = new Set<string>()
    let failed = 0
    const local: Array<number> = []
    const cross: Array<number> = []
    const latencies: Array<{ sessionID: string; ms: number }> = []
    const started = new Set<string>()
    let done!: () => void
    const all = new Promise<void>((resolve) => (done = resolve))
    const controller = new AbortController()
    await subscribe(
      `${first.base}/event`,
      (f: Frame) => {
        if (f.event === "part.updated" && f.data.part?.type === "tool") {
          const part = f.data.part
          // a running part's first update (later ones carry the command's progress under the same start)
          const firstUpdate = part.state?.status !== "running" || !started.has(part.id)
          if (part.state?.status === "running") started.add(part.id)
          const stamp = !firstUpdate ? undefined : part.state?.status === "running" ? part.state.time?.start : part.state?.time?.end
          if (typeof stamp === "number") latencies.push({ sessionID: part.sessionID, ms: f.at - stamp })
          // the owner, asked once per session while its turn runs
          if (setup.kind === "runners" && !owners.has(part.sessionID)) {
            owners.set(part.sessionID, "")
            void get(`${first.base}/session/${part.sessionID}`).then((s) => owners.set(part.sessionID, s.runner ?? ""))
          }
        }
        const end = f.event === "turn.finished" ? f.data.result.sessionID : f.event === "turn.failed" ? f.data.sessionID : undefined
        if (end !== undefined && ids.includes(end) && !ended.has(end)) {
          if (f.event === "turn.failed") failed++
          ended.add(end)
          if (ended.size === ids.length) done()
        }
      },
      controller.signal,
      headers
    )
    // idle first: what a server costs with nothing to do (timers, health checks, shard locks, the log's safety poll)
    const idle0 = cluster.runners.map((r) => cpuMs(r.proc.pid))
    await Bun.sleep(IDLE_MS)
    const idleCpu = cluster.runners.reduce((sum, r, i) => sum + cpuMs(r.proc.pid) - idle0[i]!, 0)
    const cpu0 = cluster.runners.map((r) => cpuMs(r.proc.pid))
    const t0 = Date.now()
    if (staggerMs === 0) await Promise.all(ids.map((id, i) => post(`${cluster.runners[i % n]!.base}/session/${id}/prompt_async`, { text: "count" }, headers)))
    else
      for (const [i, id] of ids.entries()) {
        if (i > 0) await Bun.sleep(staggerMs)
        await post(`${cluster.runners[i % n]!.base}/session/${id}/prompt_async`, { text: "count" }, headers)
      }
    const deadline = setTimeout(() => {
      console.error(`# cluster: ${setupName(setup)}, ${mode}: ${ids.length - ended.size} of ${ids.length} turns not ended after 5 minutes`)
      process.exit(1)
    }, 300_000)
    await all
    clearTimeout(deadline)
    const wallMs = Date.now() - t0
    const cpu = cluster.runners.reduce((sum, r, i) => sum + cpuMs(r.proc.pid) - cpu0[i]!, 0)
    controller.abort()
    for (const { sessionID, ms } of latencies) (setup.kind === "runners" && owners.get(sessionID) !== first.address ? cross : local).push(ms)
    return {
      turnsPerSecond: (sessions * 1000) / wallMs,
      local: local.sort((a, b) => a - b),
      cross: cross.sort((a, b) => a - b),
      cpuPerStepMs: cpu / (sessions * steps),
      idleCpuMsPerSecond: (idleCpu * 1000) / IDLE_MS / n,
      failed
    }
  } finally {
    await cluster.stop()
    await model.stop()
  }
}

/**
 * RUNS failovers, each on 3 fresh runners (a runner joining moves shards, and with them running turns: a cluster of
 * its own per run keeps the owner where it was seen): kill -9 of a turn's owner while its command runs → the first
 * event at a client of another runner, and → the command closed there.
 */
const runFailover = async () => {
  const model = await startModel(["1", WARMUP, "hold"])
  const toEvent: Array<number> = []
  const toClosed: Array<number> = []
  const toEnd: Array<number> = []
  try {
    for (let run = 0; run < RUNS; run++) {
      const cluster = await startServers({ kind: "runners", n: 3 }, model.url)
      try {
        const [entry] = cluster.runners
        const sessionID = (await post(`${entry!.base}/session`, {}, headers)).id as string
        let killedAt = 0
        let firstEvent = 0
        let closed = 0
        let ended = 0
        let running!: () => void
        const started = new Promise<void>((resolve) => (running = resolve))
        let finish!: () => void
        const finished = new Promise<void>((resolve) => (finish = resolve))
        const controller = new AbortController()
        // every node's stream has every session: the watcher is chosen once the owner is known, so all three are followed
        for (const runner of cluster.runners)
          await subscribe(
            `${runner.base}/event?sessionID=${sessionID}`,
            (f) => {
              if (f.event === "part.updated" && f.data.part?.type === "tool" && f.data.part.state?.status === "running") running()
              if (killedAt === 0 || f.event === "server.connected" || runner.proc.killed) return
              if (firstEvent === 0) firstEvent = f.at
              if (closed === 0 && f.event === "part.updated" && f.data.part?.type === "tool" && f.data.part.state?.status === "error") closed = f.at
              if (f.event === "turn.finished") {
                ended = f.at
                finish()
              }
            },
            controller.signal,
            headers
          )
        await post(`${entry!.base}/session/${sessionID}/prompt_async`, { text: "hold" }, headers)
        await started
        const owner = (await get(`${entry!.base}/session/${sessionID}`)).runner as string | undefined
        const victim = cluster.runners.find((r) => r.address === owner)
        if (victim === undefined) throw new Error(`the turn of ${sessionID} runs, but no runner holds it (${owner})`)
        killedAt = Date.now()
        victim.proc.kill("SIGKILL")
        const deadline = setTimeout(() => {
          console.error(`# cluster: the turn of ${sessionID} did not finish on another runner within a minute of its owner's kill`)
          process.exit(1)
        }, 60_000)
        await finished
        clearTimeout(deadline)
        controller.abort()
        toEvent.push(firstEvent - killedAt)
        toClosed.push(closed - killedAt)
        toEnd.push(ended - killedAt)
      } finally {
        await cluster.stop()
      }
    }
  } finally {
    await model.stop()
  }
  const sorted = (xs: Array<number>) => xs.sort((a, b) => a - b)
  return { toEvent: sorted(toEvent), toClosed: sorted(toClosed), toEnd: sorted(toEnd) }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "–")
const ms = (xs: ReadonlyArray<number>, p: number) => (xs.length === 0 ? "–" : `${fmt(percentile(xs, p))} ms`)

const setups: ReadonlyArray<Setup> = [{ kind: "sqlite" }, { kind: "postgres" }, { kind: "runners", n: 1 }, { kind: "runners", n: 2 }, { kind: "runners", n: 3 }]
console.log(`# cluster (${machine()})`)
if (part("load")) {
  console.log(`## ${SESSIONS} sessions × ${STEPS} bash steps at once; one reins serve (SQLite, PostgreSQL) against 1, 2 and 3 runners`)
  const rows: Array<Array<string>> = []
  const byLoad = new Map<string, Load>()
  for (const [kind, mode] of [
    ["CPU-bound (echo)", "echo"],
    ["I/O-bound (sleep 0.2)", "sleep:0.2"]
  ] as const) {
    for (const setup of setups) {
      const pg0 = postgresCpuMs()
      const r = await runLoad(setup, mode, SESSIONS, STEPS)
      const pgPerStep = setup.kind === "sqlite" ? NaN : (postgresCpuMs() - pg0) / (SESSIONS * STEPS)
      byLoad.set(`${mode} ${setupName(setup)}`, r)
      const baseline = byLoad.get(`${mode} serve on PostgreSQL`)
      rows.push([
        `${kind}, ${setupName(setup)}`,
        fmt(r.turnsPerSecond, 2),
        `${fmt(r.cpuPerStepMs, 1)} ms`,
        `${fmt(r.idleCpuMsPerSecond, 0)} ms`,
        setup.kind === "runners" && baseline ? `${fmt(r.cpuPerStepMs - baseline.cpuPerStepMs, 1)} ms` : "",
        Number.isFinite(pgPerStep) ? `${fmt(pgPerStep, 1)} ms` : "",
        ms(r.local, 50),
        ms(r.local, 99),
        ms(r.cross, 50),
        ms(r.cross, 99),
        String(r.failed)
      ])
    }
  }
  console.log(
    table(
      [
        "load",
        "turns/s",
        "server CPU/step",
        "idle CPU/s a server",
        "cluster's CPU/step",
        "PostgreSQL CPU/step",
        "local p50",
        "local p99",
        "cross p50",
        "cross p99",
        "failed"
      ],
      rows
    )
  )
  console.log(
    "(server CPU/step: the servers' CPU over the load / the steps; idle CPU/s: a server's CPU in the 3 s before the load, with nothing to do, per second; cluster's: that of the runners less that of one reins serve on PostgreSQL (the bookkeeping a runner adds: routing, persisted prompts, shard locks, NOTIFY); local/cross: a tool part's stamp by its owner → the client of the first server; cross: a session another runner owned)"
  )

  // 3 machines: each runner on a machine of its own (2 cores each); the database on a fourth
  const one = byLoad.get("echo 1 runner")!
  const three = byLoad.get("echo 3 runners")!
  console.log(
    `\n## projection for 3 machines (CPU-bound turns): one runner alone reached ${fmt(one.turnsPerSecond, 2)} turns/s here at ${fmt(one.cpuPerStepMs, 1)} ms of CPU a step; three runners on this one machine ${fmt(three.turnsPerSecond, 2)} turns/s (they share its 2 cores: extra runners only add their bookkeeping). On 3 machines of this size, with the database elsewhere, the cluster would give about 3 × ${fmt(one.turnsPerSecond, 2)} = ${fmt(3 * one.turnsPerSecond, 2)} turns/s, as long as PostgreSQL keeps up (its CPU per step is in the table).`
  )
}

// event latency at a moderate load (a few sessions, the machine not saturated): what a client of one node sees of sessions running on others
if (part("latency")) {
  console.log(
    `\n## event latency across nodes at a moderate load: ${MODERATE} sessions × ${LATENCY_STEPS} I/O-bound steps (sleep 0.2), prompted ${STAGGER_MS / 1000} s apart, on 3 runners, against one reins serve on PostgreSQL`
  )
  const moderate: Array<Array<string>> = []
  for (const setup of [{ kind: "postgres" }, { kind: "runners", n: 3 }] as ReadonlyArray<Setup>) {
    const r = await runLoad(setup, "sleep:0.2", MODERATE, LATENCY_STEPS, STAGGER_MS)
    moderate.push([
      setupName(setup),
      fmt(r.turnsPerSecond, 2),
      ms(r.local, 50),
      ms(r.local, 99),
      ms(r.cross, 50),
      ms(r.cross, 99),
      `${r.local.length} / ${r.cross.length}`,
      String(r.failed)
    ])
  }
  console.log(table(["servers", "turns/s", "local p50", "local p99", "cross p50", "cross p99", "samples (local / cross)", "failed"], moderate))
}

if (part("failover")) {
  const f = await runFailover()
  console.log(`\n## failover: kill -9 of the owner while its command runs, 3 fresh runners each run (runs: ${f.toEvent.length})`)
  console.log(
    table(
      ["measure", "p50", "p99", "max"],
      [
        ["kill → first event at a client of another runner", ms(f.toEvent, 50), ms(f.toEvent, 99), ms(f.toEvent, 100)],
        ["kill → the cut-off command closed by the next owner", ms(f.toClosed, 50), ms(f.toClosed, 99), ms(f.toClosed, 100)],
        ["kill → turn.finished (the model asked again, answered)", ms(f.toEnd, 50), ms(f.toEnd, 99), ms(f.toEnd, 100)]
      ]
    )
  )
}
