import { Deferred, Effect, Option, Schema } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Duplex } from "node:stream"
import { limitsFor, MAX_BYTES, MAX_LINES, Truncate } from "@reins/truncate"
import { scanBash } from "@reins/permission"
import { HomeDir } from "@reins/domain"
import { type Channel, HostedChild, Sandbox } from "@reins/sandbox"
import { define, type PermissionNeed, render, ToolError } from "../Tool.ts"
import { escalationNeed, rememberGrant, takeGrant, wantOf } from "./SandboxNeeds.ts"
import { groupEnded, groupGone, groupStarted, identify, killGroup, type GroupRecord } from "./ProcessGroup.ts"
import { Jobs } from "./Jobs.ts"
import template from "./bash.txt" with { type: "text" }

export const DEFAULT_TIMEOUT = 120_000
export const MAX_TIMEOUT = 600_000
/** How long stopping a command waits, after killing its group, for the shell to be collected and its output pipes to close. */
export const KILL_WAIT_MS = 3_000
/** Said with a background command's permission questions. */
export const BACKGROUND_NOTE = "runs in the background with no timeout: allowed for as long as the job runs, until it ends or is stopped"
/** How often a running command reports progress. */
export const PROGRESS_INTERVAL = "1 second"

const shell = fs.existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh"

const Parameters = Schema.Struct({
  command: Schema.String.annotate({ description: "The command to run" }),
  timeout: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: "Timeout in milliseconds" })),
  workdir: Schema.optionalKey(Schema.String.annotate({ description: "Directory to run the command in" })),
  description: Schema.optionalKey(Schema.String.annotate({ description: "What the command does, in 5-10 words" })),
  network: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "true when the command needs the internet and the sandbox blocked it (ssh, a host the command computes): the user is asked for network access for this command. Commands that name a host (curl URL, git remote, npm install) are asked about without it"
    })
  ),
  background: Schema.optionalKey(Schema.Boolean.annotate({ description: "Run in the background; returns a job id (see job_output)" }))
})

interface Outcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
}

/** Where a command's output goes as it comes (a spill sink, a background job's output). */
export interface OutputSink {
  write(chunk: Buffer): void
}

/** The longest a timer can wait (setTimeout fires at once past it). */
const MAX_TIMER_MS = 2 ** 31 - 1

// A command is the shell's first argument, evaluated by a `-c` script with stderr joined to stdout (`exec 2>&1`) and
// /dev/null as its stdin: the shell has all of it when it starts, so its process group is recorded at once. It is
// eval'd, not the `-c` text itself: bash execs the last command of a `-c` text in its own place, so a command killed
// by a signal would end as that signal instead of exit 128+n with bash's line saying why.
// One argv string is capped at 128 KiB (MAX_ARG_STRLEN, E2BIG), and the sandbox's network bridge passes the arguments
// on JSON-encoded: a command longer than ARGV_MAX bytes so encoded comes on stdin instead, read whole with cat (found
// by `command -p` whatever PATH is; bash's own `read` takes a byte per syscall), then evaluated the same way.
// The helper variable is unset first: in bash on a line of its own, so the command is line 2, as with `-c` before.
export const ARGV_MAX = 64 * 1024
/** Whether `command` is passed as an argument (else on stdin): JSON-encoded (at most 6 bytes a UTF-16 unit), within ARGV_MAX. */
export const onArgv = (command: string) => command.length * 6 + 2 <= ARGV_MAX || Buffer.byteLength(JSON.stringify(command)) <= ARGV_MAX
const evaluate = (from: string) =>
  shell === "/bin/bash"
    ? `exec 2>&1; __reins_command=${from}; eval "unset __reins_command"$'\\n'"$__reins_command" </dev/null`
    : `exec 2>&1; __reins_command=${from}; eval "unset __reins_command; $__reins_command" </dev/null`

/** How a command's process is started: the program, its arguments and its environment. */
export interface Spawn {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  /** Files opened read-only and handed over as fd 3, 4, … (the sandbox's seccomp filter). */
  readonly readFds?: ReadonlyArray<string>
  /** A socketpair handed over as the fd after them, this end given to `attach` (the sandbox's network bridge). */
  readonly channel?: Channel
  /** What the shell reads on stdin (a command too long to be its argument); without it stdin is /dev/null. */
  readonly input?: string
  /** Spawns it in the session's long-lived sandbox instead (the Sandbox's `hosted`). */
  readonly hosted?: { spawn(input?: string): HostedChild | undefined }
}

/** Spawns `launch` detached with piped stdio, its `readFds` as fd 3, 4, … (closed here once the child has them), then its channel. */
export const spawnLaunch = (launch: Spawn, cwd: string, stdin: "pipe" | "ignore") => {
  const fds = (launch.readFds ?? []).map((file) => fs.openSync(file, "r"))
  try {
    // stdout and stderr are pipes; stdin is one when asked for (the hooks' is /dev/null)
    const child = spawn(launch.file, [...launch.args], {
      cwd,
      detached: true,
      stdio: [stdin, "pipe", "pipe", ...fds, ...(launch.channel ? (["pipe"] as const) : [])],
      env: launch.env
    }) as ChildProcessWithoutNullStreams
    const channel = child.stdio[3 + fds.length]
    if (launch.channel && channel) launch.channel.attach(channel as Duplex)
    return child
  } finally {
    for (const fd of fds) fs.closeSync(fd)
  }
}

/** The shell evaluating `command` (its argument, or read from stdin when long), in the user's environment (the sandbox wraps this). */
export const shellSpawn = (command: string): Spawn => {
  // --norc: bash run with a socket as stdin (Bun's pipes, a long command) and SHLVL < 2 would read ~/.bashrc as if under sshd
  const options = shell === "/bin/bash" ? ["--norc", "--noprofile"] : []
  const env = { ...process.env, TERM: "dumb", PAGER: "cat", GIT_PAGER: "cat" }
  return onArgv(command)
    ? { file: shell, args: [...options, "-c", evaluate("$1; shift"), shell, command], env }
    : { file: shell, args: [...options, "-c", evaluate("$(command -p cat)")], env, input: command }
}

/** What a command's runner uses of its process: a child process reins spawned, or one the sandbox's host did (HostedChild). */
interface CommandChild {
  readonly pid?: number | undefined
  readonly stdout: CommandOutput
  readonly stderr: CommandOutput
  on(event: "error", listener: (error: Error) => void): unknown
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
  once(event: "spawn", listener: () => void): unknown
}
interface CommandOutput {
  on(event: "data", listener: (chunk: Buffer) => void): unknown
  off(event: "data", listener: (chunk: Buffer) => void): unknown
  resume(): unknown
}

/**
 * Runs `command` as a real child process in its own process group, streaming its output into
 * `sink` as it comes. stderr is joined to stdout inside the shell (`exec 2>&1`), so the two
 * interleave in the order the command wrote them. Interrupting the effect (Ctrl+C, a
 * cancelled step) kills the group at once, then waits until the shell has been collected and
 * every process holding its output has ended (at most KILL_WAIT_MS: a process that left the
 * group with the pipe open is not waited for longer), so whatever stops a command returns only
 * once it is gone, not merely signalled; the timeout kills the group too. `onStart` gets the
 * group's id. Without `timeoutMs` (a background job) the command runs until it ends or is stopped.
 */
export const runCommand = (
  command: string,
  cwd: string,
  timeoutMs: number | undefined,
  sink: OutputSink,
  onStart?: (pid: number) => void,
  launch: Spawn = shellSpawn(command)
) =>
  Effect.callback<Outcome, ToolError>((resume) => {
    let timedOut = false
    const input = launch.input
    let child: CommandChild
    let proc: ChildProcessWithoutNullStreams | undefined
    try {
      // the host, unless it took another command since the launch was made: then a bubblewrap of its own
      child = launch.hosted?.spawn(input) ?? (proc = spawnLaunch(launch, cwd, input === undefined ? "ignore" : "pipe"))
    } catch (error) {
      // refused at once (E2BIG, EAGAIN): a failed call, not a crashed tool; most failures come as 'error' below
      resume(
        Effect.fail(new ToolError({ reason: "failed", message: `Could not start ${launch.file}: ${error instanceof Error ? error.message : String(error)}` }))
      )
      return
    }
    const kill = () => (child instanceof HostedChild ? child.killGroup() : killGroup(child.pid))
    const hosted = proc === undefined
    let pgid = hosted ? undefined : child.pid
    if (pgid !== undefined) groupStarted(pgid)
    // The group is told once the shell has the whole command: at once when it is an argument (the spawn returns
    // after the exec); from stdin, when the pipe closed after the write (the shell reads to its end), or failed.
    // 'finish' comes a few ms before the close: a reins frozen in between had recorded a command whose shell still
    // waited for the end of its script. A shell that dies before reading all of it closes the pipe (EPIPE): its
    // exit says why. A hosted command's group is told when the host says so (it writes the input itself), unless it
    // ended before reins looked (its pid undefined: nothing is left to stop).
    let told = false
    const started = () => {
      if (told || child.pid === undefined) return
      told = true
      if (hosted) {
        pgid = child.pid
        groupStarted(pgid)
      }
      onStart?.(child.pid)
    }
    if (proc === undefined) child.once("spawn", started)
    else if (input === undefined) started()
    else {
      proc.stdin.on("error", started)
      proc.stdin.once("close", started)
      proc.stdin.end(input)
    }
    const write = (b: Buffer) => sink.write(b)
    child.stdout.on("data", write)
    child.stderr.on("data", write)
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => {
              timedOut = true
              kill()
            },
            Math.min(timeoutMs, MAX_TIMER_MS)
          )
    child.on("error", (error) => {
      clearTimeout(timer)
      if (pgid !== undefined) groupEnded(pgid)
      resume(Effect.fail(new ToolError({ reason: "failed", message: `Could not start ${launch.file}: ${error.message}` })))
    })
    // closed: the shell exited and was collected, and every process holding its output has ended
    const closed = Promise.withResolvers<void>()
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      if (pgid !== undefined) groupEnded(pgid)
      closed.resolve()
      resume(Effect.succeed({ exitCode: code, signal, timedOut }))
    })
    return Effect.suspend(() => {
      clearTimeout(timer)
      kill()
      child.stdout.off("data", write)
      child.stderr.off("data", write)
      // what the dying command still writes is read and dropped, so its pipes reach their end
      child.stdout.resume()
      child.stderr.resume()
      // its output ended; then until no process of the group is still exiting (not on the Effect clock: a test's TestClock does not move it)
      return Effect.promise(() => closed.promise).pipe(
        Effect.timeoutOption(KILL_WAIT_MS),
        Effect.andThen(Effect.promise(() => groupGone(child.pid, KILL_WAIT_MS))),
        Effect.asVoid
      )
    })
  })

/** What the user granted this call beyond the sandbox, as `wrap`'s option. */
const grantOf = (ctx: { readonly messageID: string; readonly callID: string }, command: string) => {
  const grant = takeGrant(ctx, command)
  return grant === undefined ? {} : { grant }
}

/**
 * How a command is started: inside the OS sandbox when there is one (the runtime's Sandbox: the project writable,
 * secrets hidden, no network), with what the user granted this call; `settleGit` takes away what the command made
 * in git's code-running places (a new .git/commondir, hooks/) once it is over.
 */
const launchOf = (command: string, cwd: string, ctx: { readonly messageID: string; readonly callID: string }) =>
  Effect.gen(function* () {
    const plain = shellSpawn(command)
    const sandbox = yield* Effect.serviceOption(Sandbox)
    const launch = Option.isSome(sandbox)
      ? {
          ...(yield* sandbox.value
            .wrap(plain.file, plain.args, { cwd, env: plain.env, ...grantOf(ctx, command) })
            .pipe(Effect.mapError((e) => new ToolError({ reason: "failed", message: e.message })))),
          // a long command comes on stdin inside the sandbox too
          ...(plain.input !== undefined ? { input: plain.input } : {})
        }
      : { ...plain, sandboxed: false }
    const settleGit = launch.sandboxed && Option.isSome(sandbox) ? sandbox.value.watchGit() : undefined
    return { launch, sandbox, settleGit }
  })

/**
 * `background: true`: the command, checked and sandboxed as any other, starts as a job of the session (Jobs.ts) and
 * the call returns at once with its id. It has no timeout unless one is given.
 */
const startJob = (
  args: { readonly command: string; readonly description?: string; readonly timeout?: number },
  ctx: { readonly sessionID: string; readonly messageID: string; readonly callID: string },
  cwd: string
) =>
  Effect.gen(function* () {
    const jobs = yield* Jobs
    jobs.settle()
    const { launch, sandbox, settleGit } = yield* launchOf(args.command, cwd, ctx)
    // the git guard settles while the job runs (before each command, at each job_output and job_kill), and at its end;
    // what it took away meanwhile is said when the job ends
    const undoneWhileRunning = new Set<string>()
    const settle = () => {
      const undone = settleGit?.()
      if (undone !== undefined) undoneWhileRunning.add(undone)
    }
    const job = yield* jobs
      .start({
        sessionID: ctx.sessionID,
        command: args.command,
        ...(args.description !== undefined ? { description: args.description } : {}),
        cwd,
        // in a sandbox of its own, not the session's long-lived one: what the job leaves behind lives as long as the job
        run: (sink, onStart) => runCommand(args.command, cwd, args.timeout, sink, onStart, { ...launch, hosted: undefined }),
        ...(settleGit !== undefined ? { settle } : {}),
        ended: (outcome, tail) => {
          const notes: Array<string> = []
          settle()
          if (outcome !== undefined && outcome.exitCode !== 0 && launch.sandboxed && Option.isSome(sandbox)) {
            const blocked = sandbox.value.explain(tail, launch)
            if (blocked !== undefined) notes.push(blocked)
          }
          notes.push(...undoneWhileRunning)
          if (outcome?.timedOut === true) notes.push(`It timed out after ${args.timeout} ms and was killed.`)
          return notes.length > 0 ? notes.join("\n") : undefined
        }
      })
      .pipe(Effect.tapError(() => Effect.sync(() => settleGit?.())))
    return {
      title: args.description ?? args.command,
      output:
        `Started background job ${job.id} in ${cwd}. It runs on across turns until it ends, job_kill stops it, or the session ends; ` +
        `read its output with job_output (id "${job.id}").`,
      metadata: { background: true, jobID: job.id, sandboxed: launch.sandboxed }
    }
  })

/** The `bash` tool: a command, a timeout, a working directory; the exit code is always reported. */
export const bash = define("bash", {
  description: render(template, {
    shell,
    platform: process.platform,
    defaultTimeout: DEFAULT_TIMEOUT,
    maxTimeout: MAX_TIMEOUT,
    maxLines: MAX_LINES,
    maxBytes: MAX_BYTES
  }),
  parameters: Parameters,
  truncate: "tail",
  // T18: every command in the text is its own request, found by the tree-sitter scan
  // and what the command needs beyond the OS sandbox (network, writes outside) is asked as `sandbox`
  permissions: (args, ctx) =>
    Effect.gen(function* () {
      const home = yield* HomeDir
      const requests = yield* scanBash(args.command, { cwd: args.workdir ? path.resolve(ctx.cwd, args.workdir) : ctx.cwd, worktree: ctx.cwd, home })
      const needs: Array<PermissionNeed> = requests.map((request) => ({ ...request, command: args.command }))
      const sandbox = yield* Effect.serviceOption(Sandbox)
      const escalation = Option.isSome(sandbox) ? sandbox.value.escalation(wantOf(requests, args.network)) : undefined
      if (Option.isSome(sandbox)) rememberGrant(ctx, args.command, escalation)
      const all = escalation === undefined ? needs : [...needs, escalationNeed(escalation, args.command)]
      // a person answering knows that what they allow lasts as long as the job runs
      return args.background === true
        ? all.map((need) => ({ ...need, title: need.title !== undefined ? `${need.title} (${BACKGROUND_NOTE})` : BACKGROUND_NOTE }))
        : all
    }),
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const cwd = args.workdir ? path.resolve(ctx.cwd, args.workdir) : ctx.cwd
      if (!fs.existsSync(cwd)) {
        return yield* new ToolError({ reason: "failed", message: `The workdir ${cwd} does not exist. Use an existing directory.` })
      }
      // A command cannot hold a NUL byte: an argument cannot carry one, and the shell reading a long one from stdin
      // drops it and joins what is around it (`r\0m` ran rm, which the scan judged as `r\0m`); so a command with one
      // is refused before it runs.
      if (args.command.includes("\u0000")) {
        return yield* new ToolError({
          reason: "failed",
          message: "The command contains a NUL byte (\\0), which a shell command cannot hold; nothing was run. Remove it (to produce one, write printf '\\0')."
        })
      }
      if (args.background === true) return yield* startJob(args, ctx, cwd)
      const timeout = Math.min(args.timeout ?? DEFAULT_TIMEOUT, MAX_TIMEOUT)
      const truncate = yield* Truncate
      const limits = limitsFor(truncate.settings, "bash")
      const sink = truncate.sink(ctx.sessionID, ctx.callID, {
        memoryBytes: Math.max(1024 * 1024, 4 * limits.maxBytes),
        keepBytes: Math.max(128 * 1024, 2 * limits.maxBytes)
      })
      // progress: at once the process group (so a later reins can stop it if this one is killed), stored without an
      // event (a viewer has no use for it: a short command would cost every follower a frame), then every second the
      // bytes so far and the last lines (also what an interrupt keeps)
      let group: GroupRecord | undefined
      const report = (quiet: boolean) =>
        Effect.suspend(() => {
          const p = sink.peek()
          return (
            ctx.progress?.(
              {
                outputBytes: p.totalBytes,
                outputLines: p.totalLines,
                tail: p.tail,
                ...(p.file ? { outputPath: p.file } : {}),
                ...(group ? { process: group } : {})
              },
              { quiet }
            ) ?? Effect.void
          )
        })
      // what running jobs left where git runs code is taken away before this command looks at those places
      const jobs = yield* Jobs
      jobs.settle()
      const { launch, sandbox, settleGit } = yield* launchOf(args.command, cwd, ctx)
      const started = yield* Deferred.make<number>()
      const reporting = Deferred.await(started).pipe(
        Effect.flatMap(identify),
        Effect.flatMap((record) => {
          group = record
          return record ? report(true) : Effect.void
        }),
        Effect.andThen(Effect.forever(Effect.sleep(PROGRESS_INTERVAL).pipe(Effect.andThen(report(false)))))
      )
      const outcome = yield* runCommand(args.command, cwd, timeout, sink, (pid) => Deferred.doneUnsafe(started, Effect.succeed(pid)), launch).pipe(
        Effect.raceFirst(reporting),
        Effect.onInterrupt(() =>
          report(false)
            .pipe(Effect.andThen(Effect.sync(() => sink.close())))
            .pipe(Effect.andThen(Effect.sync(() => settleGit?.())))
        )
      )
      const undone = settleGit?.()
      // what the sandbox stopped, told from the output's last lines (a failed command only)
      const blocked = launch.sandboxed && outcome.exitCode !== 0 && Option.isSome(sandbox) ? sandbox.value.explain(sink.peek().tail, launch) : undefined
      const capture = sink.close()
      const notes: Array<string> = []
      if (blocked !== undefined) notes.push(blocked)
      if (undone !== undefined) notes.push(undone)
      if (outcome.timedOut) notes.push(`The command timed out after ${timeout} ms and was killed.`)
      const exit = outcome.exitCode ?? (outcome.signal ? `killed by ${outcome.signal}` : "unknown")
      notes.push(`(exit code ${exit})`)
      return {
        title: args.description ?? args.command,
        output: "",
        capture,
        trailer: notes.join("\n"),
        command: args.command,
        exitCode: outcome.exitCode,
        metadata: {
          exitCode: outcome.exitCode,
          timedOut: outcome.timedOut,
          outputBytes: capture.totalBytes,
          description: args.description,
          sandboxed: launch.sandboxed,
          ...(blocked !== undefined ? { sandboxBlocked: true } : {}),
          ...(undone !== undefined ? { sandboxUndid: true } : {})
        }
      }
    })
})
