// `reins run --attach URL`: a turn run by a `reins serve` (the built CLI, on a free port) and printed by the attached
// client as a local `reins run` prints it; its errors (no server, no token, a failed turn, a server gone), Ctrl+C
// aborting the turn on the server, and permission questions answered from a terminal or left to the server's policy.
import { beforeAll, describe, expect, test } from "bun:test"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import { spawnPty } from "./pty/index.ts"
import { api, endSleeping, marker, servers, sleeping } from "./serve-support.ts"
import { BIN, ensureBuilt, events, projects, reins, waitFor } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

const toolResults = (body: any) => (body.messages as Array<{ role: string }>).filter((m) => m.role === "tool").length
/** A model that answers by the request, so every run (local or attached) gets the same turn: one command, then the answer. */
const oneCommand =
  (command: string, answer: string) =>
  (body: any): ScriptedStep =>
    toolResults(body) === 0 ? { toolCalls: [{ name: "bash", arguments: { command } }] } : { text: answer }

const respondingProject = async (respond: (body: any) => ScriptedStep, extraConfig: Record<string, unknown> = {}) => {
  const p = await setup([], extraConfig)
  // the project's own scripted server answers by the request from now on
  const model = await startScriptedServer([], { respond })
  const config = JSON.parse(await Bun.file(p.configFile!).text())
  config.provider.local.baseURL = model.url
  await Bun.write(p.configFile!, JSON.stringify(config))
  return { ...p, server: model, stopModel: () => model.stop() }
}

/** stderr with what differs between two runs of the same turn (session ids, durations) blanked. */
const normalized = (s: string) => s.replace(/ses_\w+/g, "ses_X").replace(/\d+(\.\d+)?(ms|s)\b/g, "T")

/** `reins run --attach URL hello` as a child process: its exit code, and its stderr so far. */
const spawnAttached = (url: string, p: { cwd: string; env: Record<string, string | undefined> }) => {
  const child = spawn(BIN, ["run", "--attach", url, "hello"], { cwd: p.cwd, env: p.env, stdio: ["pipe", "pipe", "pipe"] })
  child.stdin.end()
  let stderr = ""
  child.stderr.on("data", (b) => (stderr += b))
  const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)))
  return { child, exited, stderr: () => stderr }
}

describe("reins run --attach", () => {
  test("text: the answer on stdout, tool lines and the closing line on stderr, as a local run prints them", async () => {
    const p = await respondingProject(oneCommand("echo attached-out", "the answer over http"))
    const s = await serve(p, ["--yolo"])
    const attached = await reins(["run", "--attach", s.url, "say it"], p)
    expect(attached.stderr).toMatch(/bash echo attached-out · exit 0/)
    expect(attached.stdout).toBe("the answer over http\n")
    expect(attached.code).toBe(0)
    const local = await reins(["run", "--yolo", "say it"], p)
    expect(local.code).toBe(0)
    expect(attached.stdout).toBe(local.stdout)
    expect(normalized(attached.stderr)).toBe(normalized(local.stderr))
    // the turn ran on the server: its session holds the message and the answer
    const id = /session (ses_\w+)/.exec(attached.stderr)![1]!
    const messages = (await api(s.url, "GET", `/session/${id}/message`)).body as Array<any>
    expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant", "assistant"])
    expect(messages[0].parts.find((x: any) => x.type === "text").text).toBe("say it")
    await p.stopModel()
  })

  test("json: one event per line, the same events a local run prints; --continue and --session go on with the server's session", async () => {
    const p = await respondingProject(oneCommand("echo json-out", "json answer"))
    const s = await serve(p, ["--yolo"])
    const attached = await reins(["run", "--attach", s.url, "--format", "json", "first"], p)
    expect(attached.code).toBe(0)
    const got = events(attached.stdout)
    expect(got[0]!.type).toBe("session.created")
    // the server's own frames stay out; the last line is the run's turn.result, as a local run's
    expect(got.every((e) => !e.type.startsWith("server.") && (!e.type.startsWith("turn.") || e.type === "turn.result"))).toBe(true)
    expect(got.at(-1)).toMatchObject({ type: "turn.result", status: "ok", exitCode: 0, text: "json answer", sessionID: got[0]!.session.id })
    expect(
      got.some(
        (e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed" && String(e.part.state.output).includes("json-out")
      )
    ).toBe(true)
    const local = events((await reins(["run", "--yolo", "--format", "json", "first"], p)).stdout)
    // deltas are joined by time, so they are compared as the text they make; so are a running tool's
    // progress updates (bash reports its output while it runs, as often as time allows): one per state
    const shape = (es: Array<any>) =>
      es
        .filter((e) => e.type !== "part.delta")
        .map((e) => (e.type === "part.updated" ? `${e.type}:${e.part.type}:${e.part.state?.status ?? ""}` : e.type))
        .filter((s, i, all) => !(s === "part.updated:tool:running" && all[i - 1] === s))
    const text = (es: Array<any>) =>
      es
        .filter((e) => e.type === "part.delta")
        .map((e) => e.delta)
        .join("")
    expect(shape(got)).toEqual(shape(local))
    expect(text(got)).toBe("json answer")
    const id = got[0]!.session.id as string

    // the store now holds two sessions: the attached run's and, newer, the local run's
    const before = (await api(s.url, "GET", "/session")).body as Array<any>
    expect(before.length).toBe(2)
    const continued = await reins(["run", "--attach", s.url, "-c", "second"], p)
    expect(continued.code).toBe(0)
    const again = await reins(["run", "--attach", s.url, "--session", id, "third"], p)
    expect(again.code).toBe(0)
    const userTexts = async (session: string) =>
      ((await api(s.url, "GET", `/session/${session}/message`)).body as Array<any>)
        .filter((m) => m.info.role === "user")
        .map((m) => m.parts.find((x: any) => x.type === "text").text)
    expect(await userTexts(before[0].id)).toEqual(["first", "second"])
    expect(await userTexts(id)).toEqual(["first", "third"])
    // and the model was sent the session's history with the new message
    const lastUsers = (p.server.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === "user")
      .map((m) => JSON.stringify(m.content))
    expect(lastUsers[0]).toContain("first")
    expect(lastUsers.at(-1)).toContain("third")
    const sessions = (await api(s.url, "GET", "/session")).body as Array<any>
    expect(sessions.length).toBe(2)
    await p.stopModel()
  })

  test("errors: no server, a token it wants, a bad URL, an unknown session, local-only flags — each one line saying what to do", async () => {
    const p = await respondingProject(oneCommand("echo ok", "fine"))
    const s = await serve(p, ["--yolo", "--token", "s3cret"])
    // a port nobody listens on (taken after the server's, so it cannot be the server's)
    const closed = Bun.serve({ port: 0, fetch: () => new Response("") })
    const nobody = `http://127.0.0.1:${closed.port}`
    await closed.stop(true)
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-other-user-")))
    const cases: Array<{ args: Array<string>; env?: Record<string, string>; code: number; says: RegExp }> = [
      {
        args: ["--attach", nobody],
        code: 1,
        says: new RegExp(`cannot reach a reins server at ${nobody} \\(connection refused\\): start one with \`reins serve\``)
      },
      // another user: its data dir holds no token of this server
      {
        args: ["--attach", s.url],
        env: { REINS_DATA_DIR: elsewhere },
        code: 2,
        says: /wants a token, and none of yours was found for it: pass --token TOKEN or set REINS_SERVER_TOKEN/
      },
      { args: ["--attach", s.url, "--token", "wrong"], code: 2, says: /refused the token/ },
      { args: ["--attach", s.url], env: { REINS_SERVER_TOKEN: "wrong" }, code: 2, says: /refused the token/ },
      { args: ["--attach", "localhost:4096"], code: 2, says: /--attach wants the URL of a reins server, like http:\/\/127\.0\.0\.1:4096/ },
      { args: ["--attach", s.url, "--token", "s3cret", "--session", "ses_nosuch"], code: 2, says: /ses_nosuch/ },
      { args: ["--attach", s.url, "--token", "s3cret", "--yolo"], code: 2, says: /--yolo cannot go with --attach/ },
      { args: ["--attach", s.url, "--token", "s3cret", "--agent", "nosuch"], code: 2, says: /nosuch/ }
    ]
    // the cases are independent processes: run side by side, so that on a busy machine the test does not last
    // as long as all of them one after the other
    const runs = await Promise.all(cases.map((c) => reins(["run", ...c.args, "hello"], { ...p, env: { ...p.env, ...c.env } })))
    for (const [i, c] of cases.entries()) {
      const r = runs[i]!
      // the exit first: a run that was killed (it printed nothing) says so
      expect({ args: c.args, code: r.code, signal: r.signal, stdout: r.stdout, lines: r.stderr.trim().split("\n").length }).toEqual({
        args: c.args,
        code: c.code,
        signal: null,
        stdout: "",
        lines: 1
      })
      expect(r.stderr).toMatch(c.says)
    }
    // the right token, by flag or from the environment
    const byFlag = await reins(["run", "--attach", s.url, "--token", "s3cret", "hello"], p)
    expect({ code: byFlag.code, stdout: byFlag.stdout }).toEqual({ code: 0, stdout: "fine\n" })
    const byEnv = await reins(["run", "--attach", s.url, "hello"], { ...p, env: { ...p.env, REINS_SERVER_TOKEN: "s3cret" } })
    expect({ code: byEnv.code, stdout: byEnv.stdout }).toEqual({ code: 0, stdout: "fine\n" })
    // or from the record the server left in this user's data dir
    const byFile = await reins(["run", "--attach", s.url, "hello"], p)
    expect({ code: byFile.code, stdout: byFile.stdout }).toEqual({ code: 0, stdout: "fine\n" })
    await p.stopModel()
  })

  test("a turn that fails on the server ends the attached run with its reason, exit 1", async () => {
    const p = await respondingProject(() => ({ error: { status: 400, message: "the model refused this request", type: "invalid_request_error" } }))
    const s = await serve(p, ["--yolo"])
    const r = await reins(["run", "--attach", s.url, "hello"], p)
    expect(r.stderr).toContain("the model refused this request")
    expect(r.code).toBe(1)
    await p.stopModel()
  })

  test("a server that dies mid-turn: the run says the stream closed before the turn ended, exit 1", async () => {
    // a sleep of hours: the turn is mid-way for as long as the test needs, however slow the machine
    const n = marker()
    const p = await respondingProject(oneCommand(`sleep ${n}`, "never"))
    const s = await serve(p, ["--yolo"])
    const { exited, stderr } = spawnAttached(s.url, p)
    await waitFor(() => sleeping(n) === 1, "the turn's command to run")
    s.child.kill("SIGKILL")
    expect(await exited).toBe(1)
    expect(stderr()).toMatch(
      new RegExp(
        `the server at ${s.url} closed the event stream before the turn ended \\((the connection was closed; )?did it stop\\?\\); the session is ses_\\w+`
      )
    )
    // nothing stops the dead server's command: the test does
    endSleeping(n)
    await waitFor(() => sleeping(n) === 0, "the command to end")
    await p.stopModel()
  })

  test("a message for a session whose turn is running on the server is queued into that turn", async () => {
    // the turn's command runs until the test ends it, once the message is in
    const n = marker()
    const p = await respondingProject((body) =>
      toolResults(body) === 0
        ? { toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}` } }] }
        : { text: `saw ${JSON.stringify(body.messages).includes("also this") ? "the queued message" : "nothing"}` }
    )
    const s = await serve(p, ["--yolo"])
    const id = (await api(s.url, "POST", "/session", {})).body.id as string
    expect((await api(s.url, "POST", `/session/${id}/prompt_async`, { text: "start" })).status).toBe(202)
    await waitFor(() => sleeping(n) === 1, "the turn's command to run")
    const r = await reins(["run", "--attach", s.url, "--session", id, "--format", "json", "also this"], p)
    expect(r.code).toBe(0)
    expect(events(r.stdout).at(-2)).toMatchObject({ type: "message.queued", sessionID: id })
    expect(events(r.stdout).at(-1)).toMatchObject({ type: "turn.result", status: "queued", exitCode: 0, sessionID: id })
    expect(sleeping(n)).toBe(1)
    // the message is in: the command ends, and the running turn reads it at its next step
    endSleeping(n)
    await waitFor(
      async () =>
        ((await api(s.url, "GET", `/session/${id}/message`)).body as Array<any>).some((m) => m.parts.some((x: any) => x.text === "saw the queued message")),
      "the turn's answer to the queued message"
    )
    await p.stopModel()
  })

  test("Ctrl+C aborts the turn on the server: its command stopped, its part interrupted, exit 130", async () => {
    // a sleep of hours: only the abort ends it
    const n = marker()
    const p = await respondingProject(oneCommand(`sleep ${n}`, "never"))
    const s = await serve(p, ["--yolo"])
    const { child, exited, stderr } = spawnAttached(s.url, p)
    await waitFor(() => sleeping(n) === 1, "the turn's command to run")
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(stderr()).toMatch(/interrupted after/)
    expect(stderr()).toMatch(new RegExp(`Continue with: reins run --attach ${s.url} --session ses_\\w+`))
    expect(sleeping(n)).toBe(0)
    const id = /--session (ses_\w+)/.exec(stderr())![1]!
    const parts = ((await api(s.url, "GET", `/session/${id}/message`)).body as Array<any>).flatMap((m) => m.parts)
    const tool = parts.find((x) => x.type === "tool")
    expect({ status: tool.state.status, interrupted: tool.state.interrupted }).toEqual({ status: "error", interrupted: true })
    // the server is free for the session's next turn
    const next = await api(s.url, "GET", "/health")
    expect(next.status).toBe(200)
    await p.stopModel()
  })
})

describe("reins run --attach: permission questions", () => {
  test("on a terminal the question is asked there and answered over HTTP", async () => {
    const p = await respondingProject(oneCommand("echo asked-and-allowed", "allowed it"), { permission: { bash: "ask" } })
    const s = await serve(p)
    await using pty = spawnPty([BIN, "run", "--attach", s.url, "hello"], { cwd: p.cwd, env: { ...p.env, LANG: "C.UTF-8" } })
    await pty.waitFor("Permission needed: bash")
    expect(pty.screen()).toContain("asks for: echo asked-and-allowed")
    pty.type("o")
    await pty.press("enter")
    expect(await pty.waitExit()).toBe(0)
    expect(pty.screen()).toContain("allowed it")
    const id = /session (ses_\w+)/.exec(pty.screen())![1]!
    const parts = ((await api(s.url, "GET", `/session/${id}/message`)).body as Array<any>).flatMap((m) => m.parts)
    expect(parts.find((x) => x.type === "tool").state.output).toContain("asked-and-allowed")
    await p.stopModel()
  })

  test("without a terminal the question is left to the server's policy (here: deny after permission_timeout)", async () => {
    const p = await respondingProject(oneCommand("echo never-allowed", "denied then"), { permission: { bash: "ask" }, permission_timeout: 1 })
    const s = await serve(p)
    const r = await reins(["run", "--attach", s.url, "--format", "json", "hello"], p)
    expect(r.code).toBe(0)
    const got = events(r.stdout)
    const asked = got.find((e) => e.type === "permission.asked")
    const replied = got.find((e) => e.type === "permission.replied")
    expect(asked).toBeDefined()
    expect({ id: replied?.id, reply: replied?.reply, by: replied?.by }).toEqual({ id: asked!.id, reply: "reject", by: "policy" })
    expect(p.server.requests.length).toBe(2)
    await p.stopModel()
  })
})
