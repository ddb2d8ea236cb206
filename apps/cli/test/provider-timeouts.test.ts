// A provider that hangs or answers with something else than an event stream: reins run ends
// with one clear line (what happened, the key to change) and exit 1, never a runtime's hint.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as net from "node:net"
import type { ScriptedStep } from "@reins/testkit"
import { editConfig, ensureBuilt, projects, reins, waitFor, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const RETRY = { retry: { attempts: 2, initial_delay_ms: 1, max_delay_ms: 5 } }

/** Adds `timeout` to provider `local` in the project's reins.json. */
const withProviderTimeout = (p: Project, timeout: Record<string, number>) => {
  const file = p.configFile!
  const config = JSON.parse(fs.readFileSync(file, "utf8"))
  config.provider.local.timeout = timeout
  fs.writeFileSync(file, JSON.stringify(config))
}

/** A loopback port nothing listens on: bound, then closed. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const lastLine = (stderr: string) => stderr.trimEnd().split("\n").at(-1) ?? ""

/** An OpenAI-compatible server whose answer never ends: text chunks until the client goes away. */
const endlessServer = () =>
  new Promise<{ url: string; close: () => void; sent: () => number; requests: () => number }>((resolve) => {
    let sent = 0
    let requests = 0
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => {
        requests++
        const chunk = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "word ".repeat(2000) } }] })}\n\n`
        const stream = new ReadableStream({
          pull(controller) {
            sent += chunk.length
            controller.enqueue(new TextEncoder().encode(chunk))
          }
        })
        return new Response(stream, { headers: { "content-type": "text/event-stream" } })
      }
    })
    resolve({ url: `http://127.0.0.1:${server.port}/v1`, close: () => server.stop(true), sent: () => sent, requests: () => requests })
  })

describe("reins run against a provider that misbehaves", () => {
  test("an answer that never ends is stopped past the size cap: one clear line, exit 1, not retried; the session goes on", async () => {
    const endless = await endlessServer()
    try {
      const p = await setup([{ text: "going on" }], RETRY)
      const scripted = p.server.url
      const pointAt = (url: string) =>
        editConfig(p as Project & { configFile: string }, (config) => ({ ...config, provider: { local: { ...config.provider.local, baseURL: url } } }))
      pointAt(endless.url)
      const r = await reins(["run", "--format", "json", "hello"], p)
      expect(r.code).toBe(1)
      expect(r.stderr).toContain("grew past 4 MiB in one step without ending, so it was stopped")
      expect(endless.requests()).toBe(1)
      expect(endless.sent()).toBeLessThan(64 * 1024 * 1024)
      const sessionID = JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout)[0].id as string
      // what it streamed is kept cut, its start and end: the next prompt sends that, not megabytes
      pointAt(scripted)
      const next = await reins(["run", "--session", sessionID, "go on"], p)
      expect(next.code).toBe(0)
      const messages = JSON.stringify(p.server.requests.at(-1)!.body.messages)
      expect(messages).toContain("characters cut: the answer grew without end and was stopped")
      expect(messages.length).toBeLessThan(64 * 1024)
    } finally {
      endless.close()
    }
  })

  test("a provider that never answers: each attempt is cut at provider.local.timeout.connect, then one clear line and exit 1", async () => {
    const p = await setup([{ stall: "headers" }, { stall: "headers" }], RETRY)
    withProviderTimeout(p, { connect: 0.2 })
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    const silent = `the provider at ${p.server.url} sent no response for 0.2 s (connect timeout; set provider.local.timeout.connect in reins.json to wait longer)`
    // The retry notice is one short line: it may end in "…", the final line is whole.
    expect(r.stderr).toStartWith(`! the provider at ${p.server.url} sent no response for 0.2 s (connect timeout`)
    expect(lastLine(r.stderr)).toBe(`reins: gave up after 2 attempts: ${silent}`)
    expect(p.server.requests).toHaveLength(2)
  })

  test("provider_timeout applies to every provider: a stream that stalls mid-answer ends on the idle timeout", async () => {
    const p = await setup([{ text: "one two three four five six", stallAfterChunks: 2 }], { ...RETRY, provider_timeout: { idle: 0.2 } })
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(1)
    expect(lastLine(r.stderr)).toBe(
      `reins: the provider at ${p.server.url} sent nothing for 0.2 s mid-stream (idle timeout; set provider.local.timeout.idle in reins.json to wait longer)`
    )
    expect(p.server.requests).toHaveLength(1)
  })

  test("an HTML page with status 200 names the content type and baseURL, and is not retried", async () => {
    const page: ScriptedStep = { raw: { body: "<html><head><title>Welcome to nginx!</title></head></html>" } }
    const p = await setup([page, page], RETRY)
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n")).toEqual([
      `reins: the provider at ${p.server.url} answered with text/html, not an event stream — check baseURL (it usually ends in /v1); it said: "Welcome to nginx!"`
    ])
    expect(p.server.requests).toHaveLength(1)
  })

  test("a connection reset is retried; the refused connection after it ends the run at once, naming the URL", async () => {
    const p = await setup([{ hang: true }], RETRY)
    const run = reins(["run", "hello"], p)
    // the request is held open (the hang's first byte is on the connection): stopping the server resets it
    await waitFor(() => p.server.requests[0]?.stalledAt !== undefined, "the request to be held open")
    await p.server.stop()
    const r = await run
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("ECONNRESET")
    expect(r.stderr).not.toMatch(/verbose|second argument to fetch/)
    expect(lastLine(r.stderr)).toBe(
      `reins: could not connect to ${p.server.url} (connection refused): is the model server running? Start it, or change provider.local.baseURL in reins.json`
    )
  })

  test("a local server that is down: no retry with the default policy, the URL and what to do, exit 1; the session resumes once it is up", async () => {
    const p = await setup([{ text: "back" }])
    const down = `http://127.0.0.1:${await closedPort()}/v1`
    editConfig(p as Project & { configFile: string }, (c) => ({ ...c, provider: { local: { ...c.provider.local, baseURL: down } } }))
    const r = await reins(["run", "--format", "json", "hello"], p)
    expect(r.code).toBe(1)
    const said = `could not connect to ${down} (connection refused): is the model server running? Start it, or change provider.local.baseURL in reins.json`
    expect(lastLine(r.stderr)).toBe(`reins: ${said}`)
    // one attempt: no retry notice on stderr, no retry status in the event stream
    expect(r.stderr).not.toContain("!")
    expect(r.stdout).not.toContain('"retry"')
    // the prompt was kept: the same session goes on once the server is back
    editConfig(p as Project & { configFile: string }, (c) => ({ ...c, provider: { local: { ...c.provider.local, baseURL: p.server.url } } }))
    const again = await reins(["run", "-c", "are you there?"], p)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("back")
    const sent = p.server.requests[0]!.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: unknown }) =>
      JSON.stringify(m.content)
    )
    expect(sent.join(" ")).toContain("hello")
    expect(sent.join(" ")).toContain("are you there?")
  })

  test("a negative timeout is a config error naming the key", async () => {
    const p = await setup([{ text: "never" }], { provider_timeout: { first_byte: -1 } })
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("provider_timeout")
    expect(p.server.requests).toHaveLength(0)
  })
})
