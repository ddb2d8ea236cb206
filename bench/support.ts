// Shared by the benchmarks: running the built CLI, a scratch project, the machine line, tables.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const root = path.resolve(import.meta.dir, "..")
/** The built CLI; REINS_BENCH_BIN points a bench at another build (bench/compare.ts does, for serve). */
export const BIN = process.env.REINS_BENCH_BIN ?? path.join(root, "apps", "cli", "dist", "reins.js")

export interface Sample {
  readonly wallMs: number
  readonly rssMiB: number
  readonly stdout: string
}

/** Runs a command to completion (killed after `timeoutMs`, when given): wall time, the process's peak RSS and its stdout. */
export const measure = async (cmd: Array<string>, cwd: string, env: Record<string, string>, expect?: string, timeoutMs?: number): Promise<Sample> => {
  const start = performance.now()
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe", ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }) })
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const wallMs = performance.now() - start
  if (proc.exitCode !== 0 || (expect && !stdout.includes(expect))) {
    throw new Error(`${cmd.join(" ")} failed (${proc.exitCode ?? proc.signalCode}):\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`)
  }
  const usage = proc.resourceUsage()
  return { wallMs, rssMiB: (usage?.maxRSS ?? 0) / 1024 / 1024, stdout }
}

export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/** A scratch git repo whose reins.json points at the scripted server (a model of `context` tokens), and a scratch data dir. */
export const project = (url: string, options: { readonly context?: number } = {}) => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-")))
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-data-"))
  execFileSync("git", ["init", "-q"], { cwd })
  // the scripted model in the user's own config (HOME is the data dir): a project's provider would need trust
  const configFile = path.join(dataDir, ".config", "reins", "reins.json")
  fs.mkdirSync(path.dirname(configFile), { recursive: true })
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      model: "local/scripted",
      provider: { local: { type: "openai-compatible", baseURL: url, models: { scripted: { context: options.context ?? 128_000, output: 8_000 } } } }
    })
  )
  // a temp dir of its own: a shared machine's /tmp (tens of thousands of entries, which the sandbox lists) is not measured
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-tmp-"))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, TMPDIR: tmp }
  return {
    cwd,
    dataDir,
    configFile,
    env,
    cleanup: () => {
      fs.rmSync(cwd, { recursive: true, force: true })
      fs.rmSync(dataDir, { recursive: true, force: true })
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  }
}

/** The `--steps N` flag (default `fallback`); a value that is not a whole number of at least `min` ends the bench (exit 2). */
export const stepsFlag = (fallback: number, min: number) => {
  const flag = process.argv.indexOf("--steps")
  const steps = flag >= 0 ? Number(process.argv[flag + 1]) : fallback
  if (!Number.isInteger(steps) || steps < min) {
    console.error(`--steps wants a whole number of at least ${min}, got ${process.argv[flag + 1]}`)
    process.exit(2)
  }
  return steps
}

export const machine = () => {
  const cpu = os.cpus()[0]?.model ?? "unknown cpu"
  return `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, bun ${Bun.version}`
}

/** A markdown table with right-aligned numeric columns. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  return [line(header), `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`, ...rows.map(line)].join("\n")
}

/** A seeded random source (mulberry32), so a benchmark's scratch project is the same on every run: numbers in [0, 1) and a pick from a list. */
export const seeded = (initial: number) => {
  let seed = initial
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!
  return { rand, pick }
}
