// `reins serve` end to end: real HTTP (fetch) against the built CLI and the scripted model server.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, lastToolResult, projects, reins, waitFor } from "./support.ts"
import { auth, servers, api, marker, openEvents, sleeping } from "./serve-support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

const toolStates = (frames: ReadonlyArray<{ event: string; data: any }>) =>
  frames.filter((f) => f.event === "part.updated" && f.data.part.type === "tool").map((f) => f.data.part.state.status as string)

describe("reins serve", () => {
  test("create, an async prompt, and the turn's events in order on /event, ending with turn.finished", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo served" } }] }, { text: "all done" }])
    const s = await serve(p, ["--yolo"])
    expect((await api(s.url, "GET", "/health")).body).toEqual({
      ok: true,
      version: expect.any(String),
      directory: p.cwd,
      events: { clients: 0, lastEventId: 0 }
    })
    const created = await api(s.url, "POST", "/session", { title: "over http" })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect(created.body).toMatchObject({ title: "over http", directory: p.cwd })
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    expect(events.response.headers.get("content-type")).toContain("text/event-stream")
    await events.waitFor((f) => f.event === "server.connected")
    const accepted = await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "run echo" })
    expect(accepted).toEqual({ status: 202, body: { sessionID: id, queued: false } })
    const finished = await events.waitFor((f) => f.event === "turn.finished")
    expect(finished.data.result).toMatchObject({ sessionID: id, steps: 2, text: "all done" })
    const turn = events.frames.filter((f) => f.id !== undefined)
    // the finished frame is the last of the turn's, ids increase, and every frame is this session's
    expect(turn.at(-1)!.event).toBe("turn.finished")
    for (let i = 1; i < turn.length; i++) expect(turn[i]!.id!).toBeGreaterThan(turn[i - 1]!.id!)
    expect(turn[0]!.event).toBe("message.updated")
    expect(turn[0]!.data.message).toMatchObject({ role: "user", sessionID: id })
    const states = toolStates(turn)
    expect(states[0]).toBe("pending")
    expect(states.at(-1)).toBe("completed")
    expect(states.indexOf("running")).toBeGreaterThan(0)
    expect(states.indexOf("running")).toBeLessThan(states.indexOf("completed"))
    expect(turn.findIndex((f) => f.event === "session.status" && f.data.status === "idle")).toBeLessThan(turn.length - 1)
    // the answer's text streams as deltas before it ends
    expect(turn.some((f) => f.event === "part.delta")).toBe(true)
    expect((await api(s.url, "GET", "/health")).body.events).toEqual({ clients: 1, lastEventId: finished.id })
    await events.close()
    // a client that went away is forgotten
    await waitFor(async () => (await api(s.url, "GET", "/health")).body.events.clients === 0, "the server to forget the client")
    // the stored session, as the CLI exports it
    const messages = await api(s.url, "GET", `/session/${id}/message`)
    expect(messages.status).toBe(200)
    expect(messages.body.map((m: any) => m.info.role)).toEqual(["user", "assistant", "assistant"])
    const exported = await api(s.url, "GET", `/session/${id}/export`)
    expect(exported.body).toEqual(JSON.parse((await reins(["sessions", "export", id], p)).stdout))
    const got = await api(s.url, "GET", `/session/${id}`)
    expect(got.body).toMatchObject({ id, totals: { messages: 3, steps: 2 } })
    const listed = await api(s.url, "GET", "/session?limit=1")
    expect(listed.body.map((x: any) => x.id)).toEqual([id])
  })

  test("a synchronous prompt answers with the turn's result; fork copies the history up to a message", async () => {
    const p = await setup([{ text: "first answer" }, { text: "second answer" }])
    const s = await serve(p)
    // no body at all: a session with the defaults
    const bare = await fetch(`${s.url}/session`, { method: "POST", headers: auth(s) })
    expect(bare.status).toBe(201)
    const id = ((await bare.json()) as { id: string }).id
    const turn = await api(s.url, "POST", `/session/${id}/message`, { text: "hello" })
    expect(turn.status).toBe(200)
    expect(turn.body).toMatchObject({ sessionID: id, steps: 1, text: "first answer", assistant: { role: "assistant", sessionID: id } })
    const history = (await api(s.url, "GET", `/session/${id}/message`)).body
    const forked = await api(s.url, "POST", `/session/${id}/fork`, { messageID: history[0].info.id })
    expect(forked.status).toBe(201)
    const copy = (await api(s.url, "GET", `/session/${forked.body.id}/message`)).body
    expect(copy).toHaveLength(1)
    expect(copy[0].info).toMatchObject({ role: "user", sessionID: forked.body.id })
    expect(copy[0].parts[0]).toMatchObject({ type: "text", text: "hello", sessionID: forked.body.id, messageID: copy[0].info.id })
    expect((await api(s.url, "POST", `/session/${id}/fork`, { messageID: "msg_nope" })).status).toBe(404)
    // GET /session lists the server's project only: a session of another directory on the same data dir is not there
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-e2e-")))
    expect((await reins(["run", "in another project"], { ...p, cwd: elsewhere })).code).toBe(0)
    const listed = (await api(s.url, "GET", "/session")).body.map((x: any) => x.directory)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.every((d: string) => d === p.cwd)).toBe(true)
    // one turn: nothing older than the turns kept verbatim
    const nothing = await api(s.url, "POST", `/session/${id}/summarize`, {})
    expect(nothing).toMatchObject({ status: 400, body: { error: "bad_request", message: expect.stringContaining("Nothing to summarise") } })
    expect((await api(s.url, "DELETE", `/session/${forked.body.id}`)).status).toBe(204)
    expect((await api(s.url, "GET", `/session/${forked.body.id}`)).status).toBe(404)
  })

  test("summarize compacts an idle session's older turns with the model's summary", async () => {
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo OLD-OUTPUT" } }] },
      { text: "ok one" },
      { text: "ok two" },
      { text: "ok three" },
      { text: "## Objective\nSUMMARY-MARKER" }
    ])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    for (const text of ["first", "second", "third"]) expect((await api(s.url, "POST", `/session/${id}/message`, { text })).status).toBe(200)
    const compacted = await api(s.url, "POST", `/session/${id}/summarize`, {})
    expect(compacted.status).toBe(200)
    const { summaryMessageID, summary, summarised } = compacted.body
    expect(summary).toContain("SUMMARY-MARKER")
    expect(summarised.length).toBeGreaterThan(0)
    const stored = (await api(s.url, "GET", `/session/${id}/message`)).body.find((m: any) => m.info.id === summaryMessageID)
    expect(stored.info.summary).toMatchObject({ auto: false })
    // a fork's summary names the fork's own messages
    const fork = (await api(s.url, "POST", `/session/${id}/fork`)).body.id
    const copied = (await api(s.url, "GET", `/session/${fork}/message`)).body
    const copiedIDs = new Set(copied.map((m: any) => m.info.id))
    const copiedSummary = copied.find((m: any) => m.info.summary !== undefined).info.summary
    expect(copiedSummary.summarised.length).toBe(summarised.length)
    for (const messageID of [...copiedSummary.summarised, ...(copiedSummary.tailStart ? [copiedSummary.tailStart] : [])])
      expect(copiedIDs.has(messageID)).toBe(true)
  })

  test("abort during a running command: its process group is killed and the part is error + interrupted", async () => {
    const n = marker()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] }, { text: "never asked" }])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "sleep" })
    await events.waitFor(
      (f) =>
        f.event === "part.updated" && f.data.part.type === "tool" && f.data.part.state.status === "running" && f.data.part.state.metadata?.process !== undefined
    )
    await waitFor(() => sleeping(n) === 2, "both sleeps to run")
    expect(await api(s.url, "POST", `/session/${id}/abort`)).toEqual({ status: 200, body: { aborted: true } })
    const failed = await events.waitFor((f) => f.event === "turn.failed")
    expect(failed.data).toMatchObject({ sessionID: id, error: { tag: "Interrupted" } })
    await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
    const tool = (await api(s.url, "GET", `/session/${id}/message`)).body.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
    expect(tool.state).toMatchObject({ status: "error", interrupted: true })
    expect(await api(s.url, "POST", `/session/${id}/abort`)).toEqual({ status: 200, body: { aborted: false } })
    expect(p.server.requests).toHaveLength(1)
    await events.close()
  })

  test("a permission question answered over HTTP: once runs the call; reject's message reaches the model", async () => {
    const p = await setup(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "echo approved" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "echo refused" } }] },
        { text: "ok" }
      ],
      { permission: { bash: "ask" } }
    )
    const s = await serve(p)
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "go" })
    const first = await events.waitFor((f) => f.event === "permission.asked")
    expect(first.data).toMatchObject({ sessionID: id, permission: "bash", patterns: ["echo approved"] })
    expect(await api(s.url, "POST", `/session/${id}/permissions/${first.data.id}`, { response: "once" })).toEqual({ status: 200, body: { ok: true } })
    // answered: no longer waiting
    expect((await api(s.url, "POST", `/session/${id}/permissions/${first.data.id}`, { response: "once" })).status).toBe(404)
    const second = await events.waitFor((f) => f.event === "permission.asked" && f.data.id !== first.data.id)
    expect(await api(s.url, "POST", `/session/${id}/permissions/${second.data.id}`, { response: "reject", message: "use printf instead" })).toEqual({
      status: 200,
      body: { ok: true }
    })
    await events.waitFor((f) => f.event === "turn.finished")
    const tools = (await api(s.url, "GET", `/session/${id}/message`)).body.flatMap((m: any) => m.parts).filter((x: any) => x.type === "tool")
    expect(tools[0].state).toMatchObject({ status: "completed" })
    expect(tools[0].state.output).toContain("approved")
    expect(tools[1].state.status).toBe("error")
    expect(lastToolResult(p.server.requests)).toContain("use printf instead")
    expect(events.frames.filter((f) => f.event === "permission.replied").map((f) => [f.data.reply, f.data.by])).toEqual([
      ["once", "user"],
      ["reject", "user"]
    ])
    await events.close()
  })

  test("an edit's permission.asked event carries the diff it asks about, and the question list has it too", async () => {
    const p = await setup([{ toolCalls: [{ name: "write", arguments: { filePath: "conf.ini", content: "mode=fast\n" } }] }, { text: "written" }], {
      permission: { edit: "ask" }
    })
    fs.writeFileSync(path.join(p.cwd, "conf.ini"), "mode=slow\n")
    const s = await serve(p)
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "write" })
    const asked = await events.waitFor((f) => f.event === "permission.asked")
    const file = path.join(fs.realpathSync(p.cwd), "conf.ini")
    expect(asked.data.diffs).toEqual([{ path: file, diff: expect.stringContaining("-mode=slow\n+mode=fast") }])
    const listed = (await api(s.url, "GET", `/session/${id}/permissions`)).body
    expect(listed).toEqual([expect.objectContaining({ id: asked.data.id, diffs: asked.data.diffs })])
    await api(s.url, "POST", `/session/${id}/permissions/${asked.data.id}`, { response: "once" })
    await events.waitFor((f) => f.event === "turn.finished" || f.event === "session.idle")
    expect(fs.readFileSync(file, "utf8")).toBe("mode=fast\n")
    await events.close()
  })

  test("abort while a permission question waits: the question is withdrawn (a late reply is 404), the call never runs, the session takes the next prompt", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo never-ran" } }] }, { text: "next turn" }], { permission: { bash: "ask" } })
    const s = await serve(p)
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${id}` })
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "ask" })
    const asked = await events.waitFor((f) => f.event === "permission.asked")
    expect(await api(s.url, "POST", `/session/${id}/abort`)).toEqual({ status: 200, body: { aborted: true } })
    await events.waitFor((f) => f.event === "turn.failed")
    const late = await api(s.url, "POST", `/session/${id}/permissions/${asked.data.id}`, { response: "once" })
    expect(late).toMatchObject({ status: 404, body: { error: "not_found", message: expect.stringContaining("turn ended") } })
    const tool = (await api(s.url, "GET", `/session/${id}/message`)).body.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
    expect(tool.state.status).toBe("error")
    expect(JSON.stringify(tool.state)).not.toContain("never-ran\\n")
    expect((await api(s.url, "POST", `/session/${id}/message`, { text: "go on" })).body.text).toBe("next turn")
    await events.close()
  })

  test("a sub-agent's permission question is answered through the session that started it (and not through another)", async () => {
    const p = await setup(
      [
        { toolCalls: [{ name: "task", arguments: { description: "run it", prompt: "run the command", subagent_type: "general" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "echo from-the-child" } }] },
        { text: "child done" },
        { text: "parent done" }
      ],
      { permission: { bash: "ask" } }
    )
    const s = await serve(p)
    const parent = (await api(s.url, "POST", "/session", {})).body.id
    const other = (await api(s.url, "POST", "/session", {})).body.id
    const events = await openEvents(s.url, { query: `?sessionID=${parent}` })
    await api(s.url, "POST", `/session/${parent}/prompt_async`, { text: "delegate" })
    const asked = await events.waitFor((f) => f.event === "permission.asked")
    expect(asked.data.sessionID).not.toBe(parent)
    expect((await api(s.url, "POST", `/session/${other}/permissions/${asked.data.id}`, { response: "once" })).status).toBe(404)
    expect(await api(s.url, "POST", `/session/${parent}/permissions/${asked.data.id}`, { response: "once" })).toEqual({ status: 200, body: { ok: true } })
    const finished = await events.waitFor((f) => f.event === "turn.finished")
    expect(finished.data.result.text).toBe("parent done")
    const child = (await api(s.url, "GET", `/session/${asked.data.sessionID}/message`)).body.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
    expect(child.state.output).toContain("from-the-child")
    await events.close()
  })

  test("a client that reconnects with Last-Event-ID loses nothing; an id older than the buffer gets server.gap", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo one" } }] }, { text: "the end of the turn" }])
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const first = await openEvents(s.url)
    await first.waitFor((f) => f.event === "server.connected")
    await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "go" })
    // goes away mid-turn, after the user's message
    await first.waitFor((f) => f.event === "part.updated" && f.data.part.type === "tool")
    await first.close()
    const seen = first.frames.filter((f) => f.id !== undefined)
    const lastSeen = seen.at(-1)!.id!
    // the turn ends while nobody listens
    await waitFor(async () => (await api(s.url, "GET", `/session/${id}/message`)).body.length === 3, "the turn to end")
    const again = await openEvents(s.url, { headers: { "Last-Event-ID": String(lastSeen) } })
    await again.waitFor((f) => f.event === "turn.finished")
    expect(again.frames[0]).toMatchObject({ event: "server.connected" })
    expect(again.frames.some((f) => f.event === "server.gap")).toBe(false)
    const ids = [...seen, ...again.frames.filter((f) => f.id !== undefined)].map((f) => f.id!)
    // every id from the first to the last, once each: nothing lost, nothing twice
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0]! + i))
    await again.close()
    // the query form, and an id this server never gave
    const gap = await openEvents(s.url, { query: "?lastEventId=99999999" })
    const told = await gap.waitFor((f) => f.event === "server.gap")
    expect(told.data).toEqual({ type: "server.gap", from: 99999999, oldest: 1 })
    await gap.close()
  })

  test("bad input: malformed JSON and a wrong field get 400 naming it, an oversized body 413, an unknown session 404", async () => {
    const p = await setup([])
    const s = await serve(p, ["--max-body", "2000"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const malformed = await api(s.url, "POST", `/session/${id}/prompt_async`, '{"text": ')
    expect(malformed.status).toBe(400)
    expect(malformed.body).toMatchObject({ error: "bad_request", message: expect.stringContaining("JSON") })
    const form = await fetch(`${s.url}/session/${id}/prompt_async`, {
      method: "POST",
      body: "text=hi",
      headers: { "content-type": "application/x-www-form-urlencoded", ...auth(s) }
    })
    expect(form.status).toBe(415)
    expect(await form.json()).toMatchObject({ error: "unsupported_media_type", message: expect.stringContaining("application/json") })
    const missing = await api(s.url, "POST", `/session/${id}/prompt_async`, { txt: "hi" })
    expect(missing.status).toBe(400)
    expect(missing.body.message).toContain("text")
    const wrongType = await api(s.url, "POST", `/session/${id}/message`, { text: 42 })
    expect(wrongType.status).toBe(400)
    expect(wrongType.body.message).toContain("text")
    const reply = await api(s.url, "POST", `/session/${id}/permissions/per_x`, { response: "maybe" })
    expect(reply.status).toBe(400)
    expect(reply.body.message).toContain("response")
    const big = await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "x".repeat(5000) })
    expect(big.status).toBe(413)
    expect(big.body).toMatchObject({ error: "too_large", message: expect.stringContaining("2000") })
    // a body sent in chunks, with no content-length, is cut at the limit too
    const chunked = await fetch(`${s.url}/session/${id}/prompt_async`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth(s) },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"text": "${"y".repeat(1500)}`))
          controller.enqueue(new TextEncoder().encode(`${"y".repeat(1500)}"}`))
          controller.close()
        }
      })
    })
    expect(chunked.status).toBe(413)
    expect(((await chunked.json()) as { error: string }).error).toBe("too_large")
    const unknown = await api(s.url, "POST", "/session/ses_nope/prompt_async", { text: "hi" })
    expect(unknown).toMatchObject({ status: 404, body: { error: "not_found" } })
    expect((await api(s.url, "POST", `/session/${id}/permissions/per_nope`, { response: "once" })).status).toBe(404)
    expect((await api(s.url, "GET", "/no/such/route")).status).toBe(404)
    const badModel = await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "hi", model: "nonsense" })
    expect(badModel).toMatchObject({ status: 400, body: { error: "bad_request", message: expect.stringContaining("provider") } })
    // nothing of the refused prompts was stored
    expect((await api(s.url, "GET", `/session/${id}/message`)).body).toEqual([])
  })

  test("a token-protected server: no token and a wrong one get 401 on every route incl. /event and /doc; the right one passes", async () => {
    const p = await setup([])
    const s = await serve(p, [], { REINS_SERVER_TOKEN: "s3cret-token" })
    for (const route of ["/health", "/doc", "/session", "/event", "/config"]) {
      const none = await fetch(`${s.url}${route}`)
      expect(none.status).toBe(401)
      expect(await none.json()).toMatchObject({ error: "unauthorized", message: expect.stringContaining("Bearer") })
      const wrong = await fetch(`${s.url}${route}`, { headers: { authorization: "Bearer s3cret-tokem" } })
      expect(wrong.status).toBe(401)
    }
    expect((await fetch(`${s.url}/session`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).toBe(401)
    // what a token is not, and the forms of the right one that pass
    const variants: ReadonlyArray<readonly [string, number]> = [
      ["Bearer s3cret-token-and-more", 401],
      ["Bearer s3cret-toke", 401],
      ["Bearer S3CRET-TOKEN", 401],
      ["Basic s3cret-token", 401],
      ["s3cret-token", 401],
      ["Bearer ", 401],
      ["Bearer s3cret-token s3cret-token", 401],
      ["Bearer s3cret-token", 200],
      ["bearer s3cret-token", 200],
      ["Bearer   s3cret-token  ", 200]
    ]
    for (const [authorization, status] of variants) {
      expect([authorization, (await fetch(`${s.url}/session`, { headers: { authorization } })).status]).toEqual([authorization, status])
    }
    expect((await api(s.url, "GET", "/health", undefined, { authorization: "Bearer s3cret-token" })).status).toBe(200)
    const events = await openEvents(s.url, { headers: { authorization: "Bearer s3cret-token" } })
    expect(events.response.status).toBe(200)
    await events.waitFor((f) => f.event === "server.connected")
    await events.close()
    // an EventSource cannot set headers: ?token= on /event only
    const byQuery = await openEvents(s.url, { query: "?token=s3cret-token" })
    expect(byQuery.response.status).toBe(200)
    await byQuery.close()
    expect((await fetch(`${s.url}/session?token=s3cret-token`)).status).toBe(401)
  })

  test("CORS is off unless origins are given; a preflight from an allowed origin passes before the token check", async () => {
    const p = await setup([])
    const closed = await serve(p)
    // without --cors a web page gets no CORS headers (and without the token, 401: serve-security.test.ts)
    const plain = await fetch(`${closed.url}/health`, { headers: { origin: "http://app.example" } })
    expect(plain.status).toBe(401)
    expect(plain.headers.get("access-control-allow-origin")).toBeNull()
    const open = await serve(p, ["--cors", "http://app.example", "--token", "tok"])
    const preflight = await fetch(`${open.url}/session`, {
      method: "OPTIONS",
      headers: { origin: "http://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" }
    })
    expect(preflight.status).toBeLessThan(300)
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://app.example")
    const allowed = await fetch(`${open.url}/health`, { headers: { origin: "http://app.example", authorization: "Bearer tok" } })
    expect(allowed.status).toBe(200)
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://app.example")
    const other = await fetch(`${open.url}/health`, { headers: { origin: "http://evil.example", authorization: "Bearer tok" } })
    expect(other.headers.get("access-control-allow-origin")).toBeNull()
  })

  test("a non-loopback address without --token serves with a token of its own (401 without it); a token no client could send is refused (exit 2)", async () => {
    const p = await setup([])
    const s = await serve(p, ["--hostname", "0.0.0.0"])
    expect((await fetch(`${s.url}/session`)).status).toBe(401)
    expect((await fetch(`${s.url}/session`, { headers: auth(s) })).status).toBe(200)
    await s.stop()
    for (const [args, env] of [
      [["--token", ""], {}],
      [["--token", " "], {}],
      [["--token", "two words"], {}],
      [[], { REINS_SERVER_TOKEN: "  " }]
    ] as const) {
      const bad = await reins(["serve", "--hostname", "0.0.0.0", "--port", "0", ...args], { ...p, env: { ...p.env, ...env } })
      expect([args, env, bad.code]).toEqual([args, env, 2])
      expect(bad.stderr).toContain("without spaces")
    }
  })

  test("an address it cannot listen on is one line saying why and what to pass (exit 2): a port in use, an address not this machine's", async () => {
    const p = await setup([])
    const s = await serve(p)
    const port = new URL(s.url).port
    const inUse = await reins(["serve", "--port", port], p)
    expect(inUse.code).toBe(2)
    expect(inUse.stderr.trim().split("\n")).toEqual([expect.stringMatching(new RegExp(`port ${port} is in use.*--port 0`))])
    const foreign = await reins(["serve", "--port", "0", "--hostname", "10.255.255.1", "--token", "t"], p)
    expect(foreign.code).toBe(2)
    expect(foreign.stderr.trim().split("\n")).toEqual([expect.stringMatching(/10\.255\.255\.1 is not an address of this machine.*--hostname/)])
  })

  test("GET /doc is an OpenAPI 3.1 document listing every route; /config redacts secrets; /models lists the catalogue", async () => {
    const p = await setup([], {
      provider: {
        local: {
          type: "openai-compatible",
          baseURL: "http://127.0.0.1:9/v1",
          apiKey: "sk-very-secret",
          headers: { "x-key": "hidden" },
          models: { scripted: { context: 32000, output: 4000 } }
        }
      },
      // the secrets a command line or a URL carries
      mcp: {
        tools: {
          type: "local",
          command: [
            "bunx",
            "srv",
            "--api-key",
            "arg-secret-1",
            "--token=arg-secret-2",
            "-p",
            "4000",
            "--verbose",
            "https://u:arg-secret-3@x.example/a?key=arg-secret-4"
          ],
          env: { A: "env-secret" },
          enabled: false
        },
        remote: { type: "remote", url: "https://user:url-secret-1@mcp.example/sse?api_key=url-secret-2&region=eu&access_token=url-secret-3", enabled: false }
      }
    })
    const s = await serve(p)
    const doc = await api(s.url, "GET", "/doc")
    expect(doc.body.openapi).toMatch(/^3\.1/)
    expect(doc.body.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer" })
    expect(doc.body.security).toEqual([{ bearer: [] }])
    expect(doc.body.paths["/session/{id}/prompt_async"].post.requestBody.content["application/json"]).toBeDefined()
    const routes = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)
    )
    expect(routes.sort()).toEqual(
      [
        "GET /health",
        "GET /doc",
        "GET /config",
        "GET /models",
        "GET /event",
        "GET /session",
        "POST /session",
        "GET /session/{id}",
        "DELETE /session/{id}",
        "POST /session/{id}/fork",
        "GET /session/{id}/message",
        "GET /session/{id}/permissions",
        "POST /session/{id}/message",
        "GET /session/{id}/export",
        "POST /session/{id}/prompt_async",
        "POST /session/{id}/abort",
        "POST /session/{id}/permissions/{permissionID}",
        "POST /session/{id}/summarize",
        "POST /session/{id}/revert",
        "POST /session/{id}/unrevert"
      ].sort()
    )
    const config = await api(s.url, "GET", "/config")
    expect(config.body.provider.local).toMatchObject({ apiKey: "***", headers: { "x-key": "***" }, baseURL: "http://127.0.0.1:9/v1" })
    expect(JSON.stringify(config.body)).not.toContain("sk-very-secret")
    expect(JSON.stringify(config.body)).not.toMatch(/secret-|env-secret/)
    expect(config.body.mcp.tools.command).toEqual([
      "bunx",
      "srv",
      "--api-key",
      "***",
      "--token=***",
      "-p",
      "4000",
      "--verbose",
      "https://***:***@x.example/a?key=***"
    ])
    expect(config.body.mcp.remote.url).toBe("https://***:***@mcp.example/sse?api_key=***&region=eu&access_token=***")
    const models = await api(s.url, "GET", "/models")
    expect(models.body).toEqual(JSON.parse((await reins(["models", "--format", "json"], p)).stdout))
  })
})
