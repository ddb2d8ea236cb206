// Benchmark bash40: 40 steps, each one `bash` call running `echo`, then a final text answer,
// against the scripted OpenAI-compatible server. Compares reins with a bare AI SDK loop measured
// in the same run. Usage: bun run bench  (medians of 5; REINS_BENCH_RUNS to change)
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, machine, measure, median, project, root, type Sample } from "./support.ts"

const RUNS = Number(process.env.REINS_BENCH_RUNS ?? 5)
const STEPS = 40

const script: Array<ScriptedStep> = [
  ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: "bash", arguments: { command: `echo step ${i + 1}` } }] })),
  { text: "All 40 commands ran." }
]

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")

const reins: Array<Sample> = []
const baseline: Array<Sample> = []
const version: Array<Sample> = []
// the same run with the OS sandbox off: what bubblewrap costs per command
const unsandboxed: Array<Sample> = []
for (let i = 0; i < RUNS; i++) {
  // alternate the two so machine noise hits both alike
  {
    const server = await startScriptedServer(script)
    const p = project(server.url)
    reins.push(await measure([BIN, "run", "--yolo", "run the 40 commands"], p.cwd, p.env, "All 40 commands ran."))
    await server.stop()
  }
  {
    const server = await startScriptedServer(script)
    const p = project(server.url)
    unsandboxed.push(await measure([BIN, "run", "--yolo", "--sandbox", "off", "run the 40 commands"], p.cwd, p.env, "All 40 commands ran."))
    await server.stop()
  }
  {
    const server = await startScriptedServer(script)
    const p = project(server.url)
    baseline.push(await measure(["bun", path.join(root, "bench", "baseline.ts"), server.url], p.cwd, p.env, "All 40 commands ran."))
    await server.stop()
  }
  version.push(await measure([BIN, "--version"], root, { PATH: process.env.PATH ?? "" }, "reins v"))
}

const r = { wall: median(reins.map((s) => s.wallMs)), rss: median(reins.map((s) => s.rssMiB)) }
const b = { wall: median(baseline.map((s) => s.wallMs)), rss: median(baseline.map((s) => s.rssMiB)) }
const v = median(version.map((s) => s.wallMs))
const off = median(unsandboxed.map((s) => s.wallMs))
// per pair, so drift hits both alike
const ratios = reins.map((s, i) => s.wallMs / unsandboxed[i]!.wallMs)
const sandboxRatio = median(ratios)
const perCommand = (r.wall - off) / STEPS
const row = (name: string, value: string, target: string, ok: boolean) =>
  `| ${name.padEnd(34)} | ${value.padStart(10)} | ${target.padEnd(10)} | ${ok ? "ok  " : "MISS"} |`

console.log(`\nbash40 — ${STEPS} bash steps + a final answer, scripted server on 127.0.0.1, medians of ${RUNS}`)
console.log(`machine: ${machine()}\n`)
console.log(`| ${"measure".padEnd(34)} | ${"value".padStart(10)} | ${"target".padEnd(10)} |      |`)
console.log(`|${"-".repeat(36)}|${"-".repeat(12)}|${"-".repeat(12)}|------|`)
console.log(row("reins --version wall", `${v.toFixed(0)} ms`, "≤ 60 ms", v <= 60))
console.log(row("reins bash40 wall", `${(r.wall / 1000).toFixed(2)} s`, "≤ 0.8 s", r.wall <= 800))
console.log(row("reins bash40 peak RSS", `${r.rss.toFixed(0)} MiB`, "≤ 150 MiB", r.rss <= 150))
console.log(row("reins bash40 wall, --sandbox off", `${(off / 1000).toFixed(2)} s`, "", true))
console.log(row("sandbox cost per command", `${perCommand.toFixed(1)} ms`, "≤ 10 ms", perCommand <= 10))
console.log(row("sandbox on / off (wall, paired)", `${sandboxRatio.toFixed(2)}×`, "≤ 1.10×", sandboxRatio <= 1.1))
console.log(row("baseline (bare AI SDK loop) wall", `${(b.wall / 1000).toFixed(2)} s`, "", true))
console.log(row("baseline peak RSS", `${b.rss.toFixed(0)} MiB`, "", true))
console.log(row("reins overhead vs baseline (wall)", `${(r.wall / b.wall).toFixed(2)}×`, "≤ 2×", r.wall / b.wall <= 2))
console.log(
  `\nall runs (ms): reins ${reins.map((s) => s.wallMs.toFixed(0)).join(", ")}; --sandbox off ${unsandboxed.map((s) => s.wallMs.toFixed(0)).join(", ")}; baseline ${baseline.map((s) => s.wallMs.toFixed(0)).join(", ")}; --version ${version.map((s) => s.wallMs.toFixed(0)).join(", ")}`
)
