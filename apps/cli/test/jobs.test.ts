// Background jobs through the built CLI (issue 30, item 4): a scripted model starts a job with bash (background: true)
// and reads it with job_output; when reins exits, the job's process group is gone, its grandchild included. The
// interactive session counts the running jobs in its footer and lists them with /jobs.
import { beforeAll, expect, test } from "bun:test"
import * as fs from "node:fs"
import { ensureBuilt, lastToolResult, projects, reins, waitFor } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

/** A `sleep` no other test runs (its fractional seconds are this test's own), as a job's grandchild. */
const marker = () => `sleep 4000.${process.pid}${Math.floor(Math.random() * 1e6)}`

/** Pids of the processes whose command line is exactly `command` (a zombie has ended and is left out). */
const running = (command: string) =>
  fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ")
        return cmd === command && !/^\S+ \(.*\) [ZX] /.test(fs.readFileSync(`/proc/${d}/stat`, "utf8"))
      } catch {
        return false
      }
    })

test("reins run: the model starts a background job, reads its output; the job's processes end with reins", async () => {
  const sleep = marker()
  const p = await setup([
    { toolCalls: [{ name: "bash", arguments: { command: `sh -c '${sleep} & echo job-says-hello; wait'`, background: true, description: "a long job" } }] },
    { toolCalls: [{ name: "job_output", arguments: { id: "job-1", wait_ms: 20_000 } }] },
    { text: "read it" }
  ])
  const r = await reins(["run", "--yolo", "start the job"], p)
  expect(r.code).toBe(0)
  const requests = p.server.requests
  // the job tools are offered once the session has a job, not before
  const offered = (i: number) => (requests[i]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)
  expect(offered(0)).not.toContain("job_output")
  expect(offered(1)).toEqual(expect.arrayContaining(["job_output", "job_kill"]))
  const started = JSON.stringify(requests[1]!.body.messages.filter((m: { role: string }) => m.role === "tool"))
  expect(started).toContain("Started background job job-1")
  const read = lastToolResult(requests)
  expect(read).toContain("job-says-hello")
  expect(read).toContain("(job-1 running")
  // reins returned once the job's group was gone: the grandchild too
  expect(running(sleep)).toEqual([])
})

test("the interactive session shows the running jobs in its footer, lists them with /jobs, and kills them on exit", async () => {
  const sleep = marker()
  const p = await setup([
    { toolCalls: [{ name: "bash", arguments: { command: `sh -c '${sleep} & wait'`, background: true, description: "a dev server" } }] },
    { text: "The job runs." }
  ])
  await using pty = await openTui(p, ["--yolo"])
  await send(pty, "start a job")
  await settled(pty, "The job runs.", "1 job running")
  await waitFor(() => running(sleep).length === 1, "the job's grandchild to run")
  await send(pty, "/jobs")
  await pty.waitFor("Background jobs (1 running):")
  expect(pty.screen()).toMatch(/job-1\s+running\s+.*a dev server/)
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
  expect(running(sleep)).toEqual([])
})
