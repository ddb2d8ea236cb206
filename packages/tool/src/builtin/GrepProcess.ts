import { helperCommand } from "@reins/sandbox"
import { Context, Duration, Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ToolError } from "../Tool.ts"
import { DEFAULT_TIMEOUT } from "./bash.ts"
// `type: "file"`: the bundle copies the script next to it; from source this is its absolute path. The
// standalone executable runs its compiled-in GrepChild entry instead (Helper.ts in @reins/sandbox).
import childScript from "./GrepChild.ts" with { type: "file" }

/** GrepChild's exit code when it stopped at its own deadline (kept in step with DEADLINE_EXIT there). */
const DEADLINE_EXIT = 124
/** How much longer than the timeout the search process gives itself: its own deadline is a backstop for a reins that died. */
const DEADLINE_GRACE_MS = 1_000

/** How long one grep search may run before it is killed (ms); bash's default timeout. */
export const GrepTimeout = Context.Reference<number>("reins/tool/GrepTimeout", { defaultValue: () => DEFAULT_TIMEOUT })

/** The matches of one file, as the search process reports them. */
export interface FileMatches {
  readonly path: string
  readonly mtime: number
  readonly count: number
  readonly lines: ReadonlyArray<readonly [number, string]>
  /** Lines the regex engine stopped on without deciding (it gives up after a fixed amount of backtracking). */
  readonly gaveUp?: ReadonlyArray<number>
}

export interface GrepOutcome {
  readonly matches: ReadonlyArray<FileMatches>
  /** Files that could not be opened or read. */
  readonly unreadable: number
}

const locate = (file: string) => (path.isAbsolute(file) ? file : fileURLToPath(new URL(file, import.meta.url)))

const killChild = (pid: number | undefined) => {
  if (pid === undefined) return
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // already gone
  }
}

const timeoutError = (pattern: string, timeoutMs: number) =>
  new ToolError({
    reason: "timeout",
    message:
      `The search for the pattern ${JSON.stringify(pattern)} did not finish within ${timeoutMs / 1000} s and was stopped. ` +
      "The pattern probably backtracks catastrophically (nested or overlapping repetition such as (a+)+ or (.*)*). " +
      "Use a simpler pattern: a literal substring, or one without nested repetition; or narrow the search with path or include."
  })

const parse = (stdout: string): GrepOutcome => {
  const matches: Array<FileMatches> = []
  let unreadable = 0
  for (const line of stdout.split("\n")) {
    if (line === "") continue
    const record = JSON.parse(line) as FileMatches | { readonly unreadable: true }
    if ("unreadable" in record) unreadable++
    else matches.push(record)
  }
  return { matches, unreadable }
}

interface GrepJob {
  readonly pattern: string
  readonly files: ReadonlyArray<string>
  readonly limit: number
  readonly maxLineLength: number
  readonly maxFileBytes: number
}

/** One run of the search process; interrupting it kills the process at once. */
const searchProcess = (job: GrepJob, timeoutMs: number) =>
  Effect.callback<GrepOutcome, ToolError>((resume) => {
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    // nothing from this process's environment is needed, and none of it should steer the child
    const [program, ...args] = helperCommand("GrepChild", [locate(childScript)], [String(process.pid)])
    const child = spawn(program!, args, { stdio: ["pipe", "pipe", "pipe"], env: {} })
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => err.push(b))
    // the child may die (killed, crashed) before it has read everything
    child.stdin.on("error", () => undefined)
    // the child stops itself a little after the timeout, if this process died without killing it
    child.stdin.end(JSON.stringify({ ...job, deadlineMs: timeoutMs + DEADLINE_GRACE_MS }))
    child.on("error", (error) => {
      resume(Effect.fail(new ToolError({ reason: "failed", message: `Could not start the search process: ${error.message}` })))
    })
    child.on("close", (code, signal) => {
      if (code === DEADLINE_EXIT) return resume(Effect.fail(timeoutError(job.pattern, timeoutMs)))
      if (code !== 0) {
        const detail = Buffer.concat(err).toString("utf8").trim().split("\n").slice(-3).join(" ")
        return resume(
          Effect.fail(
            new ToolError({ reason: "failed", message: `The search process failed (${signal ?? `exit code ${code}`})${detail ? `: ${detail}` : ""}.` })
          )
        )
      }
      resume(
        Effect.try({
          try: () => parse(Buffer.concat(out).toString("utf8")),
          catch: () => new ToolError({ reason: "failed", message: "The search process answered in a form grep cannot read." })
        })
      )
    })
    return Effect.sync(() => killChild(child.pid))
  })

/**
 * Runs the regex over `files` in a child process (GrepChild.ts), so the event loop stays free and
 * a catastrophic pattern can be stopped: interrupting the effect kills the child at once, and so
 * does the timeout (on the Effect clock), which fails with an error naming the pattern.
 */
export const grepFiles = (job: GrepJob) =>
  Effect.gen(function* () {
    const timeoutMs = yield* GrepTimeout
    return yield* searchProcess(job, timeoutMs).pipe(
      Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.fail(timeoutError(job.pattern, timeoutMs)) })
    )
  })
