// `reins serve` against an attacker on the loopback interface: another local user's process or a browser
// page (DNS rebinding, cross-site requests that need no preflight), and event streams opened by the thousand.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as path from "node:path"
import { ensureBuilt, HANG_MS, projects, waitFor } from "./support.ts"
import { auth, servers, api, openEvents } from "./serve-support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

/** A request with the headers a browser would send (node:http lets the Host header be set); the status and the JSON body. */
const raw = (url: string, method: string, route: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const request = http.request({ host: hostname, port, method, path: route, headers }, (response) => {
      let text = ""
      response.on("data", (b) => (text += b))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }))
    })
    request.on("error", reject)
    request.end()
  })

describe("reins serve without --token: a token of its own, so nothing reaches it without one", () => {
  // Any local user's process (or a web page by DNS rebinding) reaches a loopback port: reins serve never
  // answers without a token. It makes one and leaves it where only this user can read it.
  test("every route, every Host and Origin: 401 without the token, 403/401 never leaks a session; the token file is 0600 and goes with the server", async () => {
    const p = await setup([])
    const s = await serve(p)
    const port = new URL(s.url).port
    const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "evil.example", `127.0.0.1.nip.io:${port}`, `0.0.0.0:${port}`]
    const origins = [undefined, "https://evil.example", "null", "http://localhost:3000"]
    const routes = [
      ["GET", "/health"],
      ["GET", "/session"],
      ["GET", "/event"],
      ["POST", "/session"],
      ["GET", "/doc"],
      ["GET", "/config"]
    ] as const
    for (const host of hosts) {
      for (const origin of origins) {
        for (const [method, route] of routes) {
          for (const authorization of [undefined, "Bearer wrong", "Bearer ", `Basic ${s.token}`]) {
            const headers = { host, ...(origin ? { origin } : {}), ...(authorization !== undefined ? { authorization } : {}) }
            const r = await raw(s.url, method, route, headers)
            expect([host, origin, method, route, authorization, r.status]).toEqual([host, origin, method, route, authorization, 401])
          }
        }
      }
    }
    // a ?token= is taken on /event only, and only the right one
    expect((await raw(s.url, "GET", "/event?token=wrong", {})).status).toBe(401)
    expect((await raw(s.url, "GET", `/session?token=${s.token}`, {})).status).toBe(401)
    // nothing was created by the refused POSTs; with the token it answers
    expect((await api(s.url, "GET", "/session")).body).toEqual([])
    expect((await raw(s.url, "GET", "/health", { authorization: `Bearer ${s.token}` })).status).toBe(200)
    // the token: 64 hex characters, in a file only this user can read, in a folder only this user can list
    expect(s.token).toMatch(/^[0-9a-f]{64}$/)
    const file = path.join(p.dataDir, "servers", `${port}.json`)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toMatchObject({ url: s.url, token: s.token, directory: p.cwd })
    await s.stop()
    expect(fs.existsSync(file)).toBe(false)
  })

  test("--cors lets a listed page's preflight through; the page still needs the token", async () => {
    const p = await setup([])
    const s = await serve(p, ["--cors", "http://app.example"])
    const host = `127.0.0.1:${new URL(s.url).port}`
    expect((await raw(s.url, "POST", "/session", { host, origin: "http://app.example" })).status).toBe(401)
    expect((await raw(s.url, "POST", "/session", { host, origin: "http://app.example", authorization: `Bearer ${s.token}` })).status).toBe(201)
    expect((await api(s.url, "GET", "/session")).body).toHaveLength(1)
  })

  test("with a token the token is the check: a proxied Host or a page's Origin with the right token passes, without it 401", async () => {
    const p = await setup([])
    const s = await serve(p, ["--token", "tok-123"])
    const headers = { host: "reins.internal.example", origin: "https://ui.example" }
    expect((await raw(s.url, "GET", "/session", headers)).status).toBe(401)
    expect((await raw(s.url, "GET", "/session", { ...headers, authorization: "Bearer tok-123" })).status).toBe(200)
  })
})

describe("reins serve: event streams", () => {
  test("a Last-Event-ID that is not an event id is a 400 saying what to send (it replayed nothing and said nothing); ids and none pass", async () => {
    const p = await setup([])
    const s = await serve(p)
    const refused: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["?lastEventId=abc", {}],
      ["?lastEventId=-5", {}],
      ["?lastEventId=1.5", {}],
      ["?lastEventId=NaN", {}],
      ["", { "last-event-id": "abc" }],
      ["", { "last-event-id": "-1" }],
      ["", { "last-event-id": "12abc" }]
    ]
    for (const [query, headers] of refused) {
      const r = await fetch(`${s.url}/event${query}`, { headers: { ...headers, ...auth(s) } })
      expect([query, headers, r.status]).toEqual([query, headers, 400])
      const body = (await r.json()) as { error: string; message: string }
      expect(body.error).toBe("bad_request")
      expect(body.message).toMatch(/lastEventId|Last-Event-ID/)
    }
    for (const [query, headers] of [
      ["?lastEventId=0", {}],
      ["", { "last-event-id": "0" }],
      ["", { "last-event-id": " 7 " }],
      ["", {}]
    ] as const) {
      const stream = await openEvents(s.url, { query, headers })
      expect([query, stream.response.status]).toEqual([query, 200])
      await stream.waitFor((f) => f.event === "server.connected")
      await stream.close()
    }
  })

  test("past --max-clients open streams a new one gets 503 saying what to do; other routes keep working; a closed one frees its place", async () => {
    const p = await setup([])
    const s = await serve(p, ["--max-clients", "3"])
    const open = await Promise.all([0, 1, 2].map(() => openEvents(s.url)))
    for (const stream of open) await stream.waitFor((f) => f.event === "server.connected")
    for (const query of ["", "?sessionID=ses_x", "?lastEventId=0"]) {
      const refused = await fetch(`${s.url}/event${query}`, { headers: auth(s) })
      expect(refused.status).toBe(503)
      expect(await refused.json()).toMatchObject({ error: "too_many_clients", message: expect.stringContaining("--max-clients") })
    }
    expect((await api(s.url, "GET", "/health")).body.events.clients).toBe(3)
    expect((await api(s.url, "POST", "/session", {})).status).toBe(201)
    await open[0]!.close()
    await waitFor(async () => (await api(s.url, "GET", "/health")).body.events.clients === 2, "the server to count two clients")
    const again = await openEvents(s.url)
    expect(again.response.status).toBe(200)
    await again.waitFor((f) => f.event === "server.connected")
    for (const stream of [...open.slice(1), again]) await stream.close()
    expect((await api(s.url, "GET", "/doc")).body.paths["/event"].get.description).toContain("503")
  })
})

describe("reins serve: request size", () => {
  test("a body over --max-body is 413 on every route that takes one or not, by length or in chunks; headers over 16 KiB are refused; the server keeps answering", async () => {
    const p = await setup([])
    const s = await serve(p, ["--max-body", "1000"])
    const id = (await api(s.url, "POST", "/session", {})).body.id
    const routes: ReadonlyArray<readonly [string, string]> = [
      ["POST", "/session"],
      ["POST", `/session/${id}/message`],
      ["POST", `/session/${id}/prompt_async`],
      ["POST", `/session/${id}/fork`],
      ["POST", `/session/${id}/abort`],
      ["POST", `/session/${id}/summarize`],
      ["POST", `/session/${id}/revert`],
      ["POST", `/session/${id}/unrevert`],
      ["POST", `/session/${id}/permissions/per_x`],
      ["DELETE", `/session/${id}`]
    ]
    const big = JSON.stringify({ text: "x".repeat(2000) })
    for (const [method, route] of routes) {
      const sized = await fetch(`${s.url}${route}`, { method, body: big, headers: { "content-type": "application/json", ...auth(s) } })
      expect([method, route, sized.status]).toEqual([method, route, 413])
      expect(((await sized.json()) as { error: string }).error).toBe("too_large")
    }
    for (const [method, route] of routes.filter(([m]) => m === "POST").slice(0, 4)) {
      const chunked = await fetch(`${s.url}${route}`, {
        method,
        headers: { "content-type": "application/json", ...auth(s) },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big.slice(0, 900)))
            controller.enqueue(new TextEncoder().encode(big.slice(900)))
            controller.close()
          }
        })
      })
      expect([method, route, chunked.status]).toEqual([method, route, 413])
    }
    const huge = await fetch(`${s.url}/health`, { headers: { "x-filler": "a".repeat(20_000), ...auth(s) } }).then(
      (r) => r.status,
      () => "reset"
    )
    expect([431, "reset"]).toContain(huge)
    // nothing of it was stored, and ordinary requests pass
    expect((await api(s.url, "GET", `/session/${id}/message`)).body).toEqual([])
    expect((await api(s.url, "GET", "/session")).body).toHaveLength(1)
    expect((await api(s.url, "GET", "/health")).status).toBe(200)
  })
})

/**
 * Bytes written to the server as they are; the status lines of all it answered, once it closed the connection (it
 * does after a 400; a request that should pass says `Connection: close`). The bound only turns a hang into a failure.
 */
const rawBytes = (url: string, bytes: string) =>
  new Promise<Array<string>>((resolve, reject) => {
    let data = ""
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1", () => socket.write(bytes))
    const guard = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the connection open after ${HANG_MS / 1000} s; it answered: ${JSON.stringify(data)}`))
    }, HANG_MS)
    socket.on("data", (b) => (data += b))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(guard)
      resolve(data.split("\r\n").filter((l) => l.startsWith("HTTP/")))
    })
  })

describe("reins serve: request framing", () => {
  test("ambiguous framing (Content-Length with Transfer-Encoding, two lengths, an unknown coding) is 400 before any route: nothing is smuggled", async () => {
    const p = await setup([])
    const s = await serve(p)
    const head = `POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${s.token}\r\n`
    const smuggled = "GET /session HTTP/1.1\r\nHost: evil.example\r\n\r\n"
    const variants = [
      `${head}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
      `${head}Transfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n0\r\n\r\n${smuggled}`,
      `${head}Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}`,
      `${head}Transfer-Encoding: xchunked\r\n\r\n{}`
    ]
    for (const bytes of variants) expect([bytes, await rawBytes(s.url, bytes)]).toEqual([bytes, ["HTTP/1.1 400 Bad Request"]])
    expect((await api(s.url, "GET", "/session")).body).toEqual([])
    // a well-framed request on the same kind of connection passes
    expect(await rawBytes(s.url, `${head}Content-Length: 2\r\nConnection: close\r\n\r\n{}`)).toEqual(["HTTP/1.1 201 Created"])
  })
})
