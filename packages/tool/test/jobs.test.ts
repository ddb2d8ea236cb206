// Background jobs (issue 30, item 4): bash with background: true returns a job id at once; job_output reads what
// is new, job_kill stops the whole process group; the runtime's scope closing kills every job. Real processes;
// the tests wait for output and exits, never for a time.
import { afterAll, describe, expect, test } from "bun:test"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Bus, DataDir, HomeDir, Ids } from "@reins/domain"
import { type Answer, defaultRules, type Pending, Permission, PermissionSettings, type Rule } from "@reins/permission"
import { Reducers, builtinReducers } from "@reins/reduce"
import { probeBwrap, Sandbox } from "@reins/sandbox"
import { waitFor } from "@reins/testkit"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import { ARGV_MAX, BACKGROUND_NOTE, bash, onArgv, runCommand } from "../src/builtin/bash.ts"
import { jobKill, jobOutput } from "../src/builtin/job.ts"
import { defaultJobSettings, type JobSettings, Jobs, layerJobs, makeJobs } from "../src/builtin/Jobs.ts"
import { ToolRegistry } from "../src/Registry.ts"
import type { Info } from "../src/Tool.ts"
import { execSync } from "node:child_process"
import { tempDir } from "./helpers.ts"

const allowAll: ReadonlyArray<Rule> = [...defaultRules, { permission: "*", pattern: "*", action: "allow" }]

/** Whether a process runs (a zombie has ended). */
const alive = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return !/^\S+ \(.*\) [ZX] /.test(stat)
  } catch {
    return false
  }
}

interface Harness {
  readonly cwd: string
  readonly context: Context.Context<any>
  call(tool: Effect.Effect<Info, never, any>, args: unknown, sessionID?: string): Promise<any>
  close(): Promise<void>
  readonly jobs: Context.Service.Shape<typeof Jobs>
}

const opened: Array<Harness> = []
afterAll(async () => {
  for (const h of opened) await h.close()
})

/** The tools with real Permission, Truncate and Jobs services, in a scope the test closes (the runtime's). */
const harness = async (
  options: { rules?: ReadonlyArray<Rule>; jobs?: Partial<JobSettings>; sandbox?: boolean; prompter?: boolean; asked?: Array<Pending> } = {}
): Promise<Harness> => {
  const cwd = tempDir()
  const dataDir = tempDir("reins-data-")
  const settings = {
    rules: options.rules ?? allowAll,
    nonInteractive: "deny" as const,
    ...(options.prompter
      ? {
          prompter: {
            ask: (request: Pending) => {
              options.asked?.push(request)
              return Effect.succeed<Answer>({ reply: "once" })
            }
          }
        }
      : {})
  }
  const sandbox = options.sandbox ? Sandbox.layer({ config: {}, places: { project: cwd, home: tempDir("reins-home-"), dataDir } }) : Layer.empty
  const layer = Layer.mergeAll(Permission.layer, Truncate.layer, layerJobs({ ...defaultJobSettings, ...options.jobs }), sandbox).pipe(
    Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
    Layer.provide(Layer.succeed(DataDir, dataDir)),
    Layer.provide(Layer.succeed(PermissionSettings, settings)),
    Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  let closed = false
  const h: Harness = {
    cwd,
    context,
    jobs: Context.get(context, Jobs),
    call: (tool, args, sessionID = "ses_jobs") =>
      Effect.runPromise(
        Effect.gen(function* () {
          const info = yield* tool
          return yield* Effect.result(info.execute(args, { sessionID, messageID: "msg_jobs", callID: `call_${Math.random().toString(36).slice(2)}`, cwd }))
        }).pipe(Effect.provideContext(context), Effect.provideService(Reducers, builtinReducers), Effect.provideService(HomeDir, cwd)) as Effect.Effect<any>
      ),
    close: async () => {
      if (closed) return
      closed = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
  opened.push(h)
  return h
}

/** The live processes whose command line is `marker` (a sleep no other test runs: inside a sandbox its pid is not the host's). */
const processesOf = (marker: string) =>
  fs.readdirSync("/proc").filter((d) => {
    try {
      return /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") === marker && alive(Number(d))
    } catch {
      return false
    }
  })
const uniqueSleep = () => `sleep 4000.${process.pid}${Math.floor(Math.random() * 1e6)}`

const ok = (r: any) => {
  if (r._tag !== "Success") throw new Error(`expected success, got ${r.failure?.message}`)
  return r.success
}

/** Reads the job (waiting for news each time) until `done` holds for what was read so far; returns all read and the last result. */
const readUntil = async (h: Harness, id: string, done: (text: string, last: any) => boolean) => {
  let text = ""
  return waitFor(async () => {
    const r = ok(await h.call(jobOutput, { id, wait_ms: 5_000 }))
    if (!r.output.startsWith("(no new output)")) text += r.output.split("\n\n(")[0]
    return done(text, r) ? { text, last: r } : undefined
  }, `job ${id} to satisfy the test`)
}

describe("background jobs", () => {
  test("start returns at once with an id; job_output returns new output only, then the exit code", async () => {
    const h = await harness()
    const started = ok(await h.call(bash, { command: "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second; exit 7", background: true }))
    expect(started.output).toContain("Started background job job-1")
    expect(started.metadata).toMatchObject({ background: true, jobID: "job-1" })
    const first = await readUntil(h, "job-1", (text) => text.includes("first"))
    expect(first.last.output).toContain("(job-1 running")
    expect(first.last.metadata.status).toEqual({ state: "running" })
    fs.writeFileSync(path.join(h.cwd, "go"), "")
    const rest = await readUntil(h, "job-1", (_text, last) => last.metadata.status.state === "exited")
    // what came after the first read, not the first line again
    expect(rest.text).toContain("second")
    expect(rest.text).not.toContain("first")
    expect(rest.last.output).toContain("(job-1 exited with code 7)")
    expect(rest.last.metadata.status).toEqual({ state: "exited", code: 7, signal: null })
    // nothing new after the end (no wait once it ended); the service reads the whole kept output again when asked
    const again = ok(await h.call(jobOutput, { id: "job-1", wait_ms: 30_000 }))
    expect(again.output).toStartWith("(no new output)")
    const all = await Effect.runPromise(h.jobs.read("ses_jobs", "job-1", { all: true }))
    expect(all.piece.text).toBe("first\nsecond\n")
    // the listing
    const listed = ok(await h.call(jobOutput, {}))
    expect(listed.output).toContain("job-1  exited with code 7")
  })

  test("job_kill kills the whole process group, a grandchild included, and reports the status", async () => {
    const h = await harness()
    // the shell starts sh, which starts sleep in the background: sleep is the job's grandchild
    ok(await h.call(bash, { command: "sh -c 'sleep 1000 & echo grandchild $!; wait'", background: true }))
    const { text } = await readUntil(h, "job-1", (t) => /grandchild \d+/.test(t))
    const pid = Number(/grandchild (\d+)/.exec(text)![1])
    expect(alive(pid)).toBe(true)
    const killed = ok(await h.call(jobKill, { id: "job-1" }))
    expect(killed.output).toContain("job-1 killed by SIGTERM; its process group is gone.")
    expect(killed.metadata.status).toEqual({ state: "killed", signal: "SIGTERM" })
    await waitFor(() => !alive(pid), "the grandchild to be gone")
    const after = ok(await h.call(jobOutput, { id: "job-1" }))
    expect(after.output).toContain("(job-1 killed by SIGTERM)")
  })

  test("a group that ignores SIGTERM is killed with SIGKILL after the grace period", async () => {
    const h = await harness({ jobs: { graceMs: 200 } })
    ok(await h.call(bash, { command: "trap '' TERM; sh -c 'sleep 1000 & echo grandchild $!; wait'", background: true }))
    const { text } = await readUntil(h, "job-1", (t) => /grandchild \d+/.test(t))
    const pid = Number(/grandchild (\d+)/.exec(text)![1])
    const killed = ok(await h.call(jobKill, { id: "job-1" }))
    expect(killed.metadata.status).toEqual({ state: "killed", signal: "SIGKILL" })
    expect(alive(pid)).toBe(false)
  })

  test("the output is capped: the last bytes kept, what was dropped counted and said", async () => {
    const h = await harness({ jobs: { outputBytes: 1_000 } })
    ok(await h.call(bash, { command: "seq 1 2000", background: true }))
    await waitFor(() => h.jobs.list("ses_jobs")[0]?.status.state === "exited", "the job to end")
    const r = ok(await h.call(jobOutput, { id: "job-1" }))
    expect(r.output).toContain("bytes before this were dropped")
    expect(r.output).toContain("\n2000\n")
    expect(r.output).not.toContain("\n1\n")
    // the totals count everything written
    expect(r.metadata.outputBytes).toBe(Buffer.byteLength(`${Array.from({ length: 2000 }, (_, i) => i + 1).join("\n")}\n`))
    // the text starts on a whole line
    expect(r.output.split("\n")[0]).toMatch(/^\d+$/)
  })

  test("a session runs at most maxRunning jobs at once; one ended makes room", async () => {
    const h = await harness({ jobs: { maxRunning: 2 } })
    ok(await h.call(bash, { command: "sleep 1000", background: true }))
    ok(await h.call(bash, { command: "sleep 1000", background: true }))
    const refused = await h.call(bash, { command: "sleep 1000", background: true })
    expect(refused._tag).toBe("Failure")
    expect(refused.failure.message).toContain("This session already runs 2 background jobs (job-1, job-2), the most at once")
    // another session has its own limit
    ok(await h.call(bash, { command: "sleep 1000", background: true }, "ses_other"))
    ok(await h.call(jobKill, { id: "job-1" }))
    const third = ok(await h.call(bash, { command: "sleep 1000", background: true }))
    // ids are the runtime's: the other session's job took job-3 (a sub-agent's job never names its parent's)
    expect(third.metadata.jobID).toBe("job-4")
    // a job of another session is not this one's
    const foreign = await h.call(jobOutput, { id: "job-3" }, "ses_jobs")
    expect(foreign.failure.message).toContain("No background job job-3 in this session")
  })

  test("the permission rules apply to a background command as to any other", async () => {
    const h = await harness({ rules: [...allowAll, { permission: "bash", pattern: "touch *", action: "deny" }] })
    const denied = await h.call(bash, { command: "touch marker", background: true })
    expect(denied._tag).toBe("Failure")
    expect(denied.failure.reason).toBe("permission")
    expect(h.jobs.list()).toEqual([])
    expect(fs.existsSync(path.join(h.cwd, "marker"))).toBe(false)
  })

  test("closing the runtime's scope kills every job's group, grandchildren included", async () => {
    const h = await harness()
    ok(await h.call(bash, { command: "sh -c 'sleep 1000 & echo grandchild $!; wait'", background: true }))
    ok(await h.call(bash, { command: "sh -c 'sleep 1000 & echo grandchild $!; wait'", background: true }, "ses_two"))
    const one = await readUntil(h, "job-1", (t) => /grandchild \d+/.test(t))
    let two = ""
    await waitFor(async () => {
      two += ok(await h.call(jobOutput, { id: "job-2", wait_ms: 5_000 }, "ses_two")).output.split("\n\n(")[0]
      return /grandchild \d+/.test(two)
    }, "the second job's grandchild")
    const pids = [one.text, two].map((t) => Number(/grandchild (\d+)/.exec(t)![1]))
    expect(pids.every(alive)).toBe(true)
    await h.close()
    // the scope's close returns once the groups are gone
    expect(pids.filter(alive)).toEqual([])
  })

  test("job_output and job_kill are offered to a session once it has a job (every request would carry them)", async () => {
    const h = await harness()
    const registry = await Effect.runPromise(
      Layer.build(ToolRegistry.layer([bash, jobOutput, jobKill])).pipe(
        Effect.map((built) => Context.get(built, ToolRegistry)),
        Effect.provideContext(h.context),
        Effect.provideService(Reducers, builtinReducers),
        Effect.scoped
      ) as Effect.Effect<ToolRegistry["Service"]>
    )
    const offered = async (sessionID: string) => {
      await Effect.runPromise(registry.refresh(sessionID))
      return registry.forModel("claude-sonnet-4", sessionID).map((t) => t.id)
    }
    expect(await offered("ses_jobs")).toEqual(["bash"])
    ok(await h.call(bash, { command: "true", background: true }))
    expect(await offered("ses_jobs")).toEqual(["bash", "job_output", "job_kill"])
    expect(await offered("ses_none")).toEqual(["bash"])
    // another session's refresh in between changes nothing for this one: offering is asked per session, per call
    expect(registry.forModel("claude-sonnet-4", "ses_jobs").map((t) => t.id)).toEqual(["bash", "job_output", "job_kill"])
    expect(registry.forModel("claude-sonnet-4", "ses_none").map((t) => t.id)).toEqual(["bash"])
    // naming no session: the tools offered only some of the time are left out
    expect(registry.forModel("claude-sonnet-4").map((t) => t.id)).toEqual(["bash"])
  })

  test("a job owns its whole group: what its shell left running is killed when the shell exits (no sandbox)", async () => {
    const h = await harness()
    const sleep = uniqueSleep()
    ok(await h.call(bash, { command: `${sleep} >/dev/null 2>&1 & echo up`, background: true }))
    const { last } = await readUntil(h, "job-1", (_t, r) => r.metadata.status.state !== "running")
    // ended means its group is empty
    expect(last.metadata.status).toEqual({ state: "exited", code: 0, signal: null })
    expect(processesOf(sleep)).toEqual([])
    expect(last.output).toContain("processes its shell left running in its process group were killed")
  })

  test("job_kill: a member that ignores SIGTERM and holds no output pipe is killed after the grace period (no sandbox)", async () => {
    const h = await harness({ jobs: { graceMs: 200 } })
    const sleep = uniqueSleep()
    ok(await h.call(bash, { command: `(trap '' TERM; exec ${sleep}) >/dev/null 2>&1 & echo up; sleep 1000`, background: true }))
    await readUntil(h, "job-1", (t) => t.includes("up"))
    await waitFor(() => processesOf(sleep).length === 1, "the member to run")
    const killed = ok(await h.call(jobKill, { id: "job-1" }))
    expect(killed.metadata.status.state).toBe("killed")
    expect(processesOf(sleep)).toEqual([])
  })

  test("job_kill interrupted during the grace period still ends the job with SIGKILL", async () => {
    const h = await harness({ jobs: { graceMs: 600_000 } })
    // the shell answers SIGTERM with a line and goes on
    ok(await h.call(bash, { command: "trap 'echo got-term' TERM; echo up; while :; do sleep 0.05; done", background: true }))
    await readUntil(h, "job-1", (t) => t.includes("up"))
    const killing = Effect.runFork(h.jobs.kill("ses_jobs", "job-1"))
    await readUntil(h, "job-1", (t) => t.includes("got-term"))
    expect(h.jobs.list("ses_jobs")[0]!.status.state).toBe("running")
    await Effect.runPromise(Fiber.interrupt(killing))
    expect(h.jobs.list("ses_jobs")[0]!.status).toEqual({ state: "killed", signal: "SIGKILL" })
  })

  test("a throw after the job ended never leaves it running; a start that fails is failed, not killed", async () => {
    const scope = Effect.runSync(Scope.make())
    const jobs = await Effect.runPromise(Scope.provide(makeJobs(defaultJobSettings), scope))
    const cwd = tempDir()
    await Effect.runPromise(
      jobs.start({
        sessionID: "s",
        command: "true",
        cwd,
        run: (sink, onStart) => runCommand("true", cwd, undefined, sink, onStart),
        ended: () => {
          throw new Error("ENOENT from the git guard")
        }
      })
    )
    await waitFor(() => jobs.list("s")[0]!.status.state !== "running", "the job to end")
    expect(jobs.list("s")[0]!.status).toEqual({ state: "exited", code: 0, signal: null })
    expect(jobs.list("s")[0]!.note).toContain("ENOENT from the git guard")
    const missing = path.join(cwd, "missing")
    await Effect.runPromise(
      jobs.start({ sessionID: "s", command: "true", cwd: missing, run: (sink, onStart) => runCommand("true", missing, undefined, sink, onStart) })
    )
    await waitFor(() => jobs.list("s")[1]!.status.state !== "running", "the second job to end")
    const status = jobs.list("s")[1]!.status
    expect(status.state).toBe("failed")
    expect(status.state === "failed" ? status.message : "").toContain("ENOENT")
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  test("a reader waiting when the job ends sees its final note with its status (a waiter resumes in the ender's call)", async () => {
    const scope = Effect.runSync(Scope.make())
    const jobs = await Effect.runPromise(Scope.provide(makeJobs(defaultJobSettings), scope))
    const gate = Effect.runSync(Deferred.make<{ exitCode: number; signal: null; timedOut: boolean }>())
    await Effect.runPromise(
      jobs.start({ sessionID: "s", command: "scripted", cwd: tempDir(), run: () => Deferred.await(gate), ended: () => "(the final note)" })
    )
    // the reader is waiting for news (no output, running) when the job ends
    const reader = Effect.runFork(jobs.read("s", "job-1", { waitMs: 60_000 }))
    await waitFor(() => jobs.list("s")[0]!.status.state === "running" && reader.pollUnsafe() === undefined, "the reader to wait")
    Effect.runSync(Deferred.succeed(gate, { exitCode: 0, signal: null, timedOut: false }))
    const { job } = await Effect.runPromise(Fiber.join(reader))
    expect(job.status).toEqual({ state: "exited", code: 0, signal: null })
    expect(job.note).toBe("(the final note)")
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  test("a background command's permission question says it runs in the background with no timeout", async () => {
    const asked: Array<Pending> = []
    const h = await harness({ rules: [...allowAll, { permission: "bash", pattern: "echo *", action: "ask" }], prompter: true, asked })
    ok(await h.call(bash, { command: "echo hi", background: true }))
    expect(asked.map((r) => r.title)).toEqual([BACKGROUND_NOTE])
    ok(await h.call(bash, { command: "echo hi" }))
    expect(asked[1]!.title).toBeUndefined()
  })

  test("without the runtime's job service, background says it is not available", async () => {
    const cwd = tempDir()
    const layer = Layer.mergeAll(Permission.layer, Truncate.layer).pipe(
      Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
      Layer.provide(Layer.succeed(DataDir, tempDir("reins-data-"))),
      Layer.provide(Layer.succeed(PermissionSettings, { rules: allowAll, nonInteractive: "deny" as const })),
      Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
    )
    const r: any = await Effect.runPromise(
      Effect.gen(function* () {
        const info = yield* bash
        return yield* Effect.result(info.execute({ command: "true", background: true }, { sessionID: "s", messageID: "m", callID: "c", cwd }))
      }).pipe(Effect.provide(layer), Effect.provideService(Reducers, builtinReducers), Effect.provideService(HomeDir, cwd)) as Effect.Effect<any>
    )
    expect(r.failure.message).toContain("Background jobs are not available")
  })
})

describe.skipIf(!(process.platform === "linux" && probeBwrap().available))("background jobs in the OS sandbox", () => {
  test("a background command runs inside the sandbox, as a foreground one does", async () => {
    const h = await harness({ sandbox: true, prompter: true })
    const probe = `reins-job-probe-${process.pid}`
    const target = path.join(process.env.HOME ?? "/root", probe)
    const started = ok(await h.call(bash, { command: `echo inside > in.txt; f="$HOME/${probe}"; touch "$f"; echo touched $?`, background: true }))
    expect(started.metadata.sandboxed).toBe(true)
    const { text } = await readUntil(h, "job-1", (_t, last) => last.metadata.status.state !== "running")
    expect(text).toMatch(/touched [1-9]/)
    expect(fs.existsSync(target)).toBe(false)
    expect(fs.readFileSync(path.join(h.cwd, "in.txt"), "utf8")).toBe("inside\n")
    fs.rmSync(target, { force: true })
  })

  test("a command too long to be the shell's argument comes on stdin inside the sandbox too", async () => {
    const h = await harness({ sandbox: true, prompter: true })
    const command = `echo "$(printf %s '${"x".repeat(ARGV_MAX)}' | wc -c) bytes" > long.txt; cat long.txt`
    expect(onArgv(command)).toBe(false)
    const ran = ok(await h.call(bash, { command }))
    expect(ran.metadata.sandboxed).toBe(true)
    expect(ran.output).toContain(`${ARGV_MAX} bytes`)
    expect(fs.readFileSync(path.join(h.cwd, "long.txt"), "utf8")).toBe(`${ARGV_MAX} bytes\n`)
  })

  test("what a running job plants where git runs code is taken away before the next command, not only at its end", async () => {
    const h = await harness({ sandbox: true, prompter: true })
    execSync("git init -q", { cwd: h.cwd })
    const commondir = path.join(h.cwd, ".git", "commondir")
    ok(await h.call(bash, { command: `printf '/tmp/elsewhere\\n' > .git/commondir; echo planted $?; sleep 1000`, background: true }))
    await readUntil(h, "job-1", (t) => t.includes("planted 0"))
    expect(fs.existsSync(commondir)).toBe(true)
    ok(await h.call(bash, { command: "true" }))
    expect(fs.existsSync(commondir)).toBe(false)
    // planted again: job_output takes it away too, and the job's end says what was undone
    fs.writeFileSync(commondir, "/tmp/elsewhere\n")
    ok(await h.call(jobOutput, {}))
    expect(fs.existsSync(commondir)).toBe(false)
    ok(await h.call(jobKill, { id: "job-1" }))
    const after = ok(await h.call(jobOutput, { id: "job-1" }))
    expect(after.output).toContain("reins's sandbox undid .git/commondir")
  })

  test("a sandboxed job's shell exiting leaves nothing of it running", async () => {
    const h = await harness({ sandbox: true, prompter: true })
    const sleep = uniqueSleep()
    ok(await h.call(bash, { command: `${sleep} >/dev/null 2>&1 & echo up`, background: true }))
    await readUntil(h, "job-1", (_t, r) => r.metadata.status.state !== "running")
    expect(processesOf(sleep)).toEqual([])
  })

  test("job_kill stops a sandboxed job's processes, inside the sandbox's pid namespace too", async () => {
    const h = await harness({ sandbox: true, prompter: true })
    // a sleep no other test runs, found by its command line (its pid inside the sandbox is not the host's)
    const sleep = `sleep 4000.${process.pid}${Math.floor(Math.random() * 1e6)}`
    const running = () =>
      fs.readdirSync("/proc").filter((d) => {
        try {
          return /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") === sleep && alive(Number(d))
        } catch {
          return false
        }
      })
    ok(await h.call(bash, { command: `sh -c '${sleep} & echo up; wait'`, background: true }))
    await readUntil(h, "job-1", (t) => t.includes("up"))
    await waitFor(() => running().length === 1, "the sandboxed grandchild to run")
    const killed = ok(await h.call(jobKill, { id: "job-1" }))
    expect(killed.metadata.status.state).toBe("killed")
    expect(running()).toEqual([])
  })
})
