// Benchmark (issue 29): the cost of checkpointing a step, on a 10k-file and a 100k-file project, side by side with
// opencode's approach (a git repository of its own over the project: `git add -A` and `git write-tree` at every step,
// `git diff-tree` for what changed), measured the same way in the same run.
// - cold: the first checkpoint (everything copied into the store), once per project;
// - warm: a step after it: the checkpoint begun, FILES files rewritten (as a command would: a few KiB each), the
//   changes read back; the median and p90 over STEPS steps; only the checkpoint's own time counts.
// - reopen: the first checkpoint of a later process on the same project (what the last one saved spares reading the
//   files again: only a scan of their stat);
// - disk per step: the store's growth over the steps, against the bytes the steps wrote (goal ≤ 1.5×).
// STEPS steps (default 100) on 10k files, at most 20 on larger projects (git's way takes seconds a step there).
// Goals: ≤ 20 ms a step on 10k files after the first, ≤ 1.5× the changed bytes on disk.
// Usage: bun bench/checkpoints.ts [--steps N] [--sizes 10000,100000]
import { DataDir } from "@reins/domain"
import { Checkpoints } from "@reins/workspace"
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { machine, median, table } from "./support.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1]! : fallback
}
const STEPS = Number(arg("--steps", "100"))
const SIZES = arg("--sizes", "10000,100000").split(",").map(Number)
if (!Number.isInteger(STEPS) || STEPS < 1 || SIZES.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("--steps wants a whole number of at least 1, --sizes a comma-separated list of file counts")
  process.exit(2)
}
/** Files a step rewrites. */
const FILES = 3

/** A project of `files` source files (~1 KiB each, 50 to a directory) and a node_modules the checkpoints leave out. */
const makeProject = (files: number) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-ckpt-")))
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, "src", `m${Math.floor(i / 2500)}`, `d${Math.floor(i / 50)}`)
    if (i % 50 === 0) fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `f${i}.ts`), `export const v${i} = ${i}\n${"// filler line of a source file\n".repeat(30)}`)
  }
  fs.mkdirSync(path.join(root, "node_modules", "dep"), { recursive: true })
  fs.writeFileSync(path.join(root, "node_modules", "dep", "index.js"), "module.exports = 1\n")
  fs.writeFileSync(path.join(root, ".gitignore"), "node_modules/\n")
  return root
}

/** What step `n` writes: FILES files rewritten with new content of ~4 KiB; the bytes written. */
const change = (root: string, files: number, n: number) => {
  let bytes = 0
  for (let k = 0; k < FILES; k++) {
    const i = (n * 7919 + k * 104729) % files
    const file = path.join(root, "src", `m${Math.floor(i / 2500)}`, `d${Math.floor(i / 50)}`, `f${i}.ts`)
    const text = `export const v${i} = ${n}\n${`// step ${n} rewrote this line\n`.repeat(130)}`
    fs.writeFileSync(file, text)
    bytes += Buffer.byteLength(text)
  }
  return bytes
}

const du = (dir: string): number => {
  let total = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) total += du(full)
    else if (entry.isFile()) total += fs.statSync(full).blocks * 512
  }
  return total
}

interface Figures {
  readonly coldMs: number
  readonly reopenMs?: number
  readonly warm: ReadonlyArray<number>
  readonly diskBytes: number
  readonly changedBytes: number
  readonly changed: number
}

const stepsFor = (files: number) => (files > 10_000 ? Math.min(STEPS, 20) : STEPS)

const ours = async (files: number): Promise<Figures> => {
  const root = makeProject(files)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-ckpt-data-"))
  const layer = Checkpoints.layer.pipe(Layer.provide(Layer.succeed(DataDir, dataDir)))
  try {
    const figures = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const checkpoints = yield* Checkpoints
          let t = performance.now()
          const first = yield* checkpoints.begin(root)
          yield* first.ready
          yield* first.end
          const coldMs = performance.now() - t
          const store = path.join(dataDir, "checkpoints")
          const disk0 = du(store)
          const warm: Array<number> = []
          let changedBytes = 0
          let changed = 0
          for (let n = 0; n < stepsFor(files); n++) {
            t = performance.now()
            const checkpoint = yield* checkpoints.begin(root)
            // as a step's tools do: the changes come once the checkpoint has begun
            yield* checkpoint.ready
            let ms = performance.now() - t
            changedBytes += change(root, files, n)
            t = performance.now()
            changed += (yield* checkpoint.end).length
            ms += performance.now() - t
            warm.push(ms)
          }
          return { coldMs, warm, diskBytes: du(store) - disk0, changedBytes, changed }
        }).pipe(Effect.provide(layer))
      )
    )
    // a later process: the first checkpoint again, with what the last one saved
    const reopenMs = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const t = performance.now()
          yield* Effect.flatMap((yield* Checkpoints).begin(root), (c) => c.end)
          return performance.now() - t
        }).pipe(Effect.provide(layer))
      )
    )
    return { ...figures, reopenMs }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** opencode's snapshot: a git repository of its own (GIT_DIR elsewhere, the project as work tree). */
const gitSnapshot = (files: number): Figures => {
  const root = makeProject(files)
  const gitDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-ckpt-git-"))
  const env = { ...process.env, GIT_DIR: gitDir, GIT_WORK_TREE: root }
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, env, encoding: "utf8", maxBuffer: 1 << 28 }).trim()
  try {
    git("init", "-q")
    let t = performance.now()
    git("add", "-A", ".")
    let tree = git("write-tree")
    const coldMs = performance.now() - t
    const disk0 = du(gitDir)
    const warm: Array<number> = []
    let changedBytes = 0
    let changed = 0
    for (let n = 0; n < stepsFor(files); n++) {
      // track() before the step, track() after it and the files between the two trees (patch())
      t = performance.now()
      git("add", "-A", ".")
      const before = git("write-tree")
      let ms = performance.now() - t
      changedBytes += change(root, files, n)
      t = performance.now()
      git("add", "-A", ".")
      tree = git("write-tree")
      changed += git("diff-tree", "-r", "--name-only", before, tree).split("\n").filter(Boolean).length
      ms += performance.now() - t
      warm.push(ms)
    }
    return { coldMs, warm, diskBytes: du(gitDir) - disk0, changedBytes, changed }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(gitDir, { recursive: true, force: true })
  }
}

const p90 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!
const msText = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`)

console.log(`# checkpoints (${machine()})`)
console.log(`steps of ${FILES} files rewritten (~4 KiB each): ${STEPS} on 10k files, at most 20 on larger ones; a checkpoint's own time only\n`)
const rows: Array<Array<string>> = []
for (const files of SIZES) {
  for (const [name, figures] of [
    ["reins (store + watcher)", await ours(files)],
    ["git snapshot (opencode's way)", gitSnapshot(files)]
  ] as const) {
    rows.push([
      `${files.toLocaleString("en-US")} files`,
      name,
      msText(figures.coldMs),
      figures.reopenMs === undefined ? "–" : msText(figures.reopenMs),
      msText(median(figures.warm)),
      msText(p90(figures.warm)),
      `${(figures.diskBytes / 1024 / figures.warm.length).toFixed(1)} KiB`,
      `${(figures.diskBytes / figures.changedBytes).toFixed(2)}×`,
      String(figures.changed)
    ])
  }
}
console.log(
  table(
    ["project", "checkpoints", "cold (first)", "reopen (a later process)", "warm p50", "warm p90", "disk a step", "disk / bytes written", "changes seen"],
    rows
  )
)
console.log("(goals: warm ≤ 20 ms a step on 10k files; disk ≤ 1.5× the bytes the steps wrote)")
