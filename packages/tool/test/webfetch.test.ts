import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { check, defaultRules, fromConfig, type Rule } from "@reins/permission"
import { Sandbox, type Resolve } from "@reins/sandbox"
import * as fs from "node:fs"
import * as path from "node:path"
import * as zlib from "node:zlib"
import { webfetch } from "../src/builtin/webfetch.ts"
import { WebFetchSettings, type WebFetchOptions } from "../src/builtin/WebRequest.ts"
import { parseTarget } from "../src/builtin/WebUrl.ts"
import { runTool, tempDir, toolCall, type RunOptions } from "./helpers.ts"

const PAGE = `<!doctype html><html><head><title>Guide</title><style>body { color: red }</style>
<script>window.secret = "do not show"</script></head>
<body><h1>Getting started</h1><p>Install with <code>bun add reins</code> &amp; run it.</p>
<ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul><ol start="3"><li>third</li><li>fourth</li></ol><p>See <a href="/docs">the docs</a>.</p>
<noscript>enable javascript</noscript><pre><code>const x = 1</code></pre></body></html>`

/** Requests the server saw, and the waiters for one to arrive (the hanging route's). */
const seen: Array<{ path: string; host: string | null }> = []
let hangingArrived: () => void = () => {}
let hangingAborted: () => void = () => {}

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => {
    const url = new URL(req.url)
    seen.push({ path: url.pathname, host: req.headers.get("host") })
    const html = (body: string, status = 200) => new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8" } })
    switch (url.pathname) {
      case "/page":
        return html(PAGE)
      case "/json":
        return Response.json({ ok: true, items: [1, 2] })
      case "/plain":
        return new Response("just text <b>not a tag</b>", { headers: { "content-type": "text/plain" } })
      case "/latin1":
        return new Response(new Uint8Array([0x63, 0x61, 0x66, 0xe9]), { headers: { "content-type": "text/plain; charset=iso-8859-1" } })
      case "/gzip-twice":
        return new Response(zlib.gzipSync(zlib.gzipSync(Buffer.from("<p>packed twice</p>"))), {
          headers: { "content-type": "text/html", "content-encoding": "gzip, gzip" }
        })
      case "/zstd":
        return new Response("(\u00b5/\u00fd not really zstd)", { headers: { "content-type": "text/html", "content-encoding": "zstd" } })
      case "/deep":
        return html(`<html><body>${"<div>".repeat(20_000)}deep text${"</div>".repeat(20_000)}</body></html>`)
      case "/gzip":
        return new Response(zlib.gzipSync(Buffer.from("<p>packed page</p>")), { headers: { "content-type": "text/html", "content-encoding": "gzip" } })
      case "/bomb":
        // 64 KiB on the wire, 8 MiB unpacked
        return new Response(zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 97)), { headers: { "content-type": "text/plain", "content-encoding": "gzip" } })
      case "/redirect":
        return new Response(null, { status: 302, headers: { location: "/page" } })
      case "/redirect-chain":
        return new Response(null, { status: 301, headers: { location: `/redirect-chain-${Number(url.searchParams.get("n") ?? 0) + 1}` } })
      case "/loop":
        return new Response(null, { status: 307, headers: { location: "/loop" } })
      case "/to-forbidden":
        return new Response(null, { status: 302, headers: { location: "http://evil.test/steal" } })
      case "/to-metadata":
        return new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } })
      case "/to-file":
        return new Response(null, { status: 302, headers: { location: "file:///etc/passwd" } })
      case "/missing":
        return html("<html><body><h1>Not Found</h1><p>No page at this address.</p></body></html>", 404)
      case "/broken":
        return new Response("database is down", { status: 503, statusText: "Service Unavailable" })
      case "/image":
        return new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), { headers: { "content-type": "image/png" } })
      case "/untyped-binary":
        return new Response(new Uint8Array([0, 1, 2, 3, 0, 255]), { headers: { "content-type": "" } })
      case "/large":
        return new Response("x".repeat(4096), { headers: { "content-type": "text/plain" } })
      case "/large-stream": {
        // chunked: no content-length says how large it is
        let sent = 0
        return new Response(
          new ReadableStream({
            pull(controller) {
              if (sent >= 16) return controller.close()
              sent++
              controller.enqueue(new TextEncoder().encode("y".repeat(1024)))
            }
          }),
          { headers: { "content-type": "text/plain" } }
        )
      }
      case "/hang":
        req.signal.addEventListener("abort", () => hangingAborted())
        hangingArrived()
        return new Promise<Response>(() => {})
      default:
        if (url.pathname.startsWith("/redirect-chain-")) return html(`<p>chain end ${url.pathname}</p>`)
        return new Response("?", { status: 404 })
    }
  }
})
const origin = `http://127.0.0.1:${server.port}`
afterAll(() => server.stop(true))

/** Names the tests map to the local server; any other name fails as DNS would. Every lookup is recorded. */
const lookups: Array<string> = []
const resolve: Resolve = async (host) => {
  lookups.push(host)
  if (host === "rebind.test" || host === "docs.local.test") return [{ address: "127.0.0.1" }]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
}

const settings = (over: Partial<WebFetchOptions> = {}): WebFetchOptions => ({
  resolve,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 120_000,
  ...over
})

/** The local server is loopback: a rule must name it (a `*` rule never reaches this machine). */
const LOCAL: ReadonlyArray<Rule> = [...defaultRules, ...fromConfig({ webfetch: { "http://127.0.0.1:*": "allow" } })]

interface FetchOptions extends Partial<RunOptions> {
  readonly settings?: Partial<WebFetchOptions>
  readonly sandboxAllow?: ReadonlyArray<string>
}

const tool = (options: FetchOptions) => {
  const withSettings = webfetch.pipe(Effect.provideService(WebFetchSettings, settings(options.settings)))
  if (options.sandboxAllow === undefined) return withSettings
  const dir = tempDir()
  fs.mkdirSync(path.join(dir, "project"))
  const sandbox = Sandbox.layer({
    config: { mode: "auto", network: { mode: "allow", allow: [...options.sandboxAllow] } },
    places: { project: path.join(dir, "project"), home: dir, dataDir: path.join(dir, "data") },
    availability: { available: true, bwrap: "/usr/bin/bwrap" }
  })
  return withSettings.pipe(Effect.provide(sandbox))
}

const fetchWith = (args: Record<string, unknown>, options: FetchOptions = {}) => runTool(tool(options), args, { cwd: tempDir(), rules: LOCAL, ...options })

beforeAll(() => {
  lookups.length = 0
})

describe("webfetch: content", () => {
  test("HTML becomes Markdown: headings, lists, links, code; scripts, styles and the head dropped", async () => {
    const r = await fetchWith({ url: `${origin}/page` })
    expect(r._tag).toBe("Success")
    const out: string = r.success.output
    expect(out).toContain("# Getting started")
    expect(out).toContain("Install with `bun add reins` & run it.")
    expect(out).toContain("- first\n- second\n  - nested")
    expect(out).toContain("3. third\n4. fourth")
    expect(out).toContain("[the docs](/docs)")
    expect(out).toContain("```\nconst x = 1\n```")
    for (const hidden of ["do not show", "color: red", "enable javascript", "Guide", "<"]) expect(out).not.toContain(hidden)
    expect(r.success.metadata).toMatchObject({ status: 200, contentType: "text/html", finalUrl: `${origin}/page` })
  })

  test("text: the words only, blocks on their own lines, entities decoded", async () => {
    const r = await fetchWith({ url: `${origin}/page`, format: "text" })
    const out: string = r.success.output
    expect(out).toContain("Getting started\n\nInstall with bun add reins & run it.")
    expect(out).toMatch(/^first$/m)
    expect(out).toContain("See the docs.")
    for (const hidden of ["do not show", "color: red", "#", "[", "<", "`"]) expect(out).not.toContain(hidden)
  })

  test("html: the page as it came", async () => {
    const r = await fetchWith({ url: `${origin}/page`, format: "html" })
    expect(r.success.output).toBe(PAGE)
  })

  test("text content types are returned as they are, in their charset", async () => {
    expect((await fetchWith({ url: `${origin}/json` })).success.output).toBe('{"ok":true,"items":[1,2]}')
    expect((await fetchWith({ url: `${origin}/plain` })).success.output).toBe("just text <b>not a tag</b>")
    expect((await fetchWith({ url: `${origin}/latin1` })).success.output).toBe("café")
    expect((await fetchWith({ url: `${origin}/gzip` })).success.output).toBe("packed page")
  })

  test("images and binaries are described, not dumped", async () => {
    const image = await fetchWith({ url: `${origin}/image` })
    expect(image._tag).toBe("Failure")
    expect(image.failure.message).toContain("is image/png (8 bytes), not text")
    const binary = await fetchWith({ url: `${origin}/untyped-binary` })
    expect(binary.failure.message).toContain("binary data")
  })
})

describe("webfetch: failures the model can act on", () => {
  test("404 says the status and how the page began", async () => {
    const r = await fetchWith({ url: `${origin}/missing` })
    expect(r.failure.message).toContain(`${origin}/missing answered HTTP 404 Not Found. The page does not exist: check the URL.`)
    expect(r.failure.message).toContain("The response began: Not Found No page at this address.")
  })

  test("5xx says the server failed", async () => {
    const r = await fetchWith({ url: `${origin}/broken` })
    expect(r.failure.message).toContain("answered HTTP 503 Service Unavailable. The server failed: try again later.")
    expect(r.failure.message).toContain("database is down")
  })

  test("connection refused", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") })
    const port = closed.port
    closed.stop(true)
    const r = await fetchWith({ url: `http://127.0.0.1:${port}/` })
    expect(r.failure.message).toBe(`Connection refused by 127.0.0.1:${port}: nothing is listening there. Check the URL and port.`)
  })

  test("a name that does not resolve", async () => {
    const r = await fetchWith(
      { url: "https://nowhere.test/x" },
      { rules: [...defaultRules, ...fromConfig({ webfetch: { "https://nowhere.test/*": "allow" } })] }
    )
    expect(r.failure.message).toBe("Could not resolve the host nowhere.test (ENOTFOUND): check the URL's spelling; the site may not exist.")
  })

  test("a declared size over the cap is refused before reading; a chunked body stops at the cap; a gzip bomb counts as it unpacks", async () => {
    const declared = await fetchWith({ url: `${origin}/large` }, { settings: { maxBytes: 1000 } })
    expect(declared.failure.message).toContain("is larger than 1000 bytes (4.0 KiB), webfetch's limit: it was not read.")
    const streamed = await fetchWith({ url: `${origin}/large-stream` }, { settings: { maxBytes: 4096 } })
    expect(streamed.failure.message).toContain("is larger than 4.0 KiB, webfetch's limit")
    const bomb = await fetchWith({ url: `${origin}/bomb` })
    expect(bomb.failure.message).toContain("is larger than 5.0 MiB, webfetch's limit")
  })

  test("a server that never answers: the time limit stops the fetch and closes the connection", async () => {
    const aborted = new Promise<void>((resolve) => (hangingAborted = resolve))
    const r = await fetchWith({ url: `${origin}/hang` }, { settings: { defaultTimeoutMs: 200 } })
    expect(r.failure.reason).toBe("timeout")
    expect(r.failure.message).toContain("did not answer within 0.2 s: the fetch was stopped.")
    await aborted
  })

  test("interrupting the turn aborts the request", async () => {
    const arrived = new Promise<void>((resolve) => (hangingArrived = resolve))
    const aborted = new Promise<void>((resolve) => (hangingAborted = resolve))
    const fiber = Effect.runFork(toolCall(tool({}), { url: `${origin}/hang` }, { cwd: tempDir(), rules: LOCAL }))
    await arrived
    await Effect.runPromise(Fiber.interrupt(fiber))
    await aborted
  })

  test("only http and https; no credentials in URLs", async () => {
    for (const [url, said] of [
      ["file:///etc/passwd", "only http:// and https:// URLs, not file:"],
      ["data:text/plain,hi", "not data:"],
      ["ftp://example.com/x", "not ftp:"],
      ["javascript:alert(1)", "not javascript:"],
      ["not a url", "is not a valid URL"],
      ["https://docs.example.com@evil.test/", "carries a user name or password"],
      ["https://user:pw@evil.test/", "carries a user name or password"]
    ] as const) {
      const r = await fetchWith({ url })
      expect(r.failure.message).toContain(said)
    }
  })
})

describe("webfetch: redirects", () => {
  test("followed, and said", async () => {
    const r = await fetchWith({ url: `${origin}/redirect` })
    expect(r.success.output).toStartWith(`(redirected to ${origin}/page)\n\n# Getting started`)
    expect(r.success.metadata.redirects).toEqual([`${origin}/page`])
  })

  test("at most maxRedirects hops", async () => {
    const r = await fetchWith({ url: `${origin}/loop` }, { settings: { maxRedirects: 3 } })
    expect(r.failure.message).toBe(`${origin}/loop redirected more than 3 times (last to /loop): not followed further.`)
  })

  test("to a host the rules do not allow: refused before its name is even looked up", async () => {
    lookups.length = 0
    const r = await fetchWith({ url: `${origin}/to-forbidden` })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toStartWith(`${origin}/to-forbidden redirected to http://evil.test/steal, which was not fetched.`)
    expect(lookups).toEqual([])
  })

  test("to the cloud metadata address: refused even where every URL is allowed", async () => {
    const everything = [...LOCAL, ...fromConfig({ webfetch: { "*": "allow" } }), ...fromConfig({ webfetch: { "http://127.0.0.1:*": "allow" } })]
    const before = seen.length
    const r = await fetchWith({ url: `${origin}/to-metadata` }, { rules: everything })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toContain("http://169.254.169.254/latest/meta-data/ was not fetched: 169.254.169.254 is a loopback or private address")
    expect(seen.slice(before).map((s) => s.path)).toEqual(["/to-metadata"])
  })

  test("to a file: URL", async () => {
    const r = await fetchWith({ url: `${origin}/to-file` })
    expect(r.failure.message).toBe(
      `${origin}/to-file redirected to file:///etc/passwd, which is not followed: webfetch fetches only http:// and https:// URLs, not file:`
    )
  })

  test("to a host the sandbox's network policy does not list: asked as the sandbox permission, refused without a person", async () => {
    const rules = [...LOCAL, ...fromConfig({ webfetch: { "*": "allow" } }), ...fromConfig({ webfetch: { "http://127.0.0.1:*": "allow" } })]
    lookups.length = 0
    const r = await fetchWith({ url: `${origin}/to-forbidden` }, { rules, sandboxAllow: ["127.0.0.1"] })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toContain("redirected to http://evil.test/steal, which was not fetched")
    expect(r.failure.message).toContain("beyond reins's OS sandbox")
    expect(lookups).toEqual([])
  })
})

describe("webfetch: permission and egress", () => {
  test("the default asks, and without a person the fetch is refused before any connection", async () => {
    const before = seen.length
    const r = await fetchWith({ url: `${origin}/page` }, { rules: defaultRules })
    expect(r.failure.reason).toBe("permission")
    expect(r.failure.message).toStartWith(`Permission for webfetch on "${origin}/page" needs approval, and nobody answered`)
    expect(seen.length).toBe(before)
  })

  test("a rule that names the URL's host allows it; `*` never reaches loopback, private or link-local addresses", async () => {
    const star = [...defaultRules, ...fromConfig({ webfetch: { "*": "allow" } })]
    for (const url of [`${origin}/page`, "http://localhost:1/", "http://169.254.169.254/", "http://[::1]:1/", "http://10.0.0.1/", "http://2130706433/"]) {
      const r = await fetchWith({ url }, { rules: star })
      expect(r.failure?.reason).toBe("permission")
    }
    expect((await fetchWith({ url: `${origin}/page` })).success.output).toContain("# Getting started")
  })

  test("a name that resolves to a loopback address is judged as that address: `*` refuses it, a rule naming it allows it (and the connection goes to the checked address)", async () => {
    const url = `http://rebind.test:${server.port}/page`
    const star = await fetchWith({ url }, { rules: [...defaultRules, ...fromConfig({ webfetch: { "*": "allow" } })] })
    expect(star.failure.reason).toBe("permission")
    expect(star.failure.message).toContain("rebind.test resolves to 127.0.0.1, which is a loopback or private address")
    const named = await fetchWith({ url }, { rules: [...defaultRules, ...fromConfig({ webfetch: { "http://rebind.test:*": "allow" } })] })
    expect(named.success.output).toContain("# Getting started")
    expect(seen.at(-1)).toEqual({ path: "/page", host: `rebind.test:${server.port}` })
  })

  test("with a sandbox on, a host its policy lists is fetched and one it does not is refused before lookup", async () => {
    const rules = [...defaultRules, ...fromConfig({ webfetch: { "*": "allow", "http://127.0.0.1:*": "allow" } })]
    const listed = await fetchWith({ url: `${origin}/json` }, { rules, sandboxAllow: ["127.0.0.1"] })
    expect(listed.success.output).toContain('"ok":true')
    lookups.length = 0
    const unlisted = await fetchWith({ url: "https://docs.example.com/" }, { rules, sandboxAllow: ["127.0.0.1"] })
    expect(unlisted.failure.reason).toBe("permission")
    expect(unlisted.failure.message).toContain("beyond reins's OS sandbox")
    expect(lookups).toEqual([])
  })

  // what the rule {"webfetch": {"https://docs.example.com/*": "allow"}} allows, URL by URL (the rest: asked)
  const rules = [...defaultRules, ...fromConfig({ webfetch: { "https://docs.example.com/*": "allow" } })]
  const table: ReadonlyArray<readonly [string, "allow" | "ask" | "refused"]> = [
    ["https://docs.example.com/guide", "allow"],
    ["HTTPS://DOCS.Example.COM/guide", "allow"],
    ["https://docs.example.com./guide", "allow"],
    ["https://docs.example.com:443/guide", "allow"],
    ["https://docs.example.com/guide#part", "allow"],
    ["https://docs.example.com\\@evil.test/", "allow"],
    ["https://docs.example.com@evil.test/", "refused"],
    ["https://docs.example.com:pw@evil.test/", "refused"],
    ["https://evil.test#@docs.example.com/", "ask"],
    ["https://docs.example.com.evil.test/", "ask"],
    ["https://docs.example.com%2eevil.test/", "ask"],
    ["https://docs.example.com:8443/guide", "ask"],
    ["http://docs.example.com/guide", "ask"],
    ["https://docs.exаmple.com/guide", "ask"],
    ["https://evil.test/https://docs.example.com/", "ask"],
    ["https://evil.test/?to=https://docs.example.com/x", "ask"],
    ["https://docs.example.com", "allow"]
  ]
  for (const [url, expected] of table) {
    test(`${expected}: ${url}`, () => {
      const target = parseTarget(url)
      if (expected === "refused") return expect(typeof target).toBe("string")
      if (typeof target === "string") throw new Error(target)
      expect(check(rules, { permission: "webfetch", patterns: [target.subject] }).action).toBe(expected)
    })
  }

  test("normalization: the subject is what is requested", () => {
    const subject = (url: string) => {
      const t = parseTarget(url)
      return typeof t === "string" ? t : t.subject
    }
    expect(subject("HTTPS://DOCS.Example.COM./a#b")).toBe("https://docs.example.com/a")
    expect(subject("https://docs.exаmple.com/")).toBe("https://docs.xn--exmple-4nf.com/")
    expect(subject("https://bücher.example/")).toBe("https://xn--bcher-kva.example/")
    expect(subject("http://0x7f.0.0.1:80/")).toBe("http://127.0.0.1/")
  })

  test("loopback, private and link-local hosts are known as such before any lookup, in every spelling", () => {
    const privateHost = (url: string) => {
      const t = parseTarget(url)
      return typeof t === "string" ? t : t.privateHost
    }
    for (const url of [
      "http://127.0.0.1/",
      "http://127.1/",
      "http://2130706433/",
      "http://0x7f000001/",
      "http://0177.0.0.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://169.254.169.254/",
      "http://[fd00::1]/",
      "http://192.168.1.1/",
      "http://0.0.0.0/",
      "http://localhost:3000/",
      "http://LOCALHOST./",
      "http://app.localhost/"
    ])
      expect([url, privateHost(url)]).toEqual([url, true])
    for (const url of ["https://example.com/", "http://93.184.216.34/", "https://[2606:4700::1111]/"]) expect([url, privateHost(url)]).toEqual([url, false])
  })
})

describe("webfetch: review cases", () => {
  test("private addresses: never by the unattended policy, --yolo's allow, or a rule whose host is a wildcard", async () => {
    const allowAll = [...defaultRules, ...fromConfig({ webfetch: { "*": "allow" } })]
    for (const rules of [
      allowAll,
      [...defaultRules, ...fromConfig({ webfetch: { "http://*": "allow" } })],
      [...defaultRules, ...fromConfig({ webfetch: { "*://*": "allow" } })],
      [...defaultRules, ...fromConfig({ webfetch: { "http*": "allow" } })],
      [...defaultRules, ...fromConfig({ permission: "allow" })]
    ]) {
      for (const url of [`${origin}/page`, `http://rebind.test:${server.port}/page`, "http://169.254.169.254/", "http://[::ffff:127.0.0.1]:1/"]) {
        const r = await fetchWith({ url }, { rules, nonInteractive: "allow" })
        expect(r._tag).toBe("Failure")
        expect(r.failure.message).toContain("loopback or private address")
      }
    }
  })

  test("stacked content codings are undone in turn; one webfetch cannot decode is refused, not returned as garbage", async () => {
    expect((await fetchWith({ url: `${origin}/gzip-twice` })).success.output).toBe("packed twice")
    const r = await fetchWith({ url: `${origin}/zstd` })
    expect(r.failure.message).toContain('"zstd" content coding, which webfetch cannot decode')
  })

  test("a page nested too deeply to parse comes back as its text, at once", async () => {
    const r = await fetchWith({ url: `${origin}/deep` })
    expect(r.success.output).toContain("too large or too deeply nested to convert")
    expect(r.success.output).toContain("deep text")
  })
})
