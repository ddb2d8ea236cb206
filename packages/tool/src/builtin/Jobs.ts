// Background jobs (bash with `background: true`): each command runs in a fiber of the runtime's FiberMap, in
// its own process group, its output kept capped in memory. A job owns its whole group: it has not ended until
// the group is empty (what its shell left running is killed when the shell exits). The runtime's scope owns the
// jobs: when it closes (reins exits, Ctrl+C) every job's fiber is interrupted, which kills its whole group and
// waits until it is gone. A sub-agent's jobs are its session's: listed with it, and running until they end,
// job_kill stops them, or the runtime closes (job ids are unique in the runtime, so a sub-agent's never names
// its parent's).
import { Cause, Clock, Context, Effect, Exit, Fiber, FiberMap, Layer, Option } from "effect"
import { ToolError } from "../Tool.ts"
import { JobOutput, type OutputPiece } from "./JobOutput.ts"
import { groupGone, groupRunning, killGroup } from "./ProcessGroup.ts"

/** How long a killed group may take to be gone before a job is called ended anyway (a process stuck in the kernel). */
const GROUP_GONE_MS = 5_000

/** Where a job stands. */
export type JobStatus =
  | { readonly state: "running" }
  | { readonly state: "exited"; readonly code: number | null; readonly signal: string | null }
  /** Stopped by job_kill (or reins): the signal that ended it. */
  | { readonly state: "killed"; readonly signal: string }
  /** Its process could not be started. */
  | { readonly state: "failed"; readonly message: string }

/** A job as the tools and the TUI see it. */
export interface JobView {
  readonly id: string
  readonly sessionID: string
  readonly command: string
  readonly description?: string
  readonly cwd: string
  /** When it started (ms since the epoch). */
  readonly started: number
  readonly status: JobStatus
  readonly outputBytes: number
  readonly outputLines: number
  /** Said when it ended (what the sandbox stopped, what it took away). */
  readonly note?: string
}

/** How a command ended (runCommand's outcome). */
export interface JobOutcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut?: boolean
}

/** What starting a job takes: the command, and how to run it into a sink (bash's runCommand, sandboxed as bash is). */
export interface JobStart {
  readonly sessionID: string
  readonly command: string
  readonly description?: string
  readonly cwd: string
  /** Runs the command to its end, its output into `sink`; `onStart` gets its process group's id. */
  readonly run: (sink: { write(chunk: Buffer): void }, onStart: (pgid: number) => void) => Effect.Effect<JobOutcome, ToolError>
  /** Once it ended, with how (undefined: it was killed or did not start) and its last output: a note for its final status. */
  readonly ended?: (outcome: JobOutcome | undefined, tail: string) => string | undefined
  /** While it runs, takes away what it left where git runs code (the sandbox's git guard); called again and again. */
  readonly settle?: () => void
}

/** Limits of the jobs of one session. */
export interface JobSettings {
  /** Jobs running at once per session. */
  readonly maxRunning: number
  /** Ended jobs kept (readable) per session; the oldest go first. */
  readonly maxKept: number
  /** Bytes of each job's output kept (its last ones). */
  readonly outputBytes: number
  /** How long job_kill waits after SIGTERM before SIGKILL. */
  readonly graceMs: number
  /** The most job_output waits for new output. */
  readonly maxWaitMs: number
}

export const defaultJobSettings: JobSettings = { maxRunning: 8, maxKept: 32, outputBytes: 1024 * 1024, graceMs: 2_000, maxWaitMs: 30_000 }

/** The background jobs of the sessions of this runtime. */
export interface JobsService {
  start(input: JobStart): Effect.Effect<JobView, ToolError>
  /** A job's output since the last read (`all`: all kept), after waiting up to `waitMs` for some while it runs and none is new. */
  read(
    sessionID: string,
    id: string,
    options?: { readonly waitMs?: number; readonly all?: boolean }
  ): Effect.Effect<{ readonly job: JobView; readonly piece: OutputPiece }, ToolError>
  /** Stops a job's whole process group: SIGTERM, then SIGKILL after the grace period; its final status. */
  kill(sessionID: string, id: string): Effect.Effect<JobView, ToolError>
  /** Stops every running job of a session. */
  killSession(sessionID: string): Effect.Effect<void>
  /** The jobs of a session, or of every session. */
  list(sessionID?: string): ReadonlyArray<JobView>
  /** Runs every running job's `settle` (before a command and at each job_output and job_kill). */
  settle(): void
  /** Calls `listener` with every job now and whenever one starts or ends (the TUI's list); returns the unwatch. */
  watch(listener: (jobs: ReadonlyArray<JobView>) => void): () => void
}

const unknown = (id: string) => new ToolError({ reason: "failed", message: `No background job ${id} in this session: bash with background: true starts one.` })

/** Without the runtime's job service (a bare tool registry): starting a job says so. */
const unavailable: JobsService = {
  start: () =>
    Effect.fail(new ToolError({ reason: "failed", message: "Background jobs are not available in this runtime: run the command without background." })),
  read: (_s, id) => Effect.fail(unknown(id)),
  kill: (_s, id) => Effect.fail(unknown(id)),
  killSession: () => Effect.void,
  list: () => [],
  settle: () => {},
  watch: (listener) => {
    listener([])
    return () => {}
  }
}

/** The runtime's background jobs; `layerJobs` provides them (the default has none). */
export const Jobs = Context.Reference<JobsService>("reins/tool/Jobs", { defaultValue: () => unavailable })

interface Job {
  readonly id: string
  readonly sessionID: string
  readonly command: string
  readonly description: string | undefined
  readonly cwd: string
  readonly started: number
  readonly output: JobOutput
  readonly waiters: Set<() => void>
  status: JobStatus
  note: string | undefined
  pgid: number | undefined
  killing: boolean
  /** Set by job_kill: until when the group's processes may end on SIGTERM before SIGKILL. */
  graceUntil: number | undefined
  /** Processes the shell left in the group when it exited on its own (killed then). */
  leftOver: boolean
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  readonly settle: (() => void) | undefined
}

const viewOf = (job: Job): JobView => ({
  id: job.id,
  sessionID: job.sessionID,
  command: job.command,
  ...(job.description !== undefined ? { description: job.description } : {}),
  cwd: job.cwd,
  started: job.started,
  status: job.status,
  outputBytes: job.output.totals.bytes,
  outputLines: job.output.totals.lines,
  ...(job.note !== undefined ? { note: job.note } : {})
})

const signalGroup = (pgid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // the group is gone already
  }
}

const messageOf = (defect: unknown) => (defect instanceof Error ? defect.message : String(defect))

/** A job's status from how its run ended: an error or a defect is `failed`, only an interrupt is `killed`. */
const statusOf = (job: Job, exit: Exit.Exit<JobOutcome, ToolError>): JobStatus => {
  if (Exit.isSuccess(exit)) {
    const { exitCode, signal } = exit.value
    return job.killing && signal !== null ? { state: "killed", signal } : { state: "exited", code: exitCode, signal }
  }
  const failed = Exit.findErrorOption(exit)
  if (Option.isSome(failed)) return { state: "failed", message: failed.value.message }
  if (Cause.hasInterruptsOnly(exit.cause)) return { state: "killed", signal: "SIGKILL" }
  return { state: "failed", message: messageOf(Cause.squash(exit.cause)) }
}

/** The job service, its jobs owned by the scope it is built in. */
export const makeJobs = (settings: JobSettings = defaultJobSettings) =>
  Effect.gen(function* () {
    const fibers = yield* FiberMap.make<string>()
    const sessions = new Map<string, Map<string, Job>>()
    // one counter for the runtime: a sub-agent's job-1 is never its parent's
    let next = 1
    const watchers = new Set<(jobs: ReadonlyArray<JobView>) => void>()
    const all = () => [...sessions.values()].flatMap((s) => [...s.values()])
    const changed = () => {
      const views = all().map(viewOf)
      for (const watcher of watchers) {
        try {
          watcher(views)
        } catch {
          // a watcher's failure is its own; the jobs go on
        }
      }
    }
    const wake = (job: Job) => {
      for (const waiter of [...job.waiters]) waiter()
    }
    // a safety net for an exit that skips the scope's finalizers (process.exit): no group outlives reins
    const onExit = () => {
      for (const job of all()) if (job.status.state === "running") killGroup(job.pgid)
    }
    process.on("exit", onExit)
    yield* Effect.addFinalizer(() => Effect.sync(() => process.off("exit", onExit)))

    const find = (sessionID: string, id: string) => {
      const job = sessions.get(sessionID)?.get(id)
      return job === undefined ? Effect.fail(unknown(id)) : Effect.succeed(job)
    }

    // Once the shell has ended, whatever is left of its group: under job_kill, the rest of the grace period for
    // SIGTERM to work, then SIGKILL to the group, and until it is empty.
    const clearGroup = (job: Job) =>
      Effect.suspend(() => {
        const pgid = job.pgid
        if (pgid === undefined) return Effect.void
        const grace = job.graceUntil === undefined ? 0 : job.graceUntil - Date.now()
        return Effect.promise(() => (grace > 0 ? groupGone(pgid, grace) : Promise.resolve())).pipe(
          Effect.andThen(
            Effect.sync(() => {
              if (!job.killing && groupRunning(pgid)) job.leftOver = true
              killGroup(pgid)
            })
          ),
          Effect.andThen(Effect.promise(() => groupGone(pgid, GROUP_GONE_MS)))
        )
      })

    // The status first (a throw below never leaves a job running), then the note, then the waiters and the watchers:
    // a waiter resumes its reader in this very call (an Effect callback's resume runs the fiber on), so whatever the
    // reader is to see is set before it is woken.
    const finish = (job: Job, exit: Exit.Exit<JobOutcome, ToolError>, ended: JobStart["ended"]) =>
      Effect.sync(() => {
        job.output.end()
        job.status = statusOf(job, exit)
        job.fiber = undefined
        const notes: Array<string> = []
        try {
          const note = ended?.(Exit.isSuccess(exit) && !job.killing ? exit.value : undefined, job.output.tail(2048))
          if (note !== undefined) notes.push(note)
        } catch (error) {
          notes.push(`(reins could not finish after the job: ${messageOf(error)})`)
        }
        if (job.leftOver) notes.push("(processes its shell left running in its process group were killed when the shell exited)")
        job.note = notes.length > 0 ? notes.join("\n") : undefined
        wake(job)
        changed()
      })

    const start = Effect.fn("Jobs.start")(function* (input: JobStart) {
      const session = sessions.get(input.sessionID) ?? new Map<string, Job>()
      sessions.set(input.sessionID, session)
      const running = [...session.values()].filter((j) => j.status.state === "running")
      if (running.length >= settings.maxRunning) {
        return yield* new ToolError({
          reason: "failed",
          message:
            `This session already runs ${running.length} background jobs (${running.map((j) => j.id).join(", ")}), the most at once: ` +
            "stop one with job_kill or wait for one to end (job_output), then start this one. Nothing was started."
        })
      }
      // ended jobs beyond what is kept go, oldest first
      const ended = [...session.values()].filter((j) => j.status.state !== "running")
      for (const old of ended.slice(0, Math.max(0, ended.length - settings.maxKept + 1))) session.delete(old.id)
      const id = `job-${next++}`
      const waiters = new Set<() => void>()
      const job: Job = {
        id,
        sessionID: input.sessionID,
        command: input.command,
        description: input.description,
        cwd: input.cwd,
        started: yield* Clock.currentTimeMillis,
        output: new JobOutput(settings.outputBytes, () => {
          for (const waiter of [...waiters]) waiter()
        }),
        waiters,
        status: { state: "running" },
        note: undefined,
        pgid: undefined,
        killing: false,
        graceUntil: undefined,
        leftOver: false,
        fiber: undefined,
        settle: input.settle
      }
      session.set(id, job)
      const run = input
        .run(job.output, (pgid) => {
          job.pgid = pgid
        })
        .pipe(Effect.ensuring(clearGroup(job)))
      job.fiber = yield* FiberMap.run(
        fibers,
        `${input.sessionID}\u0000${id}`,
        Effect.onExit(run, (exit) => finish(job, exit, input.ended))
      )
      changed()
      return viewOf(job)
    })

    const read = Effect.fn("Jobs.read")(function* (sessionID: string, id: string, options: { readonly waitMs?: number; readonly all?: boolean } = {}) {
      const job = yield* find(sessionID, id)
      const waitMs = Math.min(options.waitMs ?? 0, settings.maxWaitMs)
      if (waitMs > 0 && options.all !== true && job.status.state === "running" && !job.output.unread) {
        // until output comes or the job ends, at most waitMs
        yield* Effect.callback<void>((resume) => {
          const waiter = () => {
            job.waiters.delete(waiter)
            resume(Effect.void)
          }
          job.waiters.add(waiter)
          return Effect.sync(() => job.waiters.delete(waiter))
        }).pipe(Effect.timeoutOption(waitMs))
      }
      return { job: viewOf(job), piece: job.output.read(options.all === true) }
    })

    // SIGTERM to the group, up to the grace period for the job to end, then (even if the caller is interrupted
    // meanwhile) SIGKILL to the group and back once it is gone (runCommand's interruption, then clearGroup).
    const stop = (job: Job) =>
      Effect.suspend(() => {
        const fiber = job.fiber
        if (job.status.state !== "running" || fiber === undefined) return Effect.void
        job.killing = true
        const pgid = job.pgid
        if (pgid === undefined) return Fiber.interrupt(fiber)
        job.graceUntil = Date.now() + settings.graceMs
        signalGroup(pgid, "SIGTERM")
        return Fiber.await(fiber).pipe(Effect.timeoutOption(settings.graceMs), Effect.ensuring(Fiber.interrupt(fiber)))
      }).pipe(Effect.asVoid)

    const kill = Effect.fn("Jobs.kill")(function* (sessionID: string, id: string) {
      const job = yield* find(sessionID, id)
      yield* stop(job)
      return viewOf(job)
    })

    const killSession = (sessionID: string) => Effect.forEach([...(sessions.get(sessionID)?.values() ?? [])], stop, { concurrency: "unbounded", discard: true })

    const settle = () => {
      for (const job of all()) {
        if (job.status.state !== "running") continue
        try {
          job.settle?.()
        } catch {
          // tried again at the next call and when the job ends
        }
      }
    }

    return {
      start,
      read,
      kill,
      killSession,
      settle,
      list: (sessionID?: string) => (sessionID === undefined ? all() : [...(sessions.get(sessionID)?.values() ?? [])]).map(viewOf),
      watch: (listener: (jobs: ReadonlyArray<JobView>) => void) => {
        watchers.add(listener)
        listener(all().map(viewOf))
        return () => void watchers.delete(listener)
      }
    } satisfies JobsService
  })

/** The runtime's job service: jobs live as long as the layer's scope, and are killed when it closes. */
export const layerJobs = (settings: JobSettings = defaultJobSettings) => Layer.effect(Jobs, makeJobs(settings))
