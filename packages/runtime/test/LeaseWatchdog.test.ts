// A cluster runner's lease watchdog (issue 28): the process groups of a runner's commands are killed when the runner
// is frozen past the watchdog's limit or dies, and left alone while it beats.
import { afterAll, describe, expect, test } from "bun:test"
import { ProcessGroup } from "@reins/tool"
import { eventually } from "@reins/testkit"
import { Effect } from "effect"
import * as path from "node:path"

const started: Array<{ proc: Bun.Subprocess; pgid?: number }> = []
afterAll(() => {
  for (const s of started) {
    s.proc.kill("SIGCONT")
    s.proc.kill(9)
    if (s.pgid !== undefined) ProcessGroup.killGroup(s.pgid)
  }
})

/** The stand-in runner with its watchdog, and the pgid of its command once it is watched. */
const startWatched = async (afterMs: number) => {
  const proc = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "watched-process.ts"), String(afterMs)], { stdout: "pipe", stderr: "pipe" })
  let stderr = ""
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk)
  })()
  const entry: { proc: Bun.Subprocess; pgid?: number } = { proc }
  started.push(entry)
  const reader = proc.stdout.getReader()
  let text = ""
  while (!text.includes("\n")) {
    const { value, done } = await reader.read()
    if (done) throw new Error("the watched process ended before it started its command")
    text += new TextDecoder().decode(value)
  }
  entry.pgid = (JSON.parse(text.split("\n")[0]!) as { pgid: number }).pgid
  return { proc, pgid: entry.pgid, stderr: () => stderr }
}

const gone = (pgid: number) =>
  eventually(
    Effect.sync(() => (ProcessGroup.groupRunning(pgid) ? undefined : true)),
    `group ${pgid} to be killed`
  )

describe("the lease watchdog", () => {
  test("a runner frozen (SIGSTOP) past the limit: its command's process group is killed while it is still stopped", async () => {
    const { proc, pgid, stderr } = await startWatched(1_000)
    expect(ProcessGroup.groupRunning(pgid)).toBe(true)
    proc.kill("SIGSTOP")
    await Effect.runPromise(gone(pgid))
    // it was killed by the watchdog, not by its runner: the runner is still stopped; the watchdog said why
    expect(proc.exitCode).toBeNull()
    await Effect.runPromise(
      eventually(
        Effect.sync(() => stderr().includes(`process groups ${pgid} `)),
        "the watchdog's line"
      )
    )
    expect(stderr()).toContain("because the runner did not beat for 1 s")
  })

  test("a runner killed -9: its command's process group is killed at once (the watchdog's pipe closed)", async () => {
    const { proc, pgid } = await startWatched(60_000)
    proc.kill(9)
    await proc.exited
    await Effect.runPromise(gone(pgid))
  })

  test("a runner that beats keeps its command", async () => {
    const { proc, pgid } = await startWatched(1_000)
    // three limits' worth of beats (one every 250 ms)
    const waited = Bun.spawn(["sleep", "3"])
    await waited.exited
    expect(ProcessGroup.groupRunning(pgid)).toBe(true)
    proc.kill(9)
  })
})
