// Benchmark tracing: bash40 (40 `bash` steps + a final answer, scripted server on 127.0.0.1) with
// OpenTelemetry export off and on — spans and metrics over OTLP/HTTP to the testkit's receiver on
// 127.0.0.1 in a process of its own, protobuf and JSON — interleaved in the same run; then what a collector that is down or
// hangs adds to a run's exit. Usage: bun run bench  (medians of 5; REINS_BENCH_RUNS to change)
import { startOtlpReceiver, startScriptedServer, type OtlpReceiverMode, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BIN, machine, median, project, table } from "./support.ts"

const RUNS = Number(process.env.REINS_BENCH_RUNS ?? 7)
const STEPS = 40
const ANSWER = "All 40 commands ran."

const script: Array<ScriptedStep> = [
  ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: "bash", arguments: { command: `echo step ${i + 1}` } }] })),
  { text: ANSWER }
]

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")
// the bench runs a copy of the build it started with, so a rebuild meanwhile changes nothing under it
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-tracing-"))
fs.cpSync(path.dirname(BIN), path.join(scratch, "dist"), { recursive: true })
const REINS = path.join(scratch, "dist", path.basename(BIN))

interface Sample {
  readonly wallMs: number
  /** user + system CPU time of the process: less sensitive than wall to other load on the machine */
  readonly cpuMs: number
  readonly rssMiB: number
}

/** Runs the CLI to completion: wall, CPU time and peak RSS; a wrong exit or answer ends the bench. */
const measure = async (cmd: Array<string>, cwd: string, env: Record<string, string>, expect: string): Promise<Sample> => {
  const start = performance.now()
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" })
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const wallMs = performance.now() - start
  if (proc.exitCode !== 0 || !stdout.includes(expect))
    throw new Error(`${cmd.join(" ")} failed (${proc.exitCode}):\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`)
  const usage = proc.resourceUsage()
  const cpuMs = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : 0
  return { wallMs, cpuMs, rssMiB: (usage?.maxRSS ?? 0) / 1024 / 1024 }
}

type Variant = "off" | "http/protobuf" | "http/json"
const variants: ReadonlyArray<Variant> = ["off", "http/protobuf", "http/json"]

/** The receiver in its own process (bench/tracing-receiver.ts): its URL, and what arrived since the last ask. */
const startCollector = async () => {
  const proc = Bun.spawn(["bun", path.join(import.meta.dir, "tracing-receiver.ts")], { stdin: "pipe", stdout: "pipe", stderr: "inherit" })
  const lines = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let pending = ""
  const nextLine = async (): Promise<string> => {
    while (!pending.includes("\n")) {
      const { value, done } = await lines.read()
      if (done) throw new Error("the receiver process ended")
      pending += value
    }
    const at = pending.indexOf("\n")
    const line = pending.slice(0, at)
    pending = pending.slice(at + 1)
    return line
  }
  const url = await nextLine()
  return {
    url,
    received: async (): Promise<{ requests: number; chats: number; tools: number; tokenUsage: boolean; errors: Array<string> }> => {
      proc.stdin.write("?\n")
      proc.stdin.flush()
      return JSON.parse(await nextLine())
    },
    stop: () => proc.kill()
  }
}
type Collector = Awaited<ReturnType<typeof startCollector>>

const bash40 = async (variant: Variant, collector: Collector): Promise<Sample> => {
  const server = await startScriptedServer(script)
  const p = project(server.url)
  const env = variant === "off" ? p.env : { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: variant }
  const sample = await measure([REINS, "run", "--yolo", "run the 40 commands"], p.cwd, env, ANSWER)
  await server.stop()
  p.cleanup()
  return sample
}

// every exported run must have reached the receiver whole: 41 chat spans, 40 execute_tool spans, the metrics
const checkExport = async (collector: Collector, variant: Variant) => {
  const got = await collector.received()
  const whole = got.chats === STEPS + 1 && got.tools === STEPS && got.tokenUsage && got.errors.length === 0
  if (variant === "off" ? got.requests > 0 : !whole) throw new Error(`${variant}: the receiver got ${JSON.stringify(got)}`)
}

const collector = await startCollector()
const samples: Record<Variant, Array<Sample>> = { off: [], "http/protobuf": [], "http/json": [] }
for (let i = 0; i < RUNS; i++) {
  // interleaved, each repetition in a rotated order, so machine noise hits every variant alike
  for (let k = 0; k < variants.length; k++) {
    const variant = variants[(i + k) % variants.length]!
    samples[variant].push(await bash40(variant, collector))
    await checkExport(collector, variant)
  }
}
collector.stop()

// A collector that is down (closed port) or hangs (accepts, never answers): the exit waits for the last
// export at most EXPORT_SHUTDOWN_TIMEOUT (1.5 s), teardown included within 2 s; a one-step run, against
// the same run without export.
const oneStep: Array<ScriptedStep> = [{ text: "short answer" }]
const shortRun = async (mode: OtlpReceiverMode | "off"): Promise<Sample> => {
  const collector = mode === "off" ? undefined : await startOtlpReceiver({ mode })
  const server = await startScriptedServer(oneStep)
  const p = project(server.url)
  const env = collector ? { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } : p.env
  const sample = await measure([REINS, "run", "answer briefly"], p.cwd, env, "short answer")
  await server.stop()
  await collector?.stop()
  p.cleanup()
  return sample
}
const exits: Record<"off" | "down" | "hang", Array<number>> = { off: [], down: [], hang: [] }
for (let i = 0; i < RUNS; i++) for (const mode of ["off", "down", "hang"] as const) exits[mode].push((await shortRun(mode)).wallMs)

const wall = (v: Variant) => median(samples[v].map((s) => s.wallMs))
const cpu = (v: Variant) => median(samples[v].map((s) => s.cpuMs))
const best = (v: Variant) => Math.min(...samples[v].map((s) => s.wallMs))
const rss = (v: Variant) => median(samples[v].map((s) => s.rssMiB))
const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`
// each repetition ran the variants back to back: the median of the per-repetition ratios cancels slow drifts in the machine's load
const paired = (v: Variant, of: (s: Sample) => number) => median(samples[v].map((s, i) => of(s) / of(samples.off[i]!))) - 1
const exitCost = (mode: "down" | "hang") => median(exits[mode]) - median(exits.off)
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`

console.log(
  `\ntracing — bash40 (${STEPS} bash steps + a final answer, scripted server on 127.0.0.1) with OTLP export of spans and metrics off and on (to the testkit's receiver on 127.0.0.1), interleaved, medians of ${RUNS}`
)
console.log(`machine: ${machine()}\n`)
const rows: Array<Array<string>> = [
  ["bash40, export off", secs(wall("off")), secs(best("off")), `${cpu("off").toFixed(0)} ms`, `${rss("off").toFixed(0)} MiB`, "", ""]
]
for (const v of ["http/protobuf", "http/json"] as const) {
  const overhead = paired(v, (s) => s.wallMs)
  rows.push([`bash40, export on (${v})`, secs(wall(v)), secs(best(v)), `${cpu(v).toFixed(0)} ms`, `${rss(v).toFixed(0)} MiB`, "", ""])
  rows.push([
    `  overhead vs off (paired)`,
    pct(overhead),
    pct(best(v) / best("off") - 1),
    pct(paired(v, (s) => s.cpuMs)),
    `${rss(v) - rss("off") >= 0 ? "+" : ""}${(rss(v) - rss("off")).toFixed(1)} MiB`,
    "wall ≤ 5%",
    overhead <= 0.05 ? "ok" : "MISS"
  ])
}
console.log(table(["measure", "wall (median)", "wall (best)", "CPU (median)", "peak RSS", "target", ""], rows))
console.log(
  `overhead: median over the repetitions of on ÷ off (wall, CPU), best ÷ best; load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the end`
)
console.log()
console.log(
  table(
    ["a collector that does not answer (1-step run)", "exit cost", "target", ""],
    [
      ["down (closed port)", secs(exitCost("down")), "≤ 2 s", exitCost("down") <= 2_000 ? "ok" : "MISS"],
      ["hangs (accepts, never answers)", secs(exitCost("hang")), "≤ 2 s", exitCost("hang") <= 2_000 ? "ok" : "MISS"]
    ]
  )
)
const list = (xs: ReadonlyArray<number>) => xs.map((x) => x.toFixed(0)).join(", ")
console.log(`\nall runs, wall (ms): ${variants.map((v) => `${v} ${list(samples[v].map((s) => s.wallMs))}`).join("; ")}`)
console.log(`1-step runs, wall (ms): off ${list(exits.off)}; down ${list(exits.down)}; hang ${list(exits.hang)}`)
fs.rmSync(scratch, { recursive: true, force: true })
