// Benchmark (issue 15): the interactive UI under a real pty, its screen read through a headless xterm.
// (a) Launch → input prompt ready, and peak RSS idle, for reins, the bare Ink app (the floor) and the anchors people
//     compare with, opencode and pi, installed from the npm registry into a temporary directory at bench time.
// (b) Streaming a 20 KB markdown answer at 200 chunks/s: reins' CPU time per chunk, frames drawn and dropped.
// (c) A session of 50 vs 500 messages opened with `reins --session ID`: launch → last message visible, and how long
//     one more streamed chunk takes to reach the screen, to show the transcript is not re-rendered each frame.
// Usage: bun bench/tui.ts [--no-anchors] [--parts abc]   (REINS_BENCH_RUNS, default 5, runs per program and figure)
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cpuMs, spawnPty, type Pty } from "../apps/cli/test/pty/index.ts"
import { installPi, PI_NAME, piEnv } from "./pi.ts"
import { BIN, machine, median, project, table } from "./support.ts"
import { buildHistory, recordTurn } from "./tui-history.ts"
import { markdownAnswer, pieces, startStreamServer, type StreamServer } from "./tui-stream.ts"
import { baseEnv, buildInkFloor, COLS, installAnchor, ROWS, startup, startups, type Program, type Startup } from "./tui-support.ts"

const RUNS = Number(process.env.REINS_BENCH_RUNS ?? 5)
const PARTS = process.argv.includes("--parts") ? (process.argv[process.argv.indexOf("--parts") + 1] ?? "") : "abc"
if (!/^[abc]+$/.test(PARTS)) {
  console.error(`--parts wants some of the letters a, b, c (startup, streaming, history), got ${PARTS}`)
  process.exit(2)
}
const ANCHORS = !process.argv.includes("--no-anchors") && PARTS.includes("a")
const READY_TARGET_MS = 150
const RSS_TARGET_MiB = 100
/** reins' prompt: the hint line under its input box, drawn when the prompt takes keys and no turn runs. */
const REINS_MARKER = "Enter send"

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-tui-"))
// the bench runs a copy of the build it started with, so a rebuild meanwhile changes nothing under it
fs.cpSync(path.dirname(BIN), path.join(scratch, "dist"), { recursive: true })
const REINS = path.join(scratch, "dist", path.basename(BIN))
const server = startStreamServer()
const proj = project(server.url)
const pointAt = (url: string) =>
  fs.writeFileSync(
    proj.configFile,
    JSON.stringify({
      model: "local/scripted",
      provider: { local: { type: "openai-compatible", baseURL: url, models: { scripted: { context: 128000, output: 8000 } } } }
    })
  )
const reinsEnv = { ...proj.env, LANG: "C.UTF-8" }
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`)
const notes: Array<string> = []

// ---------------------------------------------------------------------------------------------
// (a) startup

const home = (name: string) => {
  const dir = path.join(scratch, `home-${name}`)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}
const anchorCwd = path.join(scratch, "anchor-project")
fs.mkdirSync(anchorCwd)
const programs: Array<Program> = [
  {
    name: "reins",
    cmd: [REINS],
    cwd: proj.cwd,
    env: reinsEnv,
    marker: REINS_MARKER,
    markerNote: `"${REINS_MARKER}" (the hint under the input box)`,
    timeoutMs: 15_000
  },
  {
    name: "Ink hello (floor)",
    cmd: ["bun", await buildInkFloor(path.join(scratch, "floor"))],
    cwd: anchorCwd,
    env: baseEnv(home("floor")),
    marker: "Enter send",
    markerNote: `"Enter send" (its hint line; bench/tui-hello.tsx, bundled like reins)`,
    timeoutMs: 15_000
  }
]
const unavailable: Array<[string, string]> = []
if (ANCHORS) {
  const dummyKeys = { ANTHROPIC_API_KEY: "sk-ant-bench-dummy", OPENAI_API_KEY: "sk-bench-dummy" }
  const pi = installPi()
  if (typeof pi === "string") {
    programs.push({
      name: PI_NAME,
      cmd: [pi],
      cwd: anchorCwd,
      env: { ...piEnv(home("pi")), ...dummyKeys },
      marker: /\d+\.\d%\/[\d.]+[kKM]/,
      markerNote: `its footer's context gauge ("0.0%/1.0M"), drawn with the editor`,
      timeoutMs: 30_000
    })
  } else unavailable.push([PI_NAME, pi.failed])
  const opencode = installAnchor("opencode-ai@1.18.33", "opencode")
  if (typeof opencode === "string") {
    programs.push({
      name: "opencode 1.18.33",
      cmd: [opencode],
      cwd: anchorCwd,
      // no models.dev fetch nor autoupdate: offline they only wait for a network timeout
      env: { ...baseEnv(home("opencode")), ...dummyKeys, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" },
      marker: "Ask anything",
      markerNote: `"Ask anything" (its input's placeholder)`,
      timeoutMs: 60_000
    })
  } else unavailable.push(["opencode 1.18.33", opencode.failed])
}

const results = new Map<string, Array<Startup> | string>()
// without (a), reins is launched once, to know it reaches its prompt
if (!PARTS.includes("a")) programs.splice(1)
const startupRuns = PARTS.includes("a") ? RUNS : 0
// one unrecorded launch each (first-run setup of the anchors' homes, the OS's file cache), then rounds that alternate
for (const p of programs) {
  const warm = await startup(p).then(
    () => undefined,
    (e: Error) => e.message
  )
  if (warm !== undefined) results.set(p.name, warm)
}
for (let i = 0; i < startupRuns; i++) {
  for (const p of programs) {
    const got = results.get(p.name)
    if (typeof got === "string") continue
    const r = await startups(p, 1)
    results.set(p.name, typeof r === "string" ? r : [...(got ?? []), ...r])
  }
}

const startupRows = programs.map((p) => {
  const r = results.get(p.name)
  if (r === undefined || typeof r === "string") return [p.name, "did not reach its prompt", "", "", "", ""]
  const ready = r.map((s) => s.readyMs)
  return [
    p.name,
    fmt(median(ready)),
    fmt(Math.min(...ready)),
    fmt(median(r.map((s) => s.echoMs))),
    `${median(r.map((s) => s.peakMiB)).toFixed(0)} MiB`,
    `${median(r.map((s) => s.idleMiB)).toFixed(0)} MiB`
  ]
})
for (const [name] of unavailable) startupRows.push([name, "not installed", "", "", "", ""])
for (const p of programs) {
  const r = results.get(p.name)
  if (typeof r === "string") notes.push(`${p.name} did not reach its prompt: ${r.split("\n").slice(0, 1).join(" ")}`)
}
for (const [name, why] of unavailable) notes.push(`${name}: ${why}`)

const reinsStart = results.get("reins")
if (PARTS.includes("a")) {
  console.log(`\ntui (a) — launch → input prompt ready under a ${COLS}×${ROWS} pty, median of ${RUNS} (after one warm-up launch each)`)
  console.log(`machine: ${machine()}, load average ${os.loadavg()[0]!.toFixed(1)} at the start\n`)
  console.log(table(["program", "prompt ready", "min", "typed word shown", "peak RSS", "idle RSS"], startupRows))
  if (reinsStart !== undefined && typeof reinsStart !== "string") {
    const ready = median(reinsStart.map((s) => s.readyMs))
    const peak = median(reinsStart.map((s) => s.peakMiB))
    console.log(
      `\nreins goals: prompt ready ${fmt(ready)} (≤ ${READY_TARGET_MS} ms: ${ready <= READY_TARGET_MS ? "ok" : "MISS"}), peak RSS ${peak.toFixed(0)} MiB (≤ ${RSS_TARGET_MiB} MiB: ${peak <= RSS_TARGET_MiB ? "ok" : "MISS"})`
    )
  }
  console.log(`\n"prompt ready": the screen shows the program's input marker —`)
  for (const p of programs) console.log(`  ${p.name}: ${p.markerNote}`)
  console.log(`"typed word shown": launch → a word typed after the marker is drawn in the input. RSS: the process tree from /proc`)
  console.log(`(peak: sum of VmHWM after launch and 1 s idle; idle: sum of VmRSS then). Anchors run with a dummy API key, offline.`)
}

// ---------------------------------------------------------------------------------------------
// (b) streaming a 20 KB answer at 200 chunks/s, and (c) history of 50 vs 500 messages

/** Starts reins in the project and waits for its prompt. */
const openReins = async (args: ReadonlyArray<string>, waitFor: string, timeoutMs = 30_000) => {
  const start = performance.now()
  const pty = spawnPty([REINS, ...args], { cwd: proj.cwd, env: reinsEnv, cols: COLS, rows: ROWS })
  await pty.waitFor(waitFor, timeoutMs)
  const shownMs = performance.now() - start
  await pty.waitFor(REINS_MARKER, timeoutMs)
  return { pty, shownMs }
}

interface StreamStats {
  readonly chunks: number
  readonly streamMs: number
  readonly cpuPerChunkMs: number
  readonly frames: number
  readonly dropped: number
  readonly slots: number
  readonly maxGapMs: number
  /** chunk sent → its text drawn, median and worst, over the chunks that carried a probe */
  readonly latencyMs: number
  readonly worstLatencyMs: number
}

/** Ink's default frame budget (30 fps): a slot of this length during the stream with no new screen is a dropped frame. */
const FRAME_MS = 1000 / 30

/**
 * Sends a prompt and streams `chunks`; watches every screen state until `end` is drawn. `probes[k]`, when set, is a
 * word that chunk k carries: the time it first shows on screen minus the time the server sent the chunk is its latency.
 */
const streamInto = async (
  pty: Pty,
  srv: StreamServer,
  chunks: ReadonlyArray<string>,
  intervalMs: number,
  end: string,
  probes: ReadonlyMap<number, string>
): Promise<StreamStats> => {
  const early = [end, ...probes.values()].find((w) => pty.scrollback().includes(w))
  if (early !== undefined) throw new Error(`"${early}" is on screen before it was streamed: the measure would be wrong`)
  srv.plan({ chunks, intervalMs })
  const requestIndex = srv.sent.length
  const frames: Array<number> = []
  const seen = new Map<string, number>()
  let last = pty.screen()
  const stop = pty.onDrawn(() => {
    const s = pty.screen()
    if (s === last) return
    last = s
    const now = performance.now()
    frames.push(now)
    for (const probe of probes.values()) if (!seen.has(probe) && s.includes(probe)) seen.set(probe, now)
  })
  pty.type("stream the answer")
  await pty.press("enter")
  while (srv.sent.length <= requestIndex || srv.sent[requestIndex]!.length === 0) await Bun.sleep(1)
  const cpuStart = cpuMs(pty.pid)
  await pty.waitFor(end, 120_000)
  const cpuEnd = cpuMs(pty.pid)
  stop()
  await pty.waitFor(REINS_MARKER, 30_000)
  const sent = srv.sent[requestIndex]!
  const first = sent[0]!
  const lastSent = sent.at(-1)!
  const during = frames.filter((t) => t >= first && t <= lastSent + FRAME_MS)
  const slots = Math.max(1, Math.ceil((lastSent - first) / FRAME_MS))
  const filled = new Set(during.map((t) => Math.min(slots - 1, Math.floor((t - first) / FRAME_MS))))
  const gaps = during.map((t, i) => t - (i === 0 ? first : during[i - 1]!))
  const latencies = [...probes].flatMap(([k, probe]) => (seen.has(probe) ? [seen.get(probe)! - sent[k]!] : []))
  return {
    chunks: sent.length,
    streamMs: lastSent - first,
    cpuPerChunkMs: (cpuEnd - cpuStart) / sent.length,
    frames: during.length,
    dropped: slots - filled.size,
    slots,
    maxGapMs: Math.max(0, ...gaps),
    latencyMs: latencies.length > 0 ? median(latencies) : NaN,
    worstLatencyMs: latencies.length > 0 ? Math.max(...latencies) : NaN
  }
}

// without (a), the warm-up launch alone says whether reins reaches its prompt
const reinsReady = typeof reinsStart !== "string"
if (!reinsReady) {
  console.log(`\ntui (b), (c): skipped — reins did not reach its prompt: ${reinsStart.split("\n")[0]}`)
}
if (reinsReady && PARTS.includes("b")) {
  const END = "END-OF-ANSWER-7F3"
  const answer = markdownAnswer(20_000, END)
  const chunks = pieces(answer, 20)
  const streamRuns: Array<StreamStats> = []
  for (let i = 0; i < RUNS; i++) {
    const { pty } = await openReins([], REINS_MARKER)
    streamRuns.push(await streamInto(pty, server, chunks, 5, END, new Map()))
    await pty.close()
  }
  // reins' CPU share at rest: idle at the prompt, and waiting 3 s for a model's first token (spinner, elapsed time)
  const idleShare: Array<number> = []
  const waitShare: Array<number> = []
  for (let i = 0; i < RUNS; i++) {
    const { pty } = await openReins([], REINS_MARKER)
    await Bun.sleep(500)
    let cpu = cpuMs(pty.pid)
    let at = performance.now()
    await Bun.sleep(2_000)
    idleShare.push((cpuMs(pty.pid) - cpu) / (performance.now() - at))
    server.plan({ chunks: ["WAIT-END"], intervalMs: 0, delayMs: 3_000 })
    const requests = server.sent.length
    pty.type("wait for it")
    await pty.press("enter")
    while (server.sent.length === requests) await Bun.sleep(1)
    await Bun.sleep(300)
    cpu = cpuMs(pty.pid)
    at = performance.now()
    await Bun.sleep(2_000)
    waitShare.push((cpuMs(pty.pid) - cpu) / (performance.now() - at))
    await pty.waitFor("WAIT-END", 30_000)
    await pty.close()
  }
  const m = (f: (s: StreamStats) => number) => median(streamRuns.map(f))
  console.log(
    `\ntui (b) — a ${(answer.length / 1024).toFixed(1)} KiB markdown answer in ${chunks.length} chunks at 200 chunks/s (one every 5 ms), median of ${RUNS}\n`
  )
  console.log(
    table(
      ["measure", "value"],
      [
        ["stream length (first → last chunk sent)", fmt(m((s) => s.streamMs))],
        ["reins CPU time per chunk (utime+stime)", `${m((s) => s.cpuPerChunkMs).toFixed(2)} ms`],
        ["reins CPU share while streaming", `${(((m((s) => s.cpuPerChunkMs) * m((s) => s.chunks)) / m((s) => s.streamMs)) * 100).toFixed(0)} % of a core`],
        ["distinct screens drawn during the stream", `${m((s) => s.frames)}`],
        [`frames dropped (of ${m((s) => s.slots)} slots of ${FRAME_MS.toFixed(1)} ms)`, `${m((s) => s.dropped)}`],
        ["longest time without a new screen", fmt(m((s) => s.maxGapMs))],
        ["reins CPU share idle at the prompt", `${(median(idleShare) * 100).toFixed(1)} % of a core`],
        ["reins CPU share waiting for the model's first token", `${(median(waitShare) * 100).toFixed(1)} % of a core`]
      ]
    )
  )
  console.log(`\nCPU: /proc/<reins pid>/stat utime+stime from the first chunk sent to the answer's last line drawn, over the chunks.`)
  console.log(`Frames: a screen is a distinct state of the headless xterm after a write from reins. The stream is cut into slots of`)
  console.log(`1/30 s (Ink's default frame rate); a slot in which chunks arrived but no new screen was drawn is a dropped frame.`)
}
if (reinsReady && PARTS.includes("c")) {
  const templateID = await recordTurn(REINS, proj.cwd, proj.env, pointAt)
  pointAt(server.url)
  const sizes = [50, 500]
  const probeChunks = Array.from({ length: 20 }, (_, k) => `word${String(k).padStart(2, "0")}x `)
  const probes = new Map(probeChunks.map((c, k) => [k, c.trim()] as const))
  const rows: Array<Array<string>> = []
  for (const n of sizes) {
    const shown: Array<number> = []
    const streams: Array<StreamStats> = []
    for (let i = 0; i < RUNS; i++) {
      // a new copy each run: the answer streamed into a session stays in it
      const h = await Effect.runPromise(buildHistory(proj.dataDir, templateID, n))
      const { pty, shownMs } = await openReins(["--session", h.sessionID], h.lastMarker, 60_000)
      shown.push(shownMs)
      streams.push(await streamInto(pty, server, [...probeChunks, "HISTORY-END"], 100, "HISTORY-END", probes))
      await pty.close()
    }
    rows.push([
      `${n} messages`,
      fmt(median(shown)),
      fmt(median(streams.map((s) => s.latencyMs))),
      fmt(median(streams.map((s) => s.worstLatencyMs))),
      `${median(streams.map((s) => s.cpuPerChunkMs)).toFixed(1)} ms`,
      `${(median(streams.map((s) => (s.cpuPerChunkMs * s.chunks) / s.streamMs)) * 100).toFixed(0)} %`
    ])
  }
  console.log(`\ntui (c) — \`reins --session ID\` on a stored session (turns of 5 messages: prompt, bash, write, edit, markdown answer), median of ${RUNS}\n`)
  console.log(table(["history", "launch → last message shown", "chunk sent → drawn", "worst chunk", "CPU per chunk", "CPU share"], rows))
  console.log(`\nThen one more answer streams 20 chunks, one every 100 ms, each carrying a word; "sent → drawn" is the time from the`)
  console.log(`server writing a chunk to its word showing on screen; CPU as in (b), and its share of one core over the stream.
Equal figures at 50 and 500 messages: no re-render of the transcript per chunk.`)
}

if (notes.length > 0) console.log(`\nnotes:\n${notes.map((n) => `- ${n}`).join("\n")}`)
await server.stop()
proj.cleanup()
fs.rmSync(scratch, { recursive: true, force: true })
