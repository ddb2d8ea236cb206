// bench:compare — this checkout's build against another revision's, side by side in one run (issue 27).
// Builds REV in a temporary git worktree (bun install --frozen-lockfile, bun run build), then runs for both builds,
// alternating A B A B … so that the machine's drift hits both alike:
// - text (only with --only text): a run with no tool step, one answer: wall and CPU (startup);
// - bash40: 40 scripted `bash` steps and an answer (`reins run --yolo`): wall, CPU (user + system), peak RSS;
// - bash300: 300 such steps in one turn, no compaction: wall, and the process's RSS when request 40 and request 300
//   reach the scripted server (RSS 300 / 40 is the issue's memory figure), and its peak RSS;
// - serve: bench/serve.ts (--sessions, --steps) against each build's `reins serve`: event p50 / p99.
// Prints one table of medians and the ratio this / REV, with the machine, and removes its worktree.
// Usage: bun run bench:compare REV [--runs N] [--runs300 N] [--serve-runs N] [--only text,bash40,bash300,serve]
//        [--sandbox off] [--build DIR]   (--build: an already built checkout to use instead of building REV)
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { machine, median, project, root, table } from "./support.ts"

const MiB = 2 ** 20
const flag = (name: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const count = (name: string, fallback: number) => {
  const n = Number(flag(name) ?? fallback)
  if (!Number.isInteger(n) || n < 0) {
    console.error(`${name} wants a whole number, got ${flag(name)}`)
    process.exit(2)
  }
  return n
}
const rev = process.argv[2]
if (rev === undefined || rev.startsWith("--")) {
  console.error("usage: bun run bench:compare REV [--runs N] [--runs300 N] [--serve-runs N] [--only text,bash40,bash300,serve] [--sandbox off] [--build DIR]")
  process.exit(2)
}
const RUNS = count("--runs", 7)
const RUNS300 = count("--runs300", 3)
const SERVE_RUNS = count("--serve-runs", 1)
const ONLY = new Set((flag("--only") ?? "bash40,bash300,serve").split(","))
const SANDBOX_OFF = flag("--sandbox") === "off"

const git = (args: Array<string>, cwd = root) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim()
const sh = (cmd: Array<string>, cwd: string, what: string) => {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" })
  if (r.exitCode !== 0) throw new Error(`${what} failed in ${cwd} (${r.exitCode}):\n${r.stdout.toString().slice(-1500)}\n${r.stderr.toString().slice(-1500)}`)
}

interface Build {
  readonly name: string
  readonly dir: string
  readonly bin: string
  /** Its CLI takes `--sandbox` (a revision before the OS sandbox does not). */
  readonly sandboxFlag: boolean
  /** It has `reins serve` (a revision before the server does not: an unknown command would wait for a prompt). */
  readonly serves: boolean
}
const describe = (name: string, dir: string): Build => {
  const bin = path.join(dir, "apps", "cli", "dist", "reins.js")
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: build ${dir} first (bun run build)`)
  const help = (args: Array<string>) => {
    const r = Bun.spawnSync(["bun", bin, ...args], { stdout: "pipe", stderr: "pipe", timeout: 30_000 })
    return `${r.stdout}${r.stderr}`
  }
  return { name, dir, bin, sandboxFlag: help(["run", "--help"]).includes("--sandbox"), serves: help(["serve", "--help"]).includes("--port") }
}

// ---- the other revision, built in a temporary worktree ----
const head = `${git(["rev-parse", "--short", "HEAD"])}${git(["status", "--porcelain", "--untracked-files=no"]) === "" ? "" : "+dirty"}`
let worktree: string | undefined
const cleanup = () => {
  if (worktree === undefined) return
  Bun.spawnSync(["git", "worktree", "remove", "--force", worktree], { cwd: root })
  fs.rmSync(path.dirname(worktree), { recursive: true, force: true })
  worktree = undefined
}
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})
const prebuilt = flag("--build")
let other: Build
try {
  const sha = git(["rev-parse", "--short", `${rev}^{commit}`])
  if (prebuilt !== undefined) other = describe(`${rev} (${sha})`, path.resolve(prebuilt))
  else {
    worktree = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-compare-")), "wt")
    console.error(`building ${rev} (${sha}) in ${worktree} …`)
    git(["worktree", "add", "--detach", worktree, sha])
    sh(["bun", "install", "--frozen-lockfile"], worktree, "bun install")
    sh(["bun", "run", "build"], worktree, "bun run build")
    other = describe(`${rev} (${sha})`, worktree)
  }
} catch (e) {
  cleanup()
  throw e
}
const builds: ReadonlyArray<Build> = [describe(`this (${head})`, root), other]

// ---- one scripted run of the CLI ----
interface Sample {
  readonly wallMs: number
  readonly cpuMs: number
  readonly peakMiB: number
  /** RSS (MiB) when request 40 / request STEPS arrived (bash300 only). */
  readonly rss40?: number
  readonly rssEnd?: number
}
const rssOf = (pid: number) => {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024
  } catch {
    return NaN
  }
}
const scriptOf = (steps: number): Array<ScriptedStep> => [
  ...Array.from({ length: steps }, (_, i) => ({ toolCalls: [{ name: "bash", arguments: { command: `echo step ${i + 1}` } }] })),
  { text: `All ${steps} commands ran.` }
]
const runCli = async (build: Build, steps: number): Promise<Sample> => {
  let pid = 0
  const at = new Map<number, number>()
  const server = await startScriptedServer(scriptOf(steps), {
    keepBodies: false,
    respond: (_body, index) => {
      if (pid > 0 && (index === 39 || index === steps - 1)) at.set(index, rssOf(pid))
      return undefined
    }
  })
  // a context no run fills: nothing is compacted
  const p = project(server.url, { context: 2_000_000 })
  const sandbox = SANDBOX_OFF && build.sandboxFlag ? ["--sandbox", "off"] : []
  const start = performance.now()
  const proc = Bun.spawn([build.bin, "run", "--yolo", ...sandbox, `run the ${steps} commands`], { cwd: p.cwd, env: p.env, stdout: "pipe", stderr: "pipe" })
  pid = proc.pid
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const wallMs = performance.now() - start
  await server.stop()
  p.cleanup()
  if (proc.exitCode !== 0 || !stdout.includes(`All ${steps} commands ran.`)) {
    throw new Error(`${build.name} failed (${proc.exitCode}):\n${stdout.slice(-1500)}\n${stderr.slice(-1500)}`)
  }
  const usage = proc.resourceUsage()
  return {
    wallMs,
    cpuMs: usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000 : NaN,
    peakMiB: (usage?.maxRSS ?? 0) / MiB,
    ...(steps >= 300 ? { rss40: at.get(39) ?? NaN, rssEnd: at.get(steps - 1) ?? NaN } : {})
  }
}

// ---- serve: bench/serve.ts against a build ----
interface Serve {
  readonly p50: number
  readonly p99: number
  readonly turnsPerSecond: number
}
const runServe = async (build: Build): Promise<Serve | string> => {
  if (!build.serves) return "no reins serve"
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-compare-serve-")), "result.json")
  const args = ["--no-opencode", "--only", "reins"]
  for (const f of ["--sessions", "--steps"]) if (flag(f) !== undefined) args.push(f, flag(f)!)
  const proc = Bun.spawn(["bun", path.join(root, "bench", "serve.ts"), ...args], {
    cwd: root,
    env: { ...process.env, REINS_BENCH_BIN: build.bin, REINS_BENCH_JSON: out },
    stdout: "pipe",
    stderr: "pipe"
  })
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const result = fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, "utf8")) as Serve & { failed: Array<string> }) : undefined
  fs.rmSync(path.dirname(out), { recursive: true, force: true })
  if (result === undefined || result.failed.length > 0) {
    return (
      (result?.failed.join("; ") ??
        `${stdout}${stderr}`
          .split("\n")
          .filter((l) => l.startsWith("note:"))
          .join(" ")) ||
      `exit ${proc.exitCode}`
    )
  }
  return result
}

// ---- alternate, collect ----
const samples = {
  text: builds.map(() => [] as Array<Sample>),
  bash40: builds.map(() => [] as Array<Sample>),
  bash300: builds.map(() => [] as Array<Sample>),
  serve: builds.map(() => [] as Array<Serve | string>)
}
try {
  if (ONLY.has("text")) {
    // a run with no tool step: startup and one answer
    for (const b of builds) await runCli(b, 0)
    for (let i = 0; i < RUNS; i++) for (const [k, b] of builds.entries()) samples.text[k]!.push(await runCli(b, 0))
  }
  if (ONLY.has("bash40")) {
    // one untimed run each first: the page cache and bun's transpiler cache warm for both
    for (const b of builds) await runCli(b, 40)
    for (let i = 0; i < RUNS; i++) for (const [k, b] of builds.entries()) samples.bash40[k]!.push(await runCli(b, 40))
  }
  if (ONLY.has("bash300")) for (let i = 0; i < RUNS300; i++) for (const [k, b] of builds.entries()) samples.bash300[k]!.push(await runCli(b, 300))
  if (ONLY.has("serve")) for (let i = 0; i < SERVE_RUNS; i++) for (const [k, b] of builds.entries()) samples.serve[k]!.push(await runServe(b))
} finally {
  cleanup()
}

// ---- the table ----
const med = (xs: ReadonlyArray<number>) => (xs.length === 0 ? NaN : (median(xs.filter((x) => Number.isFinite(x))) ?? NaN))
const fmt = (x: number, unit: string, digits = 0) => (Number.isFinite(x) ? `${x.toFixed(digits)}${unit}` : "–")
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "–")
/** Medians of the per-pair ratios where there are pairs (drift-proof), else the ratio of the medians. */
const pairRatio = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => {
  const pairs = a.map((x, i) => x / b[i]!).filter((x) => Number.isFinite(x))
  return pairs.length > 0 ? `${median(pairs)!.toFixed(2)}×` : "–"
}
const rows: Array<Array<string>> = []
const row = (label: string, pick: (s: Sample) => number | undefined, set: "text" | "bash40" | "bash300", unit: string, digits = 0, scale = 1) => {
  const [a, b] = samples[set].map((xs) => xs.map((s) => (pick(s) ?? NaN) / scale))
  if (a!.length === 0) return
  rows.push([label, fmt(med(a!), unit, digits), fmt(med(b!), unit, digits), pairRatio(a!, b!)])
}
row("text (no tool) wall", (s) => s.wallMs, "text", " s", 2, 1000)
row("text (no tool) CPU (user + sys)", (s) => s.cpuMs, "text", " s", 2, 1000)
row("bash40 wall", (s) => s.wallMs, "bash40", " s", 2, 1000)
row("bash40 CPU (user + sys)", (s) => s.cpuMs, "bash40", " s", 2, 1000)
row("bash40 peak RSS", (s) => s.peakMiB, "bash40", " MiB")
row("bash300 wall", (s) => s.wallMs, "bash300", " s", 2, 1000)
row("bash300 CPU (user + sys)", (s) => s.cpuMs, "bash300", " s", 2, 1000)
row("bash300 RSS at step 40", (s) => s.rss40, "bash300", " MiB")
row("bash300 RSS at step 300", (s) => s.rssEnd, "bash300", " MiB")
row("bash300 RSS step 300 / step 40 (goal ≤ 1.3×)", (s) => (s.rssEnd ?? NaN) / (s.rss40 ?? NaN), "bash300", "×", 2)
row("bash300 peak RSS", (s) => s.peakMiB, "bash300", " MiB")
if (ONLY.has("serve")) {
  const ok = samples.serve.map((xs) => xs.filter((x): x is Serve => typeof x !== "string"))
  const failed = samples.serve.map((xs) => xs.find((x): x is string => typeof x === "string"))
  const pick = (k: number, f: (s: Serve) => number) => (ok[k]!.length > 0 ? med(ok[k]!.map(f)) : NaN)
  for (const [label, f, unit, digits] of [
    ["serve event p50", (s: Serve) => s.p50, " ms", 0],
    ["serve event p99 (goal ≤ 50 ms)", (s: Serve) => s.p99, " ms", 0],
    ["serve turns/s", (s: Serve) => s.turnsPerSecond, "", 2]
  ] as const) {
    const [a, b] = [pick(0, f), pick(1, f)]
    rows.push([
      label,
      Number.isFinite(a) ? fmt(a, unit, digits) : `– ${failed[0]?.slice(0, 40) ?? ""}`,
      Number.isFinite(b) ? fmt(b, unit, digits) : `– ${failed[1]?.slice(0, 40) ?? ""}`,
      ratio(a, b)
    ])
  }
}
const sessions = flag("--sessions") ?? "50"
console.log(`\nbench:compare — ${builds[0]!.name} vs ${builds[1]!.name}`)
console.log(
  `machine: ${machine()}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`
)
console.log(
  `runs: ${[
    ONLY.has("text") ? `text ${RUNS} pairs (after one warm-up each)` : "",
    ONLY.has("bash40") ? `bash40 ${RUNS} pairs (after one warm-up each)` : "",
    ONLY.has("bash300") ? `bash300 ${RUNS300} pairs` : "",
    ONLY.has("serve") ? `serve ${SERVE_RUNS} (${sessions} sessions)` : ""
  ]
    .filter((x) => x !== "")
    .join(", ")}; alternating; medians; ratio = median of pair ratios (this / ${rev})` + `${SANDBOX_OFF ? "; --sandbox off where the build has it" : ""}\n`
)
console.log(table(["measure", builds[0]!.name, builds[1]!.name, "ratio"], rows))
const all = (set: "text" | "bash40" | "bash300") =>
  samples[set].map((xs, k) => `${builds[k]!.name}: ${xs.map((s) => (s.wallMs / 1000).toFixed(2)).join(", ")}`).join("; ")
if (ONLY.has("text")) console.log(`\ntext runs (s) — ${all("text")}`)
if (ONLY.has("bash40")) console.log(`\nbash40 runs (s) — ${all("bash40")}`)
if (ONLY.has("bash300")) console.log(`bash300 runs (s) — ${all("bash300")}`)
