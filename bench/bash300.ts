// Benchmark bash300 (issue 14): one turn of 300 steps, each one `bash` call running `echo step N`,
// then a final answer, against the scripted OpenAI-compatible server with a model whose context is
// large enough that nothing is compacted. Runs the built CLI and, in the same run, the bare AI SDK
// loop (bench/baseline.ts) as a baseline. Measures, from the server's side, the harness overhead of
// each step (response k sent → request k+1 received) early and late in the turn, and the reins
// process's RSS and peak RSS (VmRSS / VmHWM in /proc) when request 40 and request 300 arrive.
// A third run is the same bare loop with reins's bash parser loaded (bench/withParser.ts): the
// parser's wasm memory (about 65 MiB of "extra memory" to JavaScriptCore's collector, 12 MiB
// resident) raises the heap size the collector lets garbage grow to, and the AI SDK's per-step
// garbage grows with the history it converts, so peak RSS then grows over the turn as reins's does.
// Usage: bun bench/bash300.ts [--steps N]   (Linux: RSS is read from /proc/<pid>/status)
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, machine, median, project, root, stepsFlag, table } from "./support.ts"

const STEPS = stepsFlag(300, 60)
const EARLY_RSS_STEP = 40
const TARGET = 1.3
const MiB = 2 ** 20
const FINAL = `All ${STEPS} commands ran.`

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")

/** Resident and peak resident memory (bytes) and CPU time (ms, user + system) of a process, from /proc. */
const sample = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024
  // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name) are utime and stime in clock ticks (100 Hz).
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const cpu = (Number(fields[11]) + Number(fields[12])) * 10
  return { rss: kb("VmRSS"), hwm: kb("VmHWM"), cpu }
}

interface Run {
  readonly name: string
  /** Per request (0-based; request k+1 is step k+1's): the process's figures when it arrived. */
  readonly at: ReadonlyArray<{ rss: number; hwm: number; cpu: number } | undefined>
  /** Per step k (1-based): response k sent → request k+1 received, ms. */
  readonly gaps: ReadonlyArray<number>
  readonly wallMs: number
  readonly maxRss: number
  readonly requests: number
}

const script: Array<ScriptedStep> = [
  ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: "bash", arguments: { command: `echo step ${i + 1}` } }] })),
  { text: FINAL }
]

const runOnce = async (name: string, cmd: (url: string) => Array<string>): Promise<Run> => {
  let pid = 0
  const at: Array<{ rss: number; hwm: number; cpu: number } | undefined> = []
  const server = await startScriptedServer(script, {
    keepBodies: false,
    respond: (_body, index) => {
      if (pid > 0) at[index] = sample(pid)
      return undefined
    }
  })
  // A model with a context far beyond what 300 echoes fill: no compaction, no pruning pressure.
  const p = project(server.url, { context: 2_000_000 })
  const start = performance.now()
  const proc = Bun.spawn(cmd(server.url), { cwd: p.cwd, env: p.env, stdout: "pipe", stderr: "pipe" })
  pid = proc.pid
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const wallMs = performance.now() - start
  await server.stop()
  p.cleanup()
  if (proc.exitCode !== 0 || !stdout.includes(FINAL)) {
    throw new Error(`${name} failed (${proc.exitCode}):\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`)
  }
  const requests = server.requests
  const gaps: Array<number> = []
  for (let k = 1; k < requests.length; k++) {
    const done = requests[k - 1]!.respondedAt
    gaps[k] = done === undefined ? NaN : requests[k]!.receivedAt - done
  }
  return { name, at, gaps, wallMs, maxRss: proc.resourceUsage()?.maxRSS ?? 0, requests: requests.length }
}

const reins = await runOnce("reins", () => [BIN, "run", "--yolo", `run the ${STEPS} commands`])
const baseline = await runOnce("baseline", (url) => ["bun", path.join(root, "bench", "baseline.ts"), url])
const parsing = await runOnce("baseline + parser", (url) => [
  "bun",
  "--preload",
  path.join(root, "bench", "withParser.ts"),
  path.join(root, "bench", "baseline.ts"),
  url
])

const window = (r: Run, from: number, to: number) => r.gaps.slice(from, to + 1).filter((g) => Number.isFinite(g))
const cpuPerStep = (r: Run, from: number, to: number) => {
  const a = r.at[from]
  const b = r.at[to]
  return a && b ? (b.cpu - a.cpu) / (to - from) : NaN
}
const EARLY = [5, 15] as const
const LATE = [STEPS - 10, STEPS] as const
const figures = (r: Run) => {
  const early = median(window(r, EARLY[0], EARLY[1]))
  const late = median(window(r, LATE[0], LATE[1]))
  const at40 = r.at[EARLY_RSS_STEP - 1]
  const atEnd = r.at[STEPS - 1]
  return {
    early,
    late,
    ratio: late / early,
    cpuEarly: cpuPerStep(r, EARLY[0], EARLY[1]),
    cpuLate: cpuPerStep(r, LATE[0] - 1, LATE[1] - 1),
    rss40: (at40?.rss ?? NaN) / MiB,
    rssEnd: (atEnd?.rss ?? NaN) / MiB,
    hwm40: (at40?.hwm ?? NaN) / MiB,
    hwmEnd: (atEnd?.hwm ?? NaN) / MiB
  }
}
const r = figures(reins)
const b = figures(baseline)
const bp = figures(parsing)
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : "-")
const mib = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} MiB` : "-")
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "-")
const overheadOk = r.ratio <= TARGET
const peakOk = r.hwmEnd / r.hwm40 <= TARGET

console.log(
  `\nbash300 — one turn of ${STEPS} bash steps (echo) + a final answer, no compaction, built CLI against the scripted server on 127.0.0.1; baseline = bare AI SDK loop, same run (and with reins's bash parser loaded)`
)
console.log(`machine: ${machine()}\n`)
console.log(
  table(
    ["measure", "reins", "baseline", "baseline + parser", "target", ""],
    [
      ["requests answered", `${reins.requests}`, `${baseline.requests}`, `${parsing.requests}`, `${STEPS + 1}`, verdict(reins.requests === STEPS + 1)],
      ["wall time of the run", ...[reins, baseline, parsing].map((x) => `${(x.wallMs / 1000).toFixed(2)} s`), "", ""],
      [`overhead per step, median steps ${EARLY[0]}–${EARLY[1]} (response k → request k+1)`, ms(r.early), ms(b.early), ms(bp.early), "", ""],
      [`overhead per step, median steps ${LATE[0]}–${LATE[1]}`, ms(r.late), ms(b.late), ms(bp.late), "", ""],
      ["overhead late / early", times(r.ratio), times(b.ratio), times(bp.ratio), `≤ ${TARGET}×`, verdict(overheadOk)],
      [`process CPU per step, steps ${EARLY[0]}–${EARLY[1]} / ${LATE[0]}–${LATE[1]}`, ...[r, b, bp].map((x) => `${ms(x.cpuEarly)} / ${ms(x.cpuLate)}`), "", ""],
      [`RSS at step ${EARLY_RSS_STEP} / step ${STEPS}`, ...[r, b, bp].map((x) => `${mib(x.rss40)} / ${mib(x.rssEnd)}`), "", ""],
      [`peak RSS by step ${EARLY_RSS_STEP} / by step ${STEPS}`, ...[r, b, bp].map((x) => `${mib(x.hwm40)} / ${mib(x.hwmEnd)}`), "", ""],
      [
        `peak RSS step ${STEPS} / step ${EARLY_RSS_STEP}`,
        times(r.hwmEnd / r.hwm40),
        times(b.hwmEnd / b.hwm40),
        times(bp.hwmEnd / bp.hwm40),
        `≤ ${TARGET}×`,
        verdict(peakOk)
      ],
      ["peak RSS of the whole run", ...[reins, baseline, parsing].map((x) => mib(x.maxRss / MiB)), "", ""]
    ]
  )
)

// The trend: overhead and RSS over the turn, in buckets of 30 steps.
const rows: Array<Array<string>> = []
for (let from = 1; from < STEPS; from += 30) {
  const to = Math.min(STEPS, from + 29)
  const rw = window(reins, from, to)
  const bw = window(baseline, from, to)
  rows.push([
    `${from}–${to}`,
    rw.length > 0 ? median(rw).toFixed(2) : "-",
    rw.length > 0 ? Math.max(...rw).toFixed(2) : "-",
    mib((reins.at[to - 1]?.rss ?? NaN) / MiB),
    bw.length > 0 ? median(bw).toFixed(2) : "-",
    mib((baseline.at[to - 1]?.rss ?? NaN) / MiB)
  ])
}
console.log(`\nper-step trend (overhead = response k sent → request k+1 received)\n`)
console.log(table(["steps", "reins median ms", "reins max ms", "reins RSS at end", "baseline median ms", "baseline RSS at end"], rows))
console.log(
  `\noverhead at step ${STEPS} vs step 10: ${times(r.ratio)} ${overheadOk ? "≤" : ">"} ${TARGET}×: ${verdict(overheadOk)}; ` +
    `peak RSS at step ${STEPS} vs step ${EARLY_RSS_STEP}: ${times(r.hwmEnd / r.hwm40)} ${peakOk ? "≤" : ">"} ${TARGET}×: ${verdict(peakOk)}`
)
