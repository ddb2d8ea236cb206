// For bench/tui.ts: the programs compared (reins, the Ink floor, opencode, pi), installing the anchors from the npm
// registry into a temporary directory, and timing a launch under a real pty until the program's prompt is drawn.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { spawnPty, treePeakRssBytes, treeRssBytes } from "../apps/cli/test/pty/index.ts"
import { root } from "./support.ts"

export const MiB = 2 ** 20
export const COLS = 100
export const ROWS = 30

/** A program whose interactive startup is measured. */
export interface Program {
  readonly name: string
  readonly cmd: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Record<string, string>
  /** What on the screen says the input prompt is ready, and in words for the table's notes. */
  readonly marker: string | RegExp
  readonly markerNote: string
  readonly timeoutMs: number
}

export interface Startup {
  /** Launch → the prompt's marker drawn. */
  readonly readyMs: number
  /** Launch → a typed word drawn in the prompt (the input really takes keys). */
  readonly echoMs: number
  /** Sum of the peak RSS (VmHWM) of the process tree, after launch and 1 s idle at the prompt. */
  readonly peakMiB: number
  /** RSS of the process tree after 1 s idle. */
  readonly idleMiB: number
}

const PROBE = "qzxv"

/** Launches `program` under a COLS×ROWS pty and times it to its prompt; throws (with the screen) when it does not get there. */
export const startup = async (program: Program): Promise<Startup> => {
  const start = performance.now()
  const pty = spawnPty(program.cmd, { cwd: program.cwd, env: program.env, cols: COLS, rows: ROWS })
  try {
    await pty.waitFor(program.marker, program.timeoutMs)
    const readyMs = performance.now() - start
    pty.type(PROBE)
    await pty.waitFor(PROBE, 5_000)
    const echoMs = performance.now() - start
    await Bun.sleep(1_000)
    return { readyMs, echoMs, peakMiB: treePeakRssBytes(pty.pid) / MiB, idleMiB: treeRssBytes(pty.pid) / MiB }
  } finally {
    await pty.close()
  }
}

/** Runs `startup` `runs` times; a failure is kept as the reason the program is not in the figures. */
export const startups = async (program: Program, runs: number): Promise<Array<Startup> | string> => {
  const out: Array<Startup> = []
  for (let i = 0; i < runs; i++) {
    const r = await startup(program).then(
      (s) => s,
      (e: Error) => e.message
    )
    if (typeof r === "string") return r
    out.push(r)
  }
  return out
}

/**
 * Installs `spec` (an exact npm version) with npm into a directory under the system temp dir, once per machine, and
 * returns the path of its executable `bin`, or why it could not (no registry, no such version, no binary).
 */
export const installAnchor = (spec: string, bin: string): string | { readonly failed: string } => {
  const dir = path.join(os.tmpdir(), "reins-bench-anchors", spec.replace(/[^a-zA-Z0-9.@-]/g, "_"))
  const exe = path.join(dir, "node_modules", ".bin", bin)
  if (fs.existsSync(exe)) return exe
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ private: true }))
  try {
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", spec], { cwd: dir, stdio: "pipe", timeout: 300_000 })
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string }
    return { failed: `npm install ${spec} failed: ${(err.stderr?.toString() || err.message).trim().split("\n").slice(-3).join(" ")}` }
  }
  return fs.existsSync(exe) ? exe : { failed: `npm install ${spec} gave no ${bin} executable` }
}

/** The bare Ink app (bench/tui-hello.tsx) bundled as reins is (minified, production React, one file), into `dir`. */
export const buildInkFloor = async (dir: string): Promise<string> => {
  const cli = path.join(root, "apps", "cli")
  const result = await Bun.build({
    entrypoints: [path.join(root, "bench", "tui-hello.tsx")],
    outdir: dir,
    target: "bun",
    minify: true,
    external: ["react-devtools-core"],
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    // ink and react as apps/cli has them (same versions as reins): the bench package does not depend on them itself
    plugins: [{ name: "from-cli", setup: (b) => void b.onResolve({ filter: /^(ink|react)(\/.*)?$/ }, (a) => ({ path: Bun.resolveSync(a.path, cli) })) }]
  })
  if (!result.success) throw new Error(`building the Ink floor failed:\n${result.logs.join("\n")}`)
  return path.join(dir, "tui-hello.js")
}

/** The environment every program starts with: a private HOME, a UTF-8 locale, and nothing of this shell's. */
export const baseEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  LANG: "C.UTF-8",
  TERM: "xterm-256color"
})
