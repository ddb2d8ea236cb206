// `!command` in the prompt: the user's own command, run in the project with their shell (no permission question:
// they typed it), its output shown and carried to the model with the next message they send.
import { spawn } from "node:child_process"

/** How long a `!command` may run before it is killed. */
export const SHELL_TIMEOUT_MS = 120_000
/** Output kept for the model: its start and its end, this many bytes each. */
const KEEP_BYTES = 16 * 1024
/** Lines of the output shown on screen (the end of it). */
export const SHOWN_LINES = 20

/** A finished `!command`: its output (start and end when long), how it ended. */
export interface ShellRun {
  readonly command: string
  readonly output: string
  /** The exit code; null when it was killed (`signal`). */
  readonly code: number | null
  readonly signal?: string
  /** Bytes left out of the middle of a long output. */
  readonly omitted: number
  readonly timedOut: boolean
}

/** The `!command` a prompt line is, or undefined (`!` alone, or not starting with `!`). */
export const shellCommand = (text: string): string | undefined => {
  if (!text.startsWith("!")) return undefined
  const command = text.slice(1).trim()
  return command === "" ? undefined : command
}

/**
 * Runs `command` with `sh -c` in `cwd`, in its own process group (killed whole on `stop` or the timeout), stdin
 * closed, stdout and stderr together; a long output keeps its first and last 16 KiB.
 */
export const runShell = (command: string, cwd: string, env: Record<string, string | undefined>) => {
  const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  let head = Buffer.alloc(0)
  let tail = Buffer.alloc(0)
  let total = 0
  const take = (chunk: Buffer) => {
    total += chunk.length
    if (head.length < KEEP_BYTES) {
      const room = KEEP_BYTES - head.length
      head = Buffer.concat([head, chunk.subarray(0, room)])
      chunk = chunk.subarray(room)
    }
    if (chunk.length > 0) tail = Buffer.concat([tail, chunk]).subarray(-KEEP_BYTES)
  }
  child.stdout.on("data", take)
  child.stderr.on("data", take)
  let timedOut = false
  const kill = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  const timer = setTimeout(() => {
    timedOut = true
    kill()
  }, SHELL_TIMEOUT_MS)
  const done = new Promise<ShellRun>((resolve) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null, failure?: Error) => {
      clearTimeout(timer)
      const omitted = Math.max(0, total - head.length - tail.length)
      const output =
        failure !== undefined
          ? `${failure.message}\n`
          : head.toString("utf8") + (omitted > 0 ? `\n… ${omitted} bytes left out …\n` : "") + tail.toString("utf8")
      resolve({ command, output, code: failure !== undefined ? 127 : code, ...(signal ? { signal } : {}), omitted, timedOut })
    }
    child.on("error", (e) => finish(null, null, e))
    child.on("close", (code, signal) => finish(code, signal))
  })
  return { done, stop: kill }
}

/** How the run ended, in a few words. */
export const ending = (run: ShellRun) =>
  run.timedOut ? `killed after ${SHELL_TIMEOUT_MS / 1000} s` : run.signal !== undefined ? `stopped (${run.signal})` : `exit ${run.code}`

/** The lines shown on screen: the command, the end of its output, how it ended. */
export const shownRun = (run: ShellRun) => {
  const lines = run.output.replace(/\n$/, "").split("\n")
  const cut = lines.length > SHOWN_LINES ? lines.length - SHOWN_LINES : 0
  return [
    `$ ${run.command}`,
    ...(cut > 0 ? [`… ${cut} lines above`] : []),
    ...lines.slice(cut),
    `(${ending(run)}; the output goes to the model with your next message)`
  ].join("\n")
}

/** The runs as the model reads them before the message they go with: each command, how it ended, its output fenced. */
export const runsNote = (runs: ReadonlyArray<ShellRun>) =>
  runs
    .map((run) => {
      // a fence longer than any run of backticks in the output
      const longest = Math.max(2, ...[...run.output.matchAll(/`+/g)].map((m) => m[0].length))
      const fence = "`".repeat(longest + 1)
      return `I ran \`${run.command}\` in the project (${ending(run)}):\n${fence}\n${run.output.replace(/\n$/, "")}\n${fence}`
    })
    .join("\n\n")
