// webfetch through the built CLI: a page on a local server fetched as Markdown reaches the model's next request
// when the user's config allows that URL and the sandbox's network policy lists the host; the default (ask)
// refuses it in a non-interactive run, and a redirect to a host the sandbox does not list is not followed.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { ensureBuilt, lastToolResult, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const seen: Array<string> = []
const site = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => {
    const url = new URL(req.url)
    seen.push(url.pathname)
    if (url.pathname === "/away") return new Response(null, { status: 302, headers: { location: "http://elsewhere.test/" } })
    return new Response("<html><head><script>track()</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> is out.</p></body></html>", {
      headers: { "content-type": "text/html" }
    })
  }
})
const origin = `http://127.0.0.1:${site.port}`
afterAll(() => site.stop(true))

/** The user's config: the local site allowed by name, and listed by the sandbox's network policy. */
const allowed = {
  permission: { webfetch: { [`${origin}/*`]: "allow", "http://elsewhere.test/*": "allow" } },
  sandbox: { network: { mode: "allow", allow: ["127.0.0.1"] } }
}

test("a fetched page reaches the model's next request as Markdown", async () => {
  const p = await setup([{ toolCalls: [{ name: "webfetch", arguments: { url: `${origin}/notes` } }] }, { text: "read it" }], allowed)
  const r = await reins(["run", "what is new?"], p)
  expect(r.code).toBe(0)
  expect(lastToolResult(p.server.requests)).toBe("# Release notes\n\nVersion **2.0** is out.")
  expect(seen).toContain("/notes")
})

test("by default the fetch is asked, so a non-interactive run refuses it before any request", async () => {
  const before = seen.length
  const p = await setup([{ toolCalls: [{ name: "webfetch", arguments: { url: `${origin}/notes` } }] }, { text: "could not" }])
  const r = await reins(["run", "what is new?"], p)
  expect(r.code).toBe(0)
  expect(lastToolResult(p.server.requests)).toContain(`Permission for webfetch on "${origin}/notes" needs approval, and nobody answered`)
  expect(seen.length).toBe(before)
})

test("a redirect to a host the sandbox does not list is not followed", async () => {
  const p = await setup([{ toolCalls: [{ name: "webfetch", arguments: { url: `${origin}/away` } }] }, { text: "stopped" }], allowed)
  const r = await reins(["run", "follow it"], p)
  expect(r.code).toBe(0)
  const result = lastToolResult(p.server.requests)
  expect(result).toContain(`${origin}/away redirected to http://elsewhere.test/, which was not fetched.`)
  expect(result).toContain("beyond reins's OS sandbox")
})
