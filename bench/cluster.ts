// Benchmark (issue 28): `reins serve --runner` with 1, 2 and 3 runners on one machine and one PostgreSQL database.
// SESSIONS sessions (default 12) each run one turn of STEPS bash steps (default 10), prompted at once, round robin
// through the runners; a client follows every event on the first runner's stream. Two kinds of step: CPU-bound
// (`echo N`: the runtime's own work) and I/O-bound (`sleep 0.2; echo N`: the command waits). Then failover, with 3
// runners: a turn holding a long command, its owner killed -9 (and another runner started in its place), RUNS times.
//
// Figures:
// - turns/s: SESSIONS / (the last turn.finished the client saw − the prompts posted).
// - event latency, local and cross-node: for each tool part update on the first runner's stream, the owner's stamp
//   in the part (state.time.start / end: Date.now() right before it is stored) to the client's arrival time (same
//   machine, same clock). "local" when the session's owner is the first runner, "cross" when another runner ran it
//   (its events reached the first runner through the event log: an append, a NOTIFY, a read).
// - runner CPU per step: the runners' CPU time over the load / the steps run (the per-step bookkeeping ceiling).
// - failover: kill -9 → the first event of the session at a client of a surviving runner (the next owner has the
//   turn), and kill → the cut-off command closed as interrupted there (the turn goes on).
// Needs PostgreSQL: REINS_BENCH_PG_URL or REINS_TEST_PG_URL (scripts/pg-test.sh start gives one); without, it says so.
// Usage: bun bench/cluster.ts [--sessions N] [--steps M] [--runs R]
// Not yet in `bun run bench`: on the first try its CPU-bound loads ran, and the I/O-bound load on one runner did not
// end (a turn's end never reached the client's stream, or a turn never ended); to be found before it gives figures.
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
const PG = process.env.REINS_BENCH_PG_URL || process.env.REINS_TEST_PG_URL || undefined
const TOKEN = "reins-bench-token"
const SECRET = "reins-bench-cluster-secret-0123456789"
const headers = { authorization: `Bearer ${TOKEN}` }
const WARMUP = "warm up"

if (PG === undefined) {
  console.log("# cluster: skipped — it needs PostgreSQL: set REINS_BENCH_PG_URL (or run scripts/pg-test.sh start and export REINS_TEST_PG_URL)")
  process.exit(0)
}

const get = async (url: string) => (await fetch(url, { headers })).json() as Promise<any>

/** N runners on a fresh database, serving one project (the same directory: one machine's shared volume), settled. */
const startCluster = async (n: number, modelURL: string) => {
  const db = await ClusterTesting.freshDatabase(PG)
  const p = project(modelURL)
  const start = async () => {
    const address = `127.0.0.1:${ClusterTesting.freePort()}`
    const cmd = [process.execPath, BIN, "--database", db.url, "serve", "--port", "0", "--yolo", "--sandbox", "off", "--runner", address]
    const started = await launch(cmd, p.cwd, { ...p.env, REINS_SERVER_TOKEN: TOKEN, REINS_CLUSTER_SECRET: SECRET })
    return { address, ...started }
  }
  const runners = await Promise.all(Array.from({ length: n }, start))
  const settle = (live: ReadonlyArray<{ readonly address: string }>) =>
    ClusterTesting.settled(
      db.url,
      live.map((r) => r.address),
      300,
      defaultTiming.lockRefreshMs,
      90_000
    )
  await settle(runners)
  return {
    runners,
    /** Another runner, started and joined: the shards settled over `live` and it. */
    join: async (live: ReadonlyArray<{ readonly address: string }>) => {
      const runner = await start()
      runners.push(runner)
      await settle([...live, runner])
      return runner
    },
    stop: async () => {
      for (const r of runners) r.proc.kill("SIGKILL")
      await Promise.all(runners.map((r) => r.proc.exited))
      await db.drop()
      p.cleanup()
    }
  }
}

interface Load {
  readonly turnsPerSecond: number
  readonly local: ReadonlyArray<number>
  readonly cross: ReadonlyArray<number>
  readonly cpuPerStepMs: number
  readonly failed: number
}

/** One load on `n` runners: SESSIONS turns of STEPS steps of `mode`, prompted at once. */
const runLoad = async (n: number, mode: string): Promise<Load> => {
  const model = await startModel([String(STEPS), WARMUP, mode])
  const cluster = await startCluster(n, model.url)
  try {
    const first = cluster.runners[0]!
    const ids: Array<string> = []
    for (let i = 0; i < SESSIONS; i++) ids.push((await post(`${first.base}/session`, {}, headers)).id)
    const owners = new Map<string, string>()
    const ended = new Set<string>()
    let failed = 0
    const local: Array<number> = []
    const cross: Array<number> = []
    const latencies: Array<{ sessionID: string; ms: number }> = []
    let done!: () => void
    const all = new Promise<void>((resolve) => (done = resolve))
    const controller = new AbortController()
    await subscribe(
      `${first.base}/event`,
      (f: Frame) => {
        if (f.event === "part.updated" && f.data.part?.type === "tool") {
          const part = f.data.part
          const stamp = part.state?.status === "running" ? part.state.time?.start : part.state?.time?.end
          if (typeof stamp === "number") latencies.push({ sessionID: part.sessionID, ms: f.at - stamp })
          // the owner, asked once per session while its turn runs
          if (!owners.has(part.sessionID)) {
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
    const cpu0 = cluster.runners.map((r) => cpuMs(r.proc.pid))
    const t0 = Date.now()
    await Promise.all(ids.map((id, i) => post(`${cluster.runners[i % n]!.base}/session/${id}/prompt_async`, { text: "count" }, headers)))
    await all
    const wallMs = Date.now() - t0
    const cpu = cluster.runners.reduce((sum, r, i) => sum + cpuMs(r.proc.pid) - cpu0[i]!, 0)
    controller.abort()
    for (const { sessionID, ms } of latencies) (owners.get(sessionID) === first.address ? local : cross).push(ms)
    return {
      turnsPerSecond: (SESSIONS * 1000) / wallMs,
      local: local.sort((a, b) => a - b),
      cross: cross.sort((a, b) => a - b),
      cpuPerStepMs: cpu / (SESSIONS * STEPS),
      failed
    }
  } finally {
    await cluster.stop()
    await model.stop()
  }
}

/** RUNS failovers on 3 runners: kill -9 of a turn's owner while its command runs → the first event at a client of another runner, and → the command closed there. */
const runFailover = async () => {
  const model = await startModel(["1", WARMUP, "hold"])
  const cluster = await startCluster(3, model.url)
  const toEvent: Array<number> = []
  const toClosed: Array<number> = []
  try {
    const alive = new Set(cluster.runners)
    for (let run = 0; run < RUNS; run++) {
      const [entry] = [...alive]
      const sessionID = (await post(`${entry!.base}/session`, {}, headers)).id as string
      await post(`${entry!.base}/session/${sessionID}/prompt_async`, { text: "hold" }, headers)
      let owner: string | undefined
      for (let i = 0; i < 600 && owner === undefined; i++) {
        owner = (await get(`${entry!.base}/session/${sessionID}`)).runner
        if (owner === undefined) await Bun.sleep(50)
      }
      const victim = [...alive].find((r) => r.address === owner)
      const watcher = [...alive].find((r) => r !== victim)
      if (victim === undefined || watcher === undefined) throw new Error(`the turn of ${sessionID} did not start on a runner`)
      let killedAt = 0
      let firstEvent = 0
      let closed = 0
      const controller = new AbortController()
      const finished = new Promise<void>((resolve) =>
        subscribe(
          `${watcher.base}/event?sessionID=${sessionID}`,
          (f) => {
            if (killedAt === 0 || f.event === "server.connected") return
            if (firstEvent === 0) firstEvent = f.at
            if (closed === 0 && f.event === "part.updated" && f.data.part?.type === "tool" && f.data.part.state?.status === "error") closed = f.at
            if (f.event === "turn.finished") resolve()
          },
          controller.signal,
          headers
        )
      )
      killedAt = Date.now()
      victim.proc.kill("SIGKILL")
      await victim.proc.exited
      alive.delete(victim)
      await finished
      controller.abort()
      toEvent.push(firstEvent - killedAt)
      toClosed.push(closed - killedAt)
      // a runner in its place for the next run, so that there are always 3
      if (run + 1 < RUNS) alive.add(await cluster.join([...alive]))
    }
  } finally {
    await cluster.stop()
    await model.stop()
  }
  return { toEvent: toEvent.sort((a, b) => a - b), toClosed: toClosed.sort((a, b) => a - b) }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "–")
const ms = (xs: ReadonlyArray<number>, p: number) => (xs.length === 0 ? "–" : `${fmt(percentile(xs, p))} ms`)

console.log(`# cluster: ${SESSIONS} sessions × ${STEPS} bash steps on 1, 2 and 3 runners (${machine()})`)
const rows: Array<Array<string>> = []
for (const [kind, mode] of [
  ["CPU-bound (echo)", "echo"],
  ["I/O-bound (sleep 0.2)", "sleep:0.2"]
] as const) {
  for (const n of [1, 2, 3]) {
    const r = await runLoad(n, mode)
    rows.push([
      `${kind}, ${n} runner${n > 1 ? "s" : ""}`,
      fmt(r.turnsPerSecond, 2),
      ms(r.local, 50),
      ms(r.local, 99),
      ms(r.cross, 50),
      ms(r.cross, 99),
      `${fmt(r.cpuPerStepMs, 1)} ms`,
      String(r.failed)
    ])
  }
}
console.log(table(["load", "turns/s", "local p50", "local p99", "cross p50", "cross p99", "runner CPU/step", "failed"], rows))
const f = await runFailover()
console.log(`\n# failover: kill -9 of the owner while its command runs, 3 runners at the start (runs: ${f.toEvent.length})`)
console.log(
  table(
    ["measure", "p50", "p99", "max"],
    [
      ["kill → first event at a client of another runner", ms(f.toEvent, 50), ms(f.toEvent, 99), ms(f.toEvent, 100)],
      ["kill → the cut-off command closed by the next owner", ms(f.toClosed, 50), ms(f.toClosed, 99), ms(f.toClosed, 100)]
    ]
  )
)
