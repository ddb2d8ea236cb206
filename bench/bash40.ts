// Benchmark bash40: 40 steps, each one `bash` call running `echo`, then a final text answer,
// against the scripted OpenAI-compatible server. Compares reins with a bare AI SDK loop and with pi
// (installed from the npm registry at bench time, run in print mode), measured in the same run,
// alternating. Usage: bun run bench  (medians of 5; REINS_BENCH_RUNS to change)
import { SCRIPTED_MODEL_ID, startScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { installPi, PI_NAME, piEnv, piModel } from "./pi.ts"
import { BIN, machine, measure, median, project, root, type Sample } from "./support.ts"

const RUNS = Number(process.env.REINS_BENCH_RUNS ?? 5)
const STEPS = 40
const PROMPT = "run the 40 commands"
const ANSWER = "All 40 commands ran."

const script: Array<ScriptedStep> = [
  ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: "bash", arguments: { command: `echo step ${i + 1}` } }] })),
  { text: ANSWER }
]

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")

interface Run extends Sample {
  /** Launch → the scripted server got the first request. */
  readonly firstMs: number
  /** First → last request, per step. */
  readonly stepMs: number
}

/** One run on a fresh scripted server and scratch project; it must make every request of the script and print the answer. */
const run = async (command: (p: ReturnType<typeof project>, url: string) => { cmd: Array<string>; env: Record<string, string> }, timeoutMs?: number) => {
  const server = await startScriptedServer(script)
  const p = project(server.url)
  try {
    const { cmd, env } = command(p, server.url)
    const start = performance.now()
    const sample = await measure(cmd, p.cwd, env, ANSWER, timeoutMs)
    if (server.requests.length !== script.length) throw new Error(`${path.basename(cmd[0]!)} made ${server.requests.length} requests, not ${script.length}`)
    const at = server.requests.map((r) => r.receivedAt)
    return { ...sample, firstMs: at[0]! - start, stepMs: (at.at(-1)! - at[0]!) / STEPS } satisfies Run
  } finally {
    await server.stop()
    p.cleanup()
  }
}

const reinsRun = (args: Array<string>) => run((p) => ({ cmd: [BIN, "run", "--yolo", ...args, PROMPT], env: p.env }))

// pi in print mode, the scripted server as its custom provider, HOME and TMPDIR the scratch project's (nothing of this machine's)
const piExe = installPi()
const piRun = (exe: string) =>
  run((p, url) => ({ cmd: [exe, ...piModel(p.dataDir, url, SCRIPTED_MODEL_ID), "-p", PROMPT], env: { ...piEnv(p.dataDir), TMPDIR: p.env.TMPDIR } }), 120_000)
const whyNot = (e: Error) => e.message.replace(/\s+/g, " ").trim().slice(0, 400)
/** pi's runs, or why pi is not in the figures (not installed, or a run failed). */
let pi: Array<Run> | string = typeof piExe === "string" ? [] : piExe.failed
// one unrecorded run first: the OS's file cache for its node_modules, and whether it runs here at all
if (typeof piExe === "string") pi = await piRun(piExe).then(() => [], whyNot)

const reins: Array<Run> = []
const baseline: Array<Sample> = []
const version: Array<Sample> = []
// the same run with the OS sandbox off: what bubblewrap costs per command
const unsandboxed: Array<Sample> = []
for (let i = 0; i < RUNS; i++) {
  // alternate them so machine noise hits all alike
  reins.push(await reinsRun([]))
  if (typeof piExe === "string" && typeof pi !== "string") {
    const got: Array<Run> = pi
    pi = await piRun(piExe).then((r) => [...got, r], whyNot)
  }
  unsandboxed.push(await reinsRun(["--sandbox", "off"]))
  baseline.push(await run((p, url) => ({ cmd: ["bun", path.join(root, "bench", "baseline.ts"), url], env: p.env })))
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
const row = (name: string, value: string, target: string, ok?: boolean) =>
  `| ${name.padEnd(34)} | ${value.padStart(10)} | ${target.padEnd(10)} | ${ok === undefined ? "    " : ok ? "ok  " : "MISS"} |`
const ms = (xs: ReadonlyArray<number>) => `${median(xs).toFixed(0)} ms`

console.log(`\nbash40 — ${STEPS} bash steps + a final answer, scripted server on 127.0.0.1, medians of ${RUNS}`)
console.log(`machine: ${machine()}\n`)
console.log(`| ${"measure".padEnd(34)} | ${"value".padStart(10)} | ${"target".padEnd(10)} |      |`)
console.log(`|${"-".repeat(36)}|${"-".repeat(12)}|${"-".repeat(12)}|------|`)
console.log(row("reins --version wall", `${v.toFixed(0)} ms`, "≤ 60 ms", v <= 60))
console.log(row("reins bash40 wall", `${(r.wall / 1000).toFixed(2)} s`, "≤ 0.8 s", r.wall <= 800))
console.log(row("reins bash40 peak RSS", `${r.rss.toFixed(0)} MiB`, "≤ 150 MiB", r.rss <= 150))
console.log(row("reins launch → first request", ms(reins.map((s) => s.firstMs)), ""))
console.log(row("reins time per step", ms(reins.map((s) => s.stepMs)), ""))
console.log(row("reins bash40 wall, --sandbox off", `${(off / 1000).toFixed(2)} s`, "", true))
console.log(row("sandbox cost per command", `${perCommand.toFixed(1)} ms`, "≤ 10 ms", perCommand <= 10))
console.log(row("sandbox on / off (wall, paired)", `${sandboxRatio.toFixed(2)}×`, "≤ 1.10×", sandboxRatio <= 1.1))
console.log(row("baseline (bare AI SDK loop) wall", `${(b.wall / 1000).toFixed(2)} s`, "", true))
console.log(row("baseline peak RSS", `${b.rss.toFixed(0)} MiB`, "", true))
console.log(row("reins overhead vs baseline (wall)", `${(r.wall / b.wall).toFixed(2)}×`, "≤ 2×", r.wall / b.wall <= 2))
if (typeof pi === "string") console.log(row(`reins / ${PI_NAME} (wall, paired)`, "no pi", "≤ 0.6×"))
else {
  const piRuns = pi
  const piRatio = median(reins.map((s, i) => s.wallMs / piRuns[i]!.wallMs))
  console.log(row(`${PI_NAME} bash40 wall`, `${(median(pi.map((s) => s.wallMs)) / 1000).toFixed(2)} s`, ""))
  console.log(row(`${PI_NAME} bash40 peak RSS`, `${median(pi.map((s) => s.rssMiB)).toFixed(0)} MiB`, ""))
  console.log(row(`${PI_NAME} launch → first request`, ms(pi.map((s) => s.firstMs)), ""))
  console.log(row(`${PI_NAME} time per step`, ms(pi.map((s) => s.stepMs)), ""))
  console.log(row(`reins / ${PI_NAME} (wall, paired)`, `${piRatio.toFixed(2)}×`, "≤ 0.6×", piRatio <= 0.6))
  // pi runs its commands without a sandbox
  console.log(row(`  the same, reins --sandbox off`, `${median(unsandboxed.map((s, i) => s.wallMs / piRuns[i]!.wallMs)).toFixed(2)}×`, ""))
}
const runs = (xs: ReadonlyArray<Sample>) => xs.map((s) => s.wallMs.toFixed(0)).join(", ")
console.log(
  `\nall runs (ms): reins ${runs(reins)}; --sandbox off ${runs(unsandboxed)}; baseline ${runs(baseline)}; --version ${runs(version)}${typeof pi === "string" ? "" : `; pi ${runs(pi)}`}`
)
console.log(
  typeof pi === "string"
    ? `\n${PI_NAME} is not in the figures: ${pi}`
    : `\n${PI_NAME}: \`pi --provider bench --model ${SCRIPTED_MODEL_ID} -p "${PROMPT}"\` (node ${Bun.spawnSync(["node", "--version"]).stdout.toString().trim()}; the server as a custom openai-completions provider in a scratch ~/.pi/agent/models.json, PI_OFFLINE=1), after one unrecorded run.`
)
