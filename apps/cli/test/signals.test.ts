// Items 7 and 8 with real processes: a closed terminal (SIGHUP) stops the running command's whole
// process group like Ctrl+C; a reins killed with SIGKILL leaves it running until the next turn on
// the session stops it; a reins stopped past its lease loses its session to another and, resumed,
// exits with a clear error without writing anything more.
import { beforeAll, describe, expect, test } from "bun:test"
import { spawn, type ChildProcess } from "node:child_process"
import { BIN, ensureBuilt, leaseLapsed, projects, reins, waitFor, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

const marker = () => `3${Math.floor(Math.random() * 90000) + 10000}.5`

/** The command of the test: a shell with a background child, both sleeping (`sleep <n>` marks them). */
const sleepers = (n: string) => ({ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] })

/** How many `sleep <n>` processes are still running (zombies, already dead, show as [sleep] and are not counted). */
const sleeping = (n: string) =>
  Bun.spawnSync(["ps", "-eo", "args"])
    .stdout.toString()
    .split("\n")
    .filter((l) => l.trim() === `sleep ${n}`).length

/** The processes of a group still running (a zombie, dead but not yet collected by its parent, is not). */
const groupMembers = (pgid: number) =>
  Bun.spawnSync(["ps", "-eo", "pgid=,stat=,args="])
    .stdout.toString()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([g, stat]) => g === String(pgid) && !stat!.startsWith("Z"))

const exported = async (p: Project, sessionID: string) => JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)

const toolOf = (session: any) => session.messages.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")

const start = (p: Project, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(BIN, args, { cwd: p.cwd, env: { ...p.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr!.on("data", (b) => (stderr += b))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stderr }))
  )
  return { child, exited }
}

/** Waits until the session's bash part is running and has recorded its process group; returns the session id and group. */
const recorded = (p: Project) =>
  waitFor(async () => {
    const list = JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout || "[]")
    const sessionID = list[0]?.id as string | undefined
    if (sessionID === undefined) return undefined
    const tool = toolOf(await exported(p, sessionID))
    const group = tool?.state?.metadata?.process
    return tool?.state?.status === "running" && group ? { sessionID, pgid: group.pgid as number } : undefined
  }, "the bash call to record its process group")

const stopped = (child: ChildProcess) => {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

describe("signals and a running command", () => {
  for (const signal of ["SIGHUP", "SIGTERM"] as const)
    test(`${signal} kills the command's process group and marks the call interrupted, like Ctrl+C`, async () => {
      const n = marker()
      const p = await setup([sleepers(n), { text: "never asked" }])
      const run = start(p, ["run", "--yolo", "sleep please"])
      try {
        const { sessionID } = await recorded(p)
        await waitFor(() => sleeping(n) === 2, "both sleeps to run")
        expect(sleeping(n)).toBe(2)
        run.child.kill(signal)
        const exit = await run.exited
        expect(exit.code).toBe(130)
        await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
        expect(sleeping(n)).toBe(0)
        expect(toolOf(await exported(p, sessionID)).state).toMatchObject({ status: "error", interrupted: true })
        expect(p.server.requests).toHaveLength(1)
      } finally {
        stopped(run.child)
      }
    })

  // A real terminal: script(1) runs reins on a pseudo-terminal; killing script closes its master side,
  // and the kernel hangs up reins, which then writes to a terminal that is gone (EIO).
  test.skipIf(Bun.which("script") === null)("closing a real terminal (a pty) stops the command's group and marks the call interrupted", async () => {
    const n = marker()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `echo hi; sleep ${n} & sleep ${n}` } }] }, { text: "never asked" }])
    const terminal = spawn("script", ["-qfec", `${BIN} run --yolo 'sleep please'`, "/dev/null"], {
      cwd: p.cwd,
      env: { ...p.env, SHELL: "/bin/sh" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    try {
      const { sessionID } = await recorded(p)
      await waitFor(() => sleeping(n) === 2, "both sleeps to run")
      expect(sleeping(n)).toBe(2)
      terminal.kill("SIGKILL")
      await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
      expect(sleeping(n)).toBe(0)
      // reins itself is gone too, and left the call closed
      await waitFor(() => !Bun.spawnSync(["ps", "-eo", "args"]).stdout.toString().includes("run --yolo sleep please"), "reins to be gone")
      expect(Bun.spawnSync(["ps", "-eo", "args"]).stdout.toString()).not.toContain("run --yolo sleep please")
      expect(toolOf(await exported(p, sessionID)).state).toMatchObject({ status: "error", interrupted: true })
    } finally {
      stopped(terminal)
    }
  })

  test("after SIGKILL the group survives (unsandboxed); once the lease lapses the next run on the session kills it and marks the call interrupted", async () => {
    const n = marker()
    const p = await setup([sleepers(n), { text: "picked up again" }])
    // a sandboxed command dies with its reins (bubblewrap's --die-with-parent): the group is left over only without it;
    // a lease of 1 s: a killed reins releases nothing, and its session is free once the lease lapses
    const run = start(p, ["run", "--yolo", "--sandbox", "off", "sleep please"], { REINS_TEST_RUN_TIMING: "100,1000" })
    try {
      const { sessionID, pgid } = await recorded(p)
      run.child.kill("SIGKILL")
      await run.exited
      // nothing stops it: reins had no chance to (a window of wall time: this asserts that something does not happen)
      await Bun.sleep(200)
      expect(sleeping(n)).toBe(2)
      expect(toolOf(await exported(p, sessionID)).state.status).toBe("running")

      await waitFor(() => leaseLapsed(p, sessionID), "the killed process's lease to lapse")
      const next = await reins(["run", "--session", sessionID, "go on"], p)
      // the command the killed run left is told closed (as a resumed turn's client sees it), then this run's summary
      expect(next.stderr.trim()).toMatch(/^✗ bash .* · interrupted after /)
      expect(next.stderr.trim().split("\n").at(-1)).toStartWith(`session ${sessionID} · 1 step · `)
      expect(next.code).toBe(0)
      expect(next.stdout.trim()).toBe("picked up again")
      await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
      expect(sleeping(n)).toBe(0)
      // nothing of the group runs any more (a zombie, dead but not collected by its new parent, may be listed)
      expect(groupMembers(pgid)).toEqual([])
      const state = toolOf(await exported(p, sessionID)).state
      expect(state).toMatchObject({ status: "error", interrupted: true })
      expect(state.error).toContain("Its command was still running after reins stopped, and has now been killed.")
    } finally {
      stopped(run.child)
    }
  })
})

describe("a reins stopped past its lease", () => {
  test("another run takes the session over; resumed, the first exits non-zero without writing, and the history stays consistent", async () => {
    const n = marker()
    const p = await setup([sleepers(n), { text: "answered by the second process" }, { text: "never asked" }])
    // renew every 100 ms, a lease of 1 s
    const timing = { REINS_TEST_RUN_TIMING: "100,1000" }
    const first = start(p, ["run", "--yolo", "sleep please"], timing)
    try {
      const { sessionID } = await recorded(p)
      await waitFor(() => sleeping(n) === 2, "both sleeps to run")
      first.child.kill("SIGSTOP")
      // the frozen process renews no more: wait until its lease has lapsed in the database's time
      await waitFor(() => leaseLapsed(p, sessionID), "the stopped process's lease to lapse")
      const before = await exported(p, sessionID)

      const second = await reins(["run", "--session", sessionID, "take over"], { ...p, env: { ...p.env, ...timing } })
      expect(second.stderr.trim()).toMatch(/^✗ bash .* · interrupted after /)
      expect(second.stderr.trim().split("\n").at(-1)).toStartWith(`session ${sessionID} · 1 step · `)
      expect(second.code).toBe(0)
      expect(second.stdout.trim()).toBe("answered by the second process")
      // the second run stopped the first one's command: its process was dead to it
      await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
      expect(sleeping(n)).toBe(0)
      const afterSecond = await exported(p, sessionID)

      first.child.kill("SIGCONT")
      const exit = await first.exited
      expect(exit.code).toBe(1)
      expect(exit.stderr).toContain(`reins: Session ${sessionID} was taken over by another reins process`)
      expect(exit.stderr).toContain(`this one (pid ${first.child.pid}) was stopped or unresponsive; this turn stopped without writing`)

      // the first process wrote nothing once it had lost the session
      const final = await exported(p, sessionID)
      expect(final.messages).toEqual(afterSecond.messages)
      expect(final.session).toEqual(afterSecond.session)
      expect(final.messages.map((m: any) => m.info.role)).toEqual(["user", "assistant", "user", "assistant"])
      expect(final.messages.slice(0, 2).map((m: any) => m.info.id)).toEqual(before.messages.map((m: any) => m.info.id))
      expect(toolOf(final).state).toMatchObject({ status: "error", interrupted: true })
      expect(final.messages[3].parts.find((x: any) => x.type === "text").text).toBe("answered by the second process")
      expect(p.server.requests).toHaveLength(2)
    } finally {
      first.child.kill("SIGCONT")
      stopped(first.child)
    }
  }, 60_000)
})
