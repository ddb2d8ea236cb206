// Benchmark (issue 19): one HTTP server running many sessions at once. SESSIONS sessions (default 50) each run one
// turn of STEPS bash steps (default 20: the scripted model asks for `echo N` until the request carries STEPS tool
// results, then answers), all prompted at the same moment through the server's async prompt route, their progress
// read from its SSE event stream. Against `reins serve` and, side by side in the same run, `opencode serve`
// (opencode-ai@1.18.33, installed with npm into a temporary directory, never a dependency of this repo), each with an
// OpenAI-compatible provider pointing at the testkit's scripted server. One after the other, never at once.
//
// Figures:
// - turns/s: SESSIONS / (the last turn's end as the client sees it − the moment the prompts are posted).
// - event latency: for every tool part the stream carries, the stamp the server put in the part when it changed its
//   state — `state.time.start` when it starts running, `state.time.end` when it completes (both servers stamp it with
//   Date.now() right before the part is written to their store and published) — to the client's Date.now() when it
//   has parsed the SSE frame carrying that update (same machine, same clock; 1 ms resolution). p50 and p99 over all
//   of them (2 per step: SESSIONS × STEPS × 2 samples).
// - peak RSS: the server process's VmHWM at the end, and the largest sum of VmRSS of the server and its children
//   (the bash commands, any helper process) polled every 50 ms during the load.
// - server CPU: the server process's CPU time over the load's wall time (is it saturated?).
// One event stream per server, unfiltered (opencode's /event has no session filter; reins' is given none either).
// The scripted model runs in its own process (bench/serve-model.ts), so the client's clock reads are not queued
// behind the model's responses. Each server gets one warm-up turn (no tool call) before the clock starts.
// Usage: bun bench/serve.ts [--sessions N] [--steps M] [--no-opencode] [--only reins|opencode]
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { cpuMs, peakRssBytes } from "../apps/cli/test/pty/index.ts"
import { BIN, machine, project, stepsFlag, table } from "./support.ts"
import { type Frame, launch, percentile, post, startModel, subscribe } from "./serve-support.ts"
import { baseEnv, installAnchor, MiB } from "./tui-support.ts"

const sessionsFlag = process.argv.indexOf("--sessions")
const SESSIONS = sessionsFlag >= 0 ? Number(process.argv[sessionsFlag + 1]) : 50
if (!Number.isInteger(SESSIONS) || SESSIONS < 1) {
  console.error(`--sessions wants a whole number of at least 1, got ${process.argv[sessionsFlag + 1]}`)
  process.exit(2)
}
const STEPS = stepsFlag(20, 1)
const OPENCODE = !process.argv.includes("--no-opencode")
const TURN_TIMEOUT_MS = Number(process.env.REINS_BENCH_TIMEOUT_MS ?? 600_000)
const WARMUP = "warm up"

/** What differs between the two servers: how to start one, and how its API and events are shaped. */
interface Target {
  readonly name: string
  /** The command and where it runs; it prints a line with `listening on http://…`. */
  readonly start: (modelURL: string) => {
    readonly cmd: Array<string>
    readonly cwd: string
    readonly env: Record<string, string>
    readonly cleanup: () => void
  }
  readonly prompt: (base: string, sessionID: string, text: string) => Promise<void>
  /** Headers every request to it carries (reins serve's token). */
  readonly headers?: Record<string, string>
  /** A tool part carried by this frame, if any. */
  readonly toolPart: (f: Frame) => { readonly sessionID: string; readonly callID: string; readonly state: any } | undefined
  /** The session whose turn this frame ends, and whether it failed. */
  readonly turnEnd: (f: Frame) => { readonly sessionID: string; readonly failed?: string } | undefined
}

// reins serve always wants a token (a loopback port is reachable by every local user): the bench gives it one
const TOKEN = "reins-bench-token"
const reins: Target = {
  name: "reins serve",
  start: (modelURL) => {
    const p = project(modelURL)
    return { cmd: [process.execPath, BIN, "serve", "--port", "0", "--yolo"], cwd: p.cwd, env: { ...p.env, REINS_SERVER_TOKEN: TOKEN }, cleanup: p.cleanup }
  },
  headers: { authorization: `Bearer ${TOKEN}` },
  prompt: async (base, id, text) => void (await post(`${base}/session/${id}/prompt_async`, { text }, { authorization: `Bearer ${TOKEN}` })),
  toolPart: (f) => (f.event === "part.updated" && f.data.part?.type === "tool" ? f.data.part : undefined),
  turnEnd: (f) =>
    f.event === "turn.finished"
      ? { sessionID: f.data.result.sessionID }
      : f.event === "turn.failed"
        ? { sessionID: f.data.sessionID, failed: f.data.error?.message ?? "failed" }
        : undefined
}

const opencode = (exe: string): Target => ({
  name: "opencode serve 1.18.33",
  start: (modelURL) => {
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-oc-")))
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-oc-home-"))
    Bun.spawnSync(["git", "init", "-q"], { cwd })
    // its defaults but: every tool allowed (as reins --yolo), no per-step git snapshots (reins takes none), nothing shared
    fs.writeFileSync(
      path.join(cwd, "opencode.json"),
      JSON.stringify({
        $schema: "https://opencode.ai/config.json",
        model: "local/scripted",
        small_model: "local/scripted",
        snapshot: false,
        share: "disabled",
        autoupdate: false,
        permission: { bash: "allow", edit: "allow", webfetch: "allow", external_directory: "allow", doom_loop: "allow" },
        provider: {
          local: {
            npm: "@ai-sdk/openai-compatible",
            name: "scripted",
            options: { baseURL: modelURL, apiKey: "bench" },
            models: { scripted: { name: "scripted", tool_call: true, limit: { context: 128000, output: 8000 } } }
          }
        }
      })
    )
    return {
      cmd: [exe, "serve", "--port", "0"],
      cwd,
      // no models.dev fetch nor autoupdate: offline they only wait for a network timeout
      env: { ...baseEnv(home), OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" },
      cleanup: () => {
        fs.rmSync(cwd, { recursive: true, force: true })
        fs.rmSync(home, { recursive: true, force: true })
      }
    }
  },
  prompt: async (base, id, text) =>
    void (await post(`${base}/session/${id}/prompt_async`, { parts: [{ type: "text", text }], model: { providerID: "local", modelID: "scripted" } })),
  toolPart: (f) => {
    const p = f.data.type === "message.part.updated" ? f.data.properties?.part : undefined
    return p?.type === "tool" ? p : undefined
  },
  turnEnd: (f) =>
    f.data.type === "session.idle"
      ? { sessionID: f.data.properties.sessionID }
      : f.data.type === "session.error" && f.data.properties?.sessionID
        ? { sessionID: f.data.properties.sessionID, failed: JSON.stringify(f.data.properties.error ?? {}).slice(0, 200) }
        : undefined
})

interface Result {
  readonly turnsPerSecond: number
  readonly stepsPerSecond: number
  readonly wallMs: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly samples: number
  readonly hwmMiB: number
  readonly treePeakMiB: number
  /** The server process's CPU time during the load, as a share of one core. */
  readonly cpuShare: number
  readonly failed: ReadonlyArray<string>
}

const runTarget = async (target: Target): Promise<Result> => {
  const model = await startModel([String(STEPS), WARMUP])
  const setup = target.start(model.url)
  const { proc, base } = await launch(setup.cmd, setup.cwd, setup.env)
  const stop = new AbortController()
  try {
    const sessions = async () => ((await post(`${base}/session`, {}, target.headers)) as { id: string }).id
    const ends = new Map<string, (end: { failed?: string }) => void>()
    const firstSeen = new Map<string, Set<string>>()
    const latencies: Array<number> = []
    const completedTools = new Map<string, number>()
    let measuring = false
    await subscribe(
      `${base}/event`,
      (f) => {
        const part = target.toolPart(f)
        if (part && measuring) {
          const seen = firstSeen.get(part.callID) ?? new Set<string>()
          firstSeen.set(part.callID, seen)
          // each state's first update: running (stamped time.start) and completed (stamped time.end)
          if (part.state.status === "running" && !seen.has("running")) latencies.push(f.at - part.state.time.start)
          if (part.state.status === "completed" && !seen.has("completed")) {
            latencies.push(f.at - part.state.time.end)
            completedTools.set(part.sessionID, (completedTools.get(part.sessionID) ?? 0) + 1)
          }
          seen.add(part.state.status)
        }
        const end = target.turnEnd(f)
        if (end) ends.get(end.sessionID)?.(end)
      },
      stop.signal,
      target.headers
    )
    const turn = (id: string) => new Promise<{ failed?: string }>((resolve) => ends.set(id, resolve))
    // warm-up: one turn with no tool call, so that both have loaded their provider and tools before the clock runs
    const warm = await sessions()
    const warmed = turn(warm)
    await target.prompt(base, warm, WARMUP)
    await warmed
    await Bun.sleep(500)

    const ids = await Promise.all(Array.from({ length: SESSIONS }, sessions))
    const finished = ids.map(turn)
    // the tree's memory is sampled in a worker thread: walking /proc here would hold up the event stream being timed
    const sampler = new Worker(new URL("./tree-sampler.ts", import.meta.url), { workerData: { pid: proc.pid, everyMs: 100 } })
    measuring = true
    const cpu0 = cpuMs(proc.pid)
    const t0 = Date.now()
    await Promise.all(ids.map((id) => target.prompt(base, id, "run the steps")))
    let timer: Timer | undefined
    const outcome = await Promise.race([Promise.all(finished), new Promise<undefined>((r) => void (timer = setTimeout(r, TURN_TIMEOUT_MS)))])
    clearTimeout(timer)
    const wallMs = Date.now() - t0
    const cpuShare = (cpuMs(proc.pid) - cpu0) / wallMs
    const treePeak = await new Promise<number>((resolve) => {
      sampler.once("message", (peak: number) => resolve(peak))
      sampler.postMessage("stop")
    })
    const hwm = peakRssBytes(proc.pid)
    const failed: Array<string> = []
    if (outcome === undefined) failed.push(`${ends.size} turns had not ended after ${TURN_TIMEOUT_MS / 1000} s`)
    for (const [i, end] of (outcome ?? []).entries()) if (end.failed) failed.push(`${ids[i]}: ${end.failed}`)
    const short = ids.filter((id) => (completedTools.get(id) ?? 0) !== STEPS)
    if (short.length > 0) failed.push(`${short.length} sessions did not show ${STEPS} completed bash calls on the stream`)
    const sorted = latencies.sort((a, b) => a - b)
    return {
      turnsPerSecond: SESSIONS / (wallMs / 1000),
      stepsPerSecond: (SESSIONS * STEPS) / (wallMs / 1000),
      wallMs,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? NaN,
      samples: sorted.length,
      hwmMiB: hwm / MiB,
      treePeakMiB: treePeak / MiB,
      cpuShare,
      failed
    }
  } finally {
    stop.abort()
    proc.kill("SIGTERM")
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000)
    await proc.exited
    clearTimeout(killer)
    await model.stop()
    setup.cleanup()
  }
}

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")
const targets: Array<Target> = [reins]
const notes: Array<string> = []
if (OPENCODE) {
  const exe = installAnchor("opencode-ai@1.18.33", "opencode")
  if (typeof exe === "string") targets.push(opencode(exe))
  else notes.push(`opencode 1.18.33 not measured: ${exe.failed}`)
}

// --only reins|opencode: one of them (quick runs)
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined
if (only !== undefined) targets.splice(0, targets.length, ...targets.filter((t) => t.name.startsWith(only)))
const results = new Map<string, Result | string>()
for (const target of targets) {
  results.set(target.name, await runTarget(target).catch((e: Error) => e.message.split("\n").slice(0, 3).join(" ")))
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "–")
const rows = targets.map((t) => {
  const r = results.get(t.name)!
  if (typeof r === "string") return [t.name, "failed", "", "", "", "", "", "", ""]
  return [
    t.name,
    fmt(r.turnsPerSecond, 2),
    fmt(r.stepsPerSecond, 0),
    `${fmt(r.wallMs / 1000, 1)} s`,
    `${fmt(r.p50)} ms`,
    `${fmt(r.p99)} ms`,
    `${fmt(r.hwmMiB)} MiB`,
    `${fmt(r.treePeakMiB)} MiB`,
    `${fmt(r.cpuShare * 100)}%`
  ]
})
console.log(`# serve: ${SESSIONS} concurrent sessions × ${STEPS} bash steps over HTTP (${machine()})`)
console.log(`event latency: a tool part's running/completed stamp → its SSE frame parsed by the client; ${SESSIONS * STEPS * 2} samples per server\n`)
console.log(table(["server", "turns/s", "steps/s", "wall", "event p50", "event p99", "server VmHWM", "tree peak RSS", "server CPU"], rows))
console.log(`\nserver CPU: the server process's CPU time during the load / wall time (100% = one core; this machine has ${os.cpus().length})`)
for (const t of targets) {
  const r = results.get(t.name)!
  if (typeof r === "string") notes.push(`${t.name} failed: ${r}`)
  else {
    if (r.failed.length > 0) notes.push(`${t.name}: ${r.failed.slice(0, 3).join("; ")}`)
    if (r.samples !== SESSIONS * STEPS * 2) notes.push(`${t.name}: ${r.samples} latency samples (max ${fmt(r.max)} ms)`)
  }
}
const ours = results.get(reins.name)
const theirs = targets.find((t) => t !== reins) ? results.get(targets.find((t) => t !== reins)!.name) : undefined
if (ours && typeof ours !== "string" && theirs && typeof theirs !== "string") {
  const speed = ours.turnsPerSecond / theirs.turnsPerSecond
  const memory = ours.treePeakMiB / theirs.treePeakMiB
  console.log(`\nreins / opencode: ${speed.toFixed(1)}× the throughput (goal ≥ 5×), ${memory.toFixed(2)} of the memory (tree peak; goal ≤ 0.33)`)
}
if (ours && typeof ours !== "string") console.log(`reins event p99 ${fmt(ours.p99)} ms (goal ≤ 50 ms)`)
// REINS_BENCH_JSON=FILE: reins's figures as JSON too (bench/compare.ts reads them)
if (process.env.REINS_BENCH_JSON)
  fs.writeFileSync(process.env.REINS_BENCH_JSON, JSON.stringify(typeof ours === "string" || ours === undefined ? { failed: [ours ?? "not run"] } : ours))
for (const n of notes) console.log(`note: ${n}`)
