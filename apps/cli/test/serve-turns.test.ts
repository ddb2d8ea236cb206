// `reins serve` running many turns: sessions at once, a prompt to a busy session queued into its turn,
// SIGTERM stopping the turns, and a server killed mid-turn resumed by the next one on the same data dir.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer, type ScriptedServer } from "@reins/testkit"
import { BIN, ensureBuilt, gate, leaseLapsed, projects, waitFor, type Project, writeUserConfig } from "./support.ts"
import { servers, api, marker, openEvents, sleeping } from "./serve-support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

const scripted: Array<ScriptedServer> = []
afterAll(async () => {
  for (const s of scripted) await s.stop()
})

/** A project whose model answers by the request: a bash call of `command` first, then a text naming the session's first message. */
const respondingProject = async (command: string): Promise<Project & { server: ScriptedServer }> => {
  const server = await startScriptedServer([], {
    respond: (body) => {
      const messages = body.messages as Array<{ role: string; content: unknown }>
      const user = messages.find((m) => m.role === "user")
      const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content)
      return messages.some((m) => m.role === "tool")
        ? { text: `done with ${/task-\w+/.exec(text)?.[0]}` }
        : { toolCalls: [{ name: "bash", arguments: { command } }] }
    }
  })
  scripted.push(server)
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-e2e-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-e2e-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  writeUserConfig(
    dataDir,
    JSON.stringify({
      model: "local/scripted",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { scripted: { context: 32000, output: 4000 } } } }
    })
  )
  return { cwd, dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }, server }
}

const partsOf = async (url: string, id: string) => (await api(url, "GET", `/session/${id}/message`)).body.flatMap((m: any) => m.parts) as Array<any>

const toolRunning = (id: string) => (f: { event: string; data: any }) =>
  f.event === "part.updated" &&
  f.data.part.sessionID === id &&
  f.data.part.type === "tool" &&
  f.data.part.state.status === "running" &&
  f.data.part.state.metadata?.process !== undefined

/** A served project whose session is running `sleep N & sleep N` (both asleep), and the event stream that saw it start; then `next` is the model's answer. */
const sleepingTurn = async (next: string, flags: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const n = marker()
  const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] }, { text: next }])
  const s = await serve(p, ["--yolo", ...flags], env)
  const id = (await api(s.url, "POST", "/session", {})).body.id as string
  const events = await openEvents(s.url)
  await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "sleep" })
  await events.waitFor(toolRunning(id))
  await waitFor(() => sleeping(n) === 2, "both sleeps to run")
  return { n, p, s, id, events }
}

describe("reins serve: turns", () => {
  test("two sessions run their turns at once, each to its own result", async () => {
    // both commands run until the test has seen both running
    const held = gate()
    const p = await respondingProject(held.command)
    const s = await serve(p, ["--yolo"])
    const a = (await api(s.url, "POST", "/session", {})).body.id
    const b = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url)
    await events.waitFor((f) => f.event === "server.connected")
    await api(s.url, "POST", `/session/${a}/prompt_async`, { text: "task-alpha" })
    await api(s.url, "POST", `/session/${b}/prompt_async`, { text: "task-beta" })
    // both commands run at the same time: each session's bash is running before either has finished
    await events.waitFor(toolRunning(a))
    await events.waitFor(toolRunning(b))
    const completedBeforeBothRan = events.frames.findIndex(
      (f) => f.event === "part.updated" && f.data.part.type === "tool" && f.data.part.state.status === "completed"
    )
    const secondRunning = Math.max(events.frames.findIndex(toolRunning(a)), events.frames.findIndex(toolRunning(b)))
    expect(completedBeforeBothRan === -1 || completedBeforeBothRan > secondRunning).toBe(true)
    held.open(p)
    const doneA = await events.waitFor((f) => f.event === "turn.finished" && f.data.result.sessionID === a)
    const doneB = await events.waitFor((f) => f.event === "turn.finished" && f.data.result.sessionID === b)
    expect(doneA.data.result.text).toBe("done with task-alpha")
    expect(doneB.data.result.text).toBe("done with task-beta")
    await events.close()
  })

  test("/event?sessionID= carries the session's sub-agent sessions' events too, and no other session's", async () => {
    const p = await setup([
      { toolCalls: [{ name: "task", arguments: { description: "look around", prompt: "CHILD-PROMPT list the files", subagent_type: "explore" } }] },
      { text: "child says 42" },
      { text: "parent done" },
      { text: "other session" }
    ])
    const s = await serve(p, ["--yolo"])
    const parent = (await api(s.url, "POST", "/session", {})).body.id
    const other = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${parent}` })
    await events.waitFor((f) => f.event === "server.connected")
    expect((await api(s.url, "POST", `/session/${parent}/message`, { text: "go" })).body.text).toBe("parent done")
    expect((await api(s.url, "POST", `/session/${other}/message`, { text: "elsewhere" })).body.text).toBe("other session")
    await events.waitFor((f) => f.event === "turn.finished")
    const child = events.frames.find((f) => f.event === "session.created")!.data.session
    expect(child.parentID).toBe(parent)
    const sessionsSeen = new Set(
      events.frames.flatMap((f) => (f.event === "part.updated" ? [f.data.part.sessionID] : f.event === "message.updated" ? [f.data.message.sessionID] : []))
    )
    expect([...sessionsSeen].sort()).toEqual([child.id, parent].sort())
    // the child's answer streamed on the parent's stream
    expect(
      events.frames.some(
        (f) => f.event === "part.updated" && f.data.part.sessionID === child.id && f.data.part.type === "text" && f.data.part.text === "child says 42"
      )
    ).toBe(true)
    await events.close()
  })

  test("a prompt to a busy session is queued into its running turn (202), and the model reads it at the next step", async () => {
    // the turn's command runs until both prompts are queued
    const held = gate()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "read it" }])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "start" })
    await events.waitFor((f) => f.event === "part.updated" && f.data.part.type === "tool" && f.data.part.state.status === "running")
    const queued = await api(s.url, "POST", `/session/${id}/message`, { text: "also mention the weather" })
    expect(queued).toEqual({ status: 202, body: { queued: true, messageID: expect.stringMatching(/^msg_/) } })
    const asyncQueued = await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "and the tides" })
    expect(asyncQueued).toEqual({ status: 202, body: { sessionID: id, queued: true, messageID: expect.stringMatching(/^msg_/) } })
    held.open(p)
    const finished = await events.waitFor((f) => f.event === "turn.finished")
    expect(finished.data.result.text).toBe("read it")
    // one turn: two model calls, the second carrying both queued messages
    expect(p.server.requests).toHaveLength(2)
    const second = JSON.stringify(p.server.requests[1]!.body.messages)
    expect(second).toContain("also mention the weather")
    expect(second).toContain("and the tides")
    expect(JSON.stringify(p.server.requests[0]!.body.messages)).not.toContain("weather")
    await events.close()
  })

  test("prompts sent together to an idle session start one turn: the others are queued into it, and abort stops it", async () => {
    const n = marker()
    // the first turn's command runs until every prompt sent together has been answered
    const held = gate()
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: held.command } }] },
      { text: "read them all" },
      { toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] },
      { text: "the last turn" }
    ])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await events.waitFor((f) => f.event === "server.connected")
    const texts = Array.from({ length: 8 }, (_, i) => `together-${i}`)
    const answers = await Promise.all(texts.map((text) => api(s.url, "POST", `/session/${id}/prompt_async`, { text })))
    expect(answers.map((a) => a.status)).toEqual(texts.map(() => 202))
    expect(answers.filter((a) => a.body.queued === false)).toHaveLength(1)
    expect(answers.filter((a) => a.body.queued === true && /^msg_/.test(a.body.messageID))).toHaveLength(7)
    held.open(p)
    await events.waitFor((f) => f.event === "turn.finished")
    // one turn: its second model call read every queued message
    expect(p.server.requests).toHaveLength(2)
    const second = JSON.stringify(p.server.requests[1]!.body.messages)
    for (const text of texts) expect(second).toContain(text)
    // prompts sent together again, then aborted: the one turn they made stops, its command with it
    const again = await Promise.all([0, 1, 2].map((i) => api(s.url, "POST", `/session/${id}/prompt_async`, { text: `again-${i}` })))
    expect(again.filter((a) => a.body.queued === false)).toHaveLength(1)
    await waitFor(() => sleeping(n) === 2, "both sleeps to run")
    expect(await api(s.url, "POST", `/session/${id}/abort`)).toEqual({ status: 200, body: { aborted: true } })
    await events.waitFor((f) => f.event === "turn.failed")
    await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
    // a last turn, so that any end published late by a turn of the ones above would be on the stream before its end
    expect((await api(s.url, "POST", `/session/${id}/message`, { text: "last" })).body.text).toBe("the last turn")
    await events.waitFor((f) => f.event === "turn.finished" && f.data.result.text === "the last turn")
    const ends = events.frames.filter((f) => f.event === "turn.finished" || f.event === "turn.failed").map((f) => f.event)
    expect(ends).toEqual(["turn.finished", "turn.failed", "turn.finished"])
    await events.close()
  })

  test("a prompt to a session another reins process is running is queued into that process's turn", async () => {
    // the other process's command runs until the prompt is queued
    const held = gate()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "read it elsewhere" }])
    const s = await serve(p, ["--yolo"])
    const other = spawn(BIN, ["run", "--yolo", "--format", "json", "start over there"], { cwd: p.cwd, env: p.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    other.stdout!.on("data", (b) => (stdout += b))
    const exited = new Promise<number | null>((resolve) => other.on("close", (code) => resolve(code)))
    let id = ""
    await waitFor(async () => {
      const list = (await api(s.url, "GET", "/session")).body
      id = list[0]?.id ?? ""
      return (
        id !== "" &&
        (await api(s.url, "GET", `/session/${id}/message`)).body
          .flatMap((m: any) => m.parts)
          .some((x: any) => x.type === "tool" && x.state.status === "running")
      )
    }, "the other process's command to run")
    const queued = await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "a note from http" })
    expect(queued).toEqual({ status: 202, body: { sessionID: id, queued: true, messageID: expect.stringMatching(/^msg_/) } })
    held.open(p)
    expect(await exited).toBe(0)
    expect(stdout).toContain("read it elsewhere")
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("a note from http")
  })

  test("DELETE of a session whose turn runs in the server stops the turn first, then deletes the session", async () => {
    const n = marker()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}` } }] }, { text: "never" }])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await events.waitFor((f) => f.event === "server.connected")
    expect((await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "nap" })).status).toBe(202)
    await waitFor(() => sleeping(n) === 1, "the turn's command to run")
    expect((await api(s.url, "DELETE", `/session/${id}`)).status).toBe(204)
    expect(sleeping(n)).toBe(0)
    // the session's events went with it; its followers are told it is gone
    await events.waitFor((f) => f.event === "session.deleted" && f.data.sessionID === id)
    expect((await api(s.url, "GET", `/session/${id}`)).status).toBe(404)
    expect(p.server.requests).toHaveLength(1)
    await events.close()
  })

  test("abort and DELETE of a session another reins process is running: its holder is asked, its turn stops, the session goes", async () => {
    const n = marker()
    const nap = { toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}` } }] }
    const given = await setup([nap, nap, { text: "never" }])
    const p = { ...given, env: { ...given.env, REINS_TEST_RUN_TIMING: "200,2000" } }
    const s = await serve(p, ["--yolo"])
    const runElsewhere = (args: ReadonlyArray<string>) => {
      const other = spawn(BIN, ["run", "--yolo", "--sandbox", "off", ...args], { cwd: p.cwd, env: p.env, stdio: ["ignore", "ignore", "ignore"] })
      return new Promise<number | null>((resolve) => other.on("close", (code) => resolve(code)))
    }
    const first = runElsewhere(["nap"])
    await waitFor(() => sleeping(n) === 1, "the other process's command to run")
    const id = (await api(s.url, "GET", "/session")).body[0].id
    expect(await api(s.url, "POST", `/session/${id}/abort`)).toEqual({ status: 200, body: { aborted: true } })
    expect(await first).toBe(130)
    expect(sleeping(n)).toBe(0)
    const second = runElsewhere(["--session", id, "nap again"])
    await waitFor(() => sleeping(n) === 1, "the other process's next command to run")
    expect((await api(s.url, "DELETE", `/session/${id}`)).status).toBe(204)
    expect(await second).toBe(130)
    expect(sleeping(n)).toBe(0)
    expect((await api(s.url, "GET", `/session/${id}`)).status).toBe(404)
  })

  test("a prompt sent as soon as turn.finished arrives starts the next turn (it does not join the one ending)", async () => {
    const p = await setup([{ text: "one" }, { text: "two" }, { text: "three" }])
    const s = await serve(p)
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await events.waitFor((f) => f.event === "server.connected")
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "first" })
    for (const [i, text] of ["one", "two"].entries()) {
      await events.waitFor((f) => f.event === "turn.finished" && f.data.result.text === text)
      expect(await api(s.url, "POST", `/session/${id}/prompt_async`, { text: `after ${i}` })).toEqual({ status: 202, body: { sessionID: id, queued: false } })
    }
    await events.waitFor((f) => f.event === "turn.finished" && f.data.result.text === "three")
    expect(events.frames.filter((f) => f.event === "turn.finished").map((f) => f.data.result.text)).toEqual(["one", "two", "three"])
    expect(p.server.requests).toHaveLength(3)
    await events.close()
  })

  test("SIGTERM stops the running turns (command killed, part interrupted) and the server exits 0", async () => {
    const { n, p, s, id, events } = await sleepingTurn("never asked")
    s.child.kill("SIGTERM")
    expect((await s.exited).code).toBe(0)
    await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
    await events.close()
    const again = await serve(p)
    const tool = (await partsOf(again.url, id)).find((x) => x.type === "tool")
    expect(tool.state).toMatchObject({ status: "error", interrupted: true })
  })

  test("kill -9 mid-turn, restart on the same data dir: the next turn repairs the session and completes over HTTP", async () => {
    // unsandboxed: a sandboxed command dies with its reins (bubblewrap's --die-with-parent), so nothing would be left over;
    // a lease of 1 s: the killed server releases nothing, and the session is free once its lease lapses
    const { n, p, s, id, events } = await sleepingTurn("resumed fine", ["--sandbox", "off"], { REINS_TEST_RUN_TIMING: "100,1000" })
    s.child.kill("SIGKILL")
    await s.exited
    await events.close()
    await waitFor(() => leaseLapsed(p, id), "the killed server's lease to lapse")
    // the dead server's command is still running, and its part says so
    expect(sleeping(n)).toBe(2)
    const restarted = await serve(p, ["--yolo"])
    expect((await partsOf(restarted.url, id)).find((x) => x.type === "tool").state.status).toBe("running")
    const turn = await api(restarted.url, "POST", `/session/${id}/message`, { text: "carry on" })
    expect(turn).toMatchObject({ status: 200, body: { sessionID: id, text: "resumed fine" } })
    const parts = await partsOf(restarted.url, id)
    expect(parts.filter((x) => x.type === "tool" && (x.state.status === "pending" || x.state.status === "running"))).toEqual([])
    expect(parts.find((x) => x.type === "tool").state).toMatchObject({ status: "error", interrupted: true })
    await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
  })
})
