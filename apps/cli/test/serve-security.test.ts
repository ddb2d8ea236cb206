// `reins serve` against an attacker on the loopback interface: a browser page reaching a server that has
// no token (DNS rebinding, cross-site requests that need no preflight), and event streams opened by the thousand.
import { beforeAll, describe, expect, test } from "bun:test"
import * as http from "node:http"
import * as net from "node:net"
import { ensureBuilt, HANG_MS, projects, waitFor } from "./support.ts"
import { servers, api, openEvents } from "./serve-support.ts"

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

describe("reins serve without a token: only requests addressed to a loopback name, from no web page", () => {
  test("a Host that is not a loopback name is refused (403) on every route; loopback names pass", async () => {
    const p = await setup([])
    const s = await serve(p)
    const port = new URL(s.url).port
    const refused = [
      "evil.example",
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `127.0.0.1.evil.example`,
      `0.0.0.0:${port}`,
      `192.168.1.10:${port}`,
      `[::2]:${port}`,
      `localhostx:${port}`,
      `127.0.0.256:${port}`
    ]
    for (const host of refused) {
      for (const [method, route] of [
        ["GET", "/health"],
        ["GET", "/session"],
        ["GET", "/event"],
        ["POST", "/session"],
        ["GET", "/doc"]
      ] as const) {
        const r = await raw(s.url, method, route, { host })
        expect([host, method, route, r.status]).toEqual([host, method, route, 403])
        expect(r.body).toMatchObject({ error: "forbidden", message: expect.stringContaining("--token") })
      }
    }
    // nothing was created by the refused POSTs
    expect((await api(s.url, "GET", "/session")).body).toEqual([])
    expect((await api(s.url, "GET", "/doc")).body.info.description).toContain("403")
    const allowed = [
      `127.0.0.1:${port}`,
      "127.0.0.1",
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `localhost.:${port}`,
      `app.localhost:${port}`,
      `127.1.2.3:${port}`,
      `[::1]:${port}`
    ]
    for (const host of allowed) expect([host, (await raw(s.url, "GET", "/health", { host })).status]).toEqual([host, 200])
  })

  test("a request from a web page (Origin) is refused unless its origin is a --cors one; requests without Origin pass", async () => {
    const p = await setup([])
    const s = await serve(p, ["--cors", "http://app.example"])
    const port = new URL(s.url).port
    const host = `127.0.0.1:${port}`
    // what a page can send without a preflight: a bodiless POST, a text/plain POST; and the origins it may have
    for (const origin of [
      "https://evil.example",
      "null",
      "http://localhost:3000",
      `http://127.0.0.1:${port}.evil.example`,
      "http://app.example.evil",
      "http://APP.example"
    ]) {
      for (const [method, route] of [
        ["POST", "/session"],
        ["GET", "/session"],
        ["GET", "/event"]
      ] as const) {
        const r = await raw(s.url, method, route, { host, origin })
        expect([origin, method, route, r.status]).toEqual([origin, method, route, 403])
        expect(r.body.message).toContain("--cors")
      }
    }
    expect((await api(s.url, "GET", "/session")).body).toEqual([])
    // the listed origin, and ordinary clients (no Origin) pass
    expect((await raw(s.url, "POST", "/session", { host, origin: "http://app.example" })).status).toBe(201)
    expect((await raw(s.url, "POST", "/session", { host })).status).toBe(201)
    expect((await api(s.url, "GET", "/session")).body).toHaveLength(2)
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
      const r = await fetch(`${s.url}/event${query}`, { headers })
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
      const refused = await fetch(`${s.url}/event${query}`)
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
      ["POST", `/session/${id}/permissions/per_x`],
      ["DELETE", `/session/${id}`]
    ]
    const big = JSON.stringify({ text: "x".repeat(2000) })
    for (const [method, route] of routes) {
      const sized = await fetch(`${s.url}${route}`, { method, body: big, headers: { "content-type": "application/json" } })
      expect([method, route, sized.status]).toEqual([method, route, 413])
      expect(((await sized.json()) as { error: string }).error).toBe("too_large")
    }
    for (const [method, route] of routes.filter(([m]) => m === "POST").slice(0, 4)) {
      const chunked = await fetch(`${s.url}${route}`, {
        method,
        headers: { "content-type": "application/json" },
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
    const huge = await fetch(`${s.url}/health`, { headers: { "x-filler": "a".repeat(20_000) } }).then(
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
    const head = "POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
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
