import { afterEach, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { waitFor } from "@reins/testkit"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { identify, killGroup, reap, recordOf, type GroupRecord } from "../src/builtin/ProcessGroup.ts"
import { tempDir } from "./helpers.ts"

const started: Array<number> = []
afterEach(() => {
  for (const pgid of started.splice(0)) killGroup(pgid)
})

/** A detached shell (its own session and group) running `script`; a unique sleep marks its processes. */
const group = (script: (sleep: string) => string) => {
  const sleep = `sleep 3${Math.floor(Math.random() * 100000)}.5`
  const child = spawn("/bin/sh", ["-c", script(sleep)], { detached: true, stdio: "ignore" })
  child.unref()
  started.push(child.pid!)
  return { pgid: child.pid!, sleep }
}

const running = (sleep: string) =>
  Bun.spawnSync(["ps", "-eo", "args"])
    .stdout.toString()
    .split("\n")
    .filter((l) => l.trim() === sleep).length

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

describe("process group records", () => {
  test("a live group (the shell and its background child) is killed", async () => {
    const g = group((s) => `${s} & ${s}`)
    await waitFor(() => running(g.sleep) === 2, "both sleeps to start")
    const record = await Effect.runPromise(identify(g.pgid))
    expect(record).toMatchObject({ pgid: g.pgid, host: os.hostname() })
    expect(await Effect.runPromise(reap(record!))).toBe("killed")
    expect(await waitFor(() => !groupAlive(g.pgid), "the group to be gone")).toBe(true)
    expect(running(g.sleep)).toBe(0)
  })

  test("a group whose leader exited is still killed through its members", async () => {
    // the leader exits once the test has its record (a file the test writes)
    const go = path.join(tempDir(), "go")
    const g = group((s) => `${s} & ${s} & until [ -e ${go} ]; do sleep 0.01; done; exit 0`)
    const record = await Effect.runPromise(identify(g.pgid))
    expect(record).toBeDefined()
    fs.writeFileSync(go, "")
    await waitFor(() => running(g.sleep) === 2, "both sleeps to start")
    // the leader is gone, its two children are left in its group
    await waitFor(
      () =>
        Bun.spawnSync(["ps", "-o", "pid=", "-p", String(g.pgid)])
          .stdout.toString()
          .trim() === "",
      "the leader to exit"
    )
    expect(running(g.sleep)).toBe(2)
    expect(await Effect.runPromise(reap(record!))).toBe("killed")
    expect(await waitFor(() => running(g.sleep) === 0, "the sleeps to be gone")).toBe(true)
  })

  test("a pid now used by another process (another start time) is never signalled", async () => {
    const g = group((s) => `${s} & ${s}`)
    await waitFor(() => running(g.sleep) === 2, "both sleeps to start")
    const record = (await Effect.runPromise(identify(g.pgid)))!
    for (const stale of [
      { ...record, start: record.start - 1 },
      { ...record, start: record.start + 1000 }
    ]) {
      expect(await Effect.runPromise(reap(stale))).toBe("replaced")
    }
    // wall time: a group that was not signalled is still whole a while later (it is a wait for nothing)
    await Bun.sleep(100)
    expect(groupAlive(g.pgid)).toBe(true)
    expect(running(g.sleep)).toBe(2)
  })

  test("a record from another machine or boot is left alone", async () => {
    const g = group((s) => s)
    await waitFor(() => running(g.sleep) === 1, "the sleep to start")
    const record = (await Effect.runPromise(identify(g.pgid)))!
    expect(await Effect.runPromise(reap({ ...record, host: `${record.host}-elsewhere` }))).toBe("elsewhere")
    expect(await Effect.runPromise(reap({ ...record, boot: "00000000-0000-0000-0000-000000000000" }))).toBe("elsewhere")
    expect(running(g.sleep)).toBe(1)
  })

  test("a group that has ended is reported gone", async () => {
    const g = group(() => "exit 0")
    const record: GroupRecord | undefined = await Effect.runPromise(identify(g.pgid))
    await waitFor(() => !groupAlive(g.pgid), "the group to end")
    const fallback = { pgid: g.pgid, start: 1, boot: "", host: os.hostname() }
    const boot = (await Bun.file("/proc/sys/kernel/random/boot_id").text()).trim()
    expect(await Effect.runPromise(reap(record ?? { ...fallback, boot }))).toBe("gone")
  })

  test("records are read back from tool metadata, anything else is ignored", () => {
    const record = { pgid: 12, start: 34, boot: "b", host: "h" }
    expect(recordOf({ tail: "x", process: record })).toEqual(record)
    for (const bad of [
      undefined,
      null,
      "x",
      {},
      { process: null },
      { process: { ...record, pgid: "12" } },
      { process: { ...record, start: 1.5 } },
      { process: { pgid: 1 } }
    ]) {
      expect(recordOf(bad)).toBeUndefined()
    }
  })
})
