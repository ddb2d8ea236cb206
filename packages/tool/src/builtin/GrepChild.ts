// The grep search, run as its own process by GrepProcess.ts so that a regex that backtracks for
// minutes can be killed at once. Self-contained on purpose: the bundle copies this file as it is
// (imported `with { type: "file" }`), so it may import only Node's built-ins.
//
// The last argument: the parent's pid. stdin: one JSON object (GrepJob). stdout: one JSON line per file that
// matched, failed, or had lines the regex engine gave up on.
import * as fs from "node:fs"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"

interface GrepJob {
  readonly pattern: string
  readonly files: ReadonlyArray<string>
  /** Matching lines kept per file. */
  readonly limit: number
  readonly maxLineLength: number
  readonly maxFileBytes: number
  /** How long (ms) this process may run: past it, it stops on its own, even with nobody left to kill it. */
  readonly deadlineMs?: number
}

// JavaScriptCore's regex engine (Bun's) stops a match after a fixed amount of backtracking and then
// answers "no match", an answer nothing tells from a real one: `/^(?:(a+)+$|a*!)/` is false for 30
// a's and a "!". Such a line costs the engine its whole budget (hundreds of milliseconds); a real
// answer takes microseconds. A line whose "no" took longer than this twice running (once may be the
// machine pausing this thread) is reported as given up, so the model is not told "no matches".
// V8's engine does not give up: it backtracks until the timeout stops the search.
const SLOW_LINE_MS = 50
const ENGINE_GIVES_UP = typeof Bun !== "undefined"

/** Whether the regex rejects the line: true, false, or "gave up" (see SLOW_LINE_MS). */
const test = (regex: RegExp, line: string): boolean | "gave up" => {
  if (!ENGINE_GIVES_UP) return regex.test(line)
  const start = performance.now()
  if (regex.test(line)) return true
  if (performance.now() - start < SLOW_LINE_MS) return false
  const again = performance.now()
  if (regex.test(line)) return true
  return performance.now() - again < SLOW_LINE_MS ? false : "gave up"
}

/** The exit code of a search that stopped itself at its deadline (GrepProcess reports a timeout). */
export const DEADLINE_EXIT = 124

// reins kills this process on interrupt or timeout, but a reins killed itself (SIGKILL, a crash)
// cannot. So the search runs in a worker thread, and this process's main thread looks at the clock
// and at its parent ten times a second: it exits past its deadline or once its parent is gone (it
// was re-parented), however long one line's regex takes (a catastrophic pattern can take minutes).
const WATCH_MS = 100
// O_NONBLOCK: a FIFO swapped in after the walk opens at once and is then refused by fstat.
const FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY

const search = (job: GrepJob, regex: RegExp, file: string) => {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, FLAGS)
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || stat.size > job.maxFileBytes) return undefined
    const bytes = Buffer.allocUnsafe(stat.size)
    let read = 0
    while (read < bytes.length) {
      const n = fs.readSync(fd, bytes, read, bytes.length - read, read)
      if (n === 0) break
      read += n
    }
    const content = bytes.subarray(0, read)
    if (content.subarray(0, 8192).includes(0)) return undefined
    const lines = content.toString("utf8").split(/\r?\n/)
    const found: Array<[number, string]> = []
    const gaveUp: Array<number> = []
    let count = 0
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const matched = test(regex, line)
      if (matched === "gave up") gaveUp.push(i + 1)
      if (matched !== true) continue
      count++
      if (found.length < job.limit) found.push([i + 1, line.length > job.maxLineLength ? `${line.slice(0, job.maxLineLength)}…` : line])
    }
    if (count === 0 && gaveUp.length === 0) return undefined
    return { path: file, mtime: stat.mtimeMs, count, lines: found, ...(gaveUp.length > 0 ? { gaveUp } : {}) }
  } catch {
    return { path: file, unreadable: true }
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The parent's pid now (Linux: from /proc/self/stat; elsewhere process.ppid). */
const parentPid = () => {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return process.ppid
  }
}

if (isMainThread) {
  // the parent names itself on the command line: one that died before this process even started
  // (SIGKILL right after the spawn) is noticed too, which reading the parent here would miss
  const parent = Number(process.argv.at(-1)) || parentPid()
  const job = (await Bun.stdin.json()) as GrepJob
  const deadline = job.deadlineMs !== undefined && job.deadlineMs > 0 ? Date.now() + job.deadlineMs : Number.POSITIVE_INFINITY
  const watch = setInterval(() => {
    if (Date.now() > deadline) process.exit(DEADLINE_EXIT)
    if (parentPid() !== parent) process.exit(1)
  }, WATCH_MS)
  const worker = new Worker(import.meta.path, { workerData: job })
  worker.on("message", async (out: string) => {
    clearInterval(watch)
    await Bun.write(Bun.stdout, out)
    process.exit(0)
  })
  worker.on("error", (error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(2)
  })
} else {
  const job = workerData as GrepJob
  const regex = new RegExp(job.pattern)
  const out: Array<string> = []
  for (const file of job.files) {
    const result = search(job, regex, file)
    if (result !== undefined) out.push(`${JSON.stringify(result)}\n`)
  }
  parentPort!.postMessage(out.join(""))
}

/** Importers take this module `with { type: "file" }`: its default is then this file's path. */
export default import.meta.path
