// The durable event log through `reins serve`: SSE ids are log positions, so a client reconnecting
// after the server was killed -9 and restarted, or to another server on the same data, gets every
// stored event once, in order; a permission question asked by one server is answered through another.
import { Database } from "bun:sqlite"
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, leaseLapsed, projects, reins } from "./support.ts"
import { api, endSleeping, marker, openEvents, servers, sleeping, type SseFrame } from "./serve-support.ts"
import { waitFor } from "@reins/testkit"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

/** The stored log after `after`, as (id, type), read from the database file itself. */
const storedAfter = (dataDir: string, after: number) => {
  const db = new Database(path.join(dataDir, "reins.db"), { readonly: true })
  try {
    return db.query<{ id: number; type: string }, [number]>("SELECT id, type FROM session_event WHERE id > ?1 ORDER BY id").all(after)
  } finally {
    db.close()
  }
}

const logged = (frames: ReadonlyArray<SseFrame>) => frames.filter((f) => f.id !== undefined).map((f) => ({ id: f.id!, type: f.event }))

describe("reins serve: the event log", () => {
  test("killed -9 mid-turn and restarted on the same data: a client reconnecting with its last id gets every stored event once, in order, then live ones", async () => {
    const hold = marker()
    const given = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${hold}` } }] }, { text: "after the restart" }])
    // a short lease: the killed server's lapses (in database time) soon after the kill, and the next prompt starts a turn
    const p = { ...given, env: { ...given.env, REINS_TEST_RUN_TIMING: "100,1000" } }
    try {
      const first = await serve(p, ["--yolo"])
      const id = (await api(first.url, "POST", "/session", {})).body.id as string
      // one client goes away early (after the user's message), another stays until the kill
      const early = await openEvents(first.url, { query: `?sessionID=${id}` })
      const late = await openEvents(first.url, { query: `?sessionID=${id}` })
      await api(first.url, "POST", `/session/${id}/prompt_async`, { text: "go" })
      await early.waitFor((f) => f.event === "message.updated" && f.data.message.role === "user")
      await early.close()
      const lastSeen = logged(early.frames).at(-1)!.id
      await late.waitFor((f) => f.event === "part.updated" && f.data.part.type === "tool" && f.data.part.state.status === "running")
      await waitFor(() => sleeping(hold) === 1, "the command to run")
      first.child.kill("SIGKILL")
      await first.exited
      await late.close()
      const stored = storedAfter(p.dataDir, lastSeen)
      // what the staying client saw was stored before it was sent: it is all in the log
      expect(stored.slice(0, logged(late.frames).filter((f) => f.id > lastSeen).length)).toEqual(logged(late.frames).filter((f) => f.id > lastSeen))
      expect(stored.map((e) => e.type)).toContain("part.updated")
      endSleeping(hold)

      const second = await serve(p, ["--yolo"])
      const again = await openEvents(second.url, { query: `?sessionID=${id}`, headers: { "Last-Event-ID": String(lastSeen) } })
      await again.waitFor((f) => f.id === stored.at(-1)!.id)
      expect(again.frames[0]).toMatchObject({ event: "server.connected" })
      expect(again.frames.some((f) => f.event === "server.gap")).toBe(false)
      // exactly the stored events after its id, once each, in order
      expect(logged(again.frames)).toEqual(stored)
      // then live: the next prompt's turn, once the killed server's lease has lapsed
      await waitFor(() => leaseLapsed(p, id), "the killed server's lease to lapse")
      await api(second.url, "POST", `/session/${id}/prompt_async`, { text: "again" })
      const finished = await again.waitFor((f) => f.event === "turn.finished")
      expect(finished.data.result.text).toBe("after the restart")
      const all = logged(again.frames)
      expect(all.map((e) => e.id)).toEqual([...new Set(all.map((e) => e.id))].sort((a, b) => a - b))
      expect(all.slice(stored.length)).toEqual(storedAfter(p.dataDir, stored.at(-1)!.id).slice(0, all.length - stored.length))
      await again.close()
    } finally {
      endSleeping(hold)
    }
  }, 120_000)

  test("two servers on one data dir: a client of the other gets the turn's events with the same ids; a question asked in one is listed and answered through the other", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo approved elsewhere" } }] }, { text: "done" }], {
      permission: { bash: "ask" }
    })
    const a = await serve(p)
    const b = await serve(p)
    const id = (await api(a.url, "POST", "/session", {})).body.id as string
    const onA = await openEvents(a.url, { query: `?sessionID=${id}` })
    const onB = await openEvents(b.url, { query: `?sessionID=${id}` })
    await Promise.all([onA.waitFor((f) => f.event === "server.connected"), onB.waitFor((f) => f.event === "server.connected")])
    await api(a.url, "POST", `/session/${id}/prompt_async`, { text: "go" })
    const asked = await onB.waitFor((f) => f.event === "permission.asked")
    // B did not ask it, yet lists it and takes the answer
    const listed = await api(b.url, "GET", `/session/${id}/permissions`)
    expect(listed).toMatchObject({ status: 200, body: [{ id: asked.data.id, sessionID: id, permission: "bash", patterns: ["echo approved elsewhere"] }] })
    expect(await api(b.url, "POST", `/session/${id}/permissions/${asked.data.id}`, { response: "once" })).toEqual({ status: 200, body: { ok: true } })
    const replied = await onB.waitFor((f) => f.event === "permission.replied")
    expect(replied.data).toMatchObject({ id: asked.data.id, reply: "once", by: "user" })
    await onA.waitFor((f) => f.event === "turn.finished")
    const finished = await onB.waitFor((f) => f.event === "turn.finished")
    expect(finished.data.result.text).toBe("done")
    // the same events with the same ids on both
    expect(logged(onB.frames)).toEqual(logged(onA.frames))
    expect((await api(b.url, "GET", `/session/${id}/permissions`)).body).toEqual([])
    const tool = (await api(b.url, "GET", `/session/${id}/message`)).body.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
    expect(tool.state.output).toContain("approved elsewhere")
    // a client of A that left reconnects to B with its last id: nothing lost, nothing twice
    const cut = logged(onA.frames)[3]!.id
    await onA.close()
    const moved = await openEvents(b.url, { query: `?sessionID=${id}&lastEventId=${cut}` })
    await moved.waitFor((f) => f.event === "turn.finished")
    expect(logged(moved.frames)).toEqual(logged(onB.frames).filter((f) => f.id > cut))
    await moved.close()
    await onB.close()
  }, 120_000)
})

describe("reins serve: another project on the same data dir", () => {
  test("its `reins run` events reach no client of this server (live or replayed), its session id is 404 on /event; this project's events all arrive", async () => {
    const p = await setup([{ text: "secret of the other project" }, { text: "mine" }])
    const a = await serve(p)
    const all = await openEvents(a.url)
    await all.waitFor((f) => f.event === "server.connected")
    const other = { ...p, cwd: fs.mkdtempSync(path.join(os.tmpdir(), "reins-other-project-")) }
    const ran = await reins(["run", "tell me"], other)
    expect(ran.code).toBe(0)
    const db = new Database(path.join(p.dataDir, "reins.db"), { readonly: true })
    const theirs = db.query("SELECT id FROM session WHERE directory = ?").all(fs.realpathSync(other.cwd)) as Array<{ id: string }>
    db.close()
    expect(theirs.length).toBe(1)
    // this project's turn, after the other's: every one of its events arrives, none of the other's
    const id = (await api(a.url, "POST", "/session", {})).body.id as string
    await api(a.url, "POST", `/session/${id}/prompt_async`, { text: "go" })
    await all.waitFor((f) => f.event === "turn.finished")
    const sessionsSeen = new Set(all.frames.filter((f) => f.id !== undefined).map((f) => f.data.sessionID ?? f.data.session?.id))
    expect([...sessionsSeen]).toEqual([id])
    expect(JSON.stringify(all.frames)).not.toContain("secret")
    // replayed from the start of the log: the same
    const replay = await openEvents(a.url, { query: "?lastEventId=0" })
    await replay.waitFor((f) => f.event === "turn.finished")
    expect(logged(replay.frames)).toEqual(logged(all.frames))
    expect(JSON.stringify(replay.frames)).not.toContain("secret")
    await replay.close()
    // the other project's session: not found, as the session routes say
    const asked = await openEvents(a.url, { query: `?sessionID=${theirs[0]!.id}&lastEventId=0` })
    expect(asked.response.status).toBe(404)
    expect((await api(a.url, "GET", `/session/${theirs[0]!.id}`)).status).toBe(404)
    await asked.close()
    await all.close()
  }, 120_000)
})
