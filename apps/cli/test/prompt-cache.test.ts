// Prompt caching (T10) as a user sees it: `reins run` against the scripted Anthropic server shows
// the session's cache hit rate in its closing line; `sessions show` shows cache tokens per step and in
// all; the chat and invoke_agent spans carry them too.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startAnthropicServer, startOtlpReceiver, type AnthropicServer, type ReceivedSpan } from "@reins/testkit"
import { ensureBuilt, reins, writeUserConfig } from "./support.ts"

let server: AnthropicServer
beforeAll(ensureBuilt)

// a real OTLP/HTTP receiver (either encoding), for the spans' cache attributes
const collector = await startOtlpReceiver()
afterAll(async () => {
  await server?.stop()
  await collector.stop()
})
const attr = (span: ReceivedSpan, key: string) => {
  const v = span.attributes[key]
  return v === undefined ? undefined : Number(v)
}

const tokens = (n: number) => (n < 1000 ? String(n) : `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, "")}k`)

test("reins run shows the cache hit rate in its closing line; sessions show and the spans give cache tokens per step and for the session", async () => {
  server = await startAnthropicServer([
    { toolCalls: [{ name: "bash", arguments: { command: "echo one", description: "one" } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "echo two", description: "two" } }] },
    { text: "Done looking." }
  ])
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cache-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-cache-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  writeUserConfig(
    dataDir,
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key" } } })
  )
  const p = { cwd, dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" } }

  const run = await reins(["run", "--yolo", "look around"], { ...p, env: { ...p.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } })
  expect(run.stderr).not.toContain("rror")
  expect(run.code).toBe(0)
  expect(run.stdout.trim()).toBe("Done looking.")
  const billed = server.requests.map((r) => r.usage!)
  expect(billed).toHaveLength(3)
  const read = billed.reduce((n, u) => n + u.cache_read_input_tokens, 0)
  const written = billed.reduce((n, u) => n + u.cache_creation_input_tokens, 0)
  const all = billed.reduce((n, u) => n + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, 0)
  const rate = `${Math.round((read / all) * 100)}%`
  expect(read).toBeGreaterThan(0)
  const closing = run.stderr.split("\n").find((l) => l.startsWith("session ses_"))!
  expect(closing).toMatch(new RegExp(`^session (ses_\\w+) · 3 steps · [\\d.]+k in / \\d+ out · \\$[\\d.]+ · cache ${rate} · [\\d.]+m?s$`))
  const sessionID = closing.split(" ")[1]!

  // spans: each model call (chat) with its cache tokens and hit rate, the turn (invoke_agent) with its totals
  await collector.waitFor((c) => c.spans.some((s) => s.name === "reins run"))
  const spans = collector.spans
  const stepSpans = spans.filter((s) => s.name === "chat claude-sonnet-4-5")
  expect(stepSpans).toHaveLength(3)
  stepSpans.forEach((span, i) => {
    const u = billed[i]!
    expect(attr(span, "gen_ai.usage.cache_read.input_tokens")).toBe(u.cache_read_input_tokens)
    expect(attr(span, "gen_ai.usage.cache_creation.input_tokens")).toBe(u.cache_creation_input_tokens)
    expect(attr(span, "gen_ai.usage.input_tokens")).toBe(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens)
    expect(attr(span, "reins.cache.hit_rate")).toBeCloseTo(
      u.cache_read_input_tokens / (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens),
      6
    )
  })
  const turn = spans.find((s) => s.name === "invoke_agent build")!
  expect(attr(turn, "gen_ai.usage.cache_read.input_tokens")).toBe(read)
  expect(attr(turn, "gen_ai.usage.cache_creation.input_tokens")).toBe(written)
  expect(attr(turn, "reins.cache.hit_rate")).toBeCloseTo(read / all, 6)

  const shown = await reins(["sessions", "show", sessionID], p)
  expect(shown.code).toBe(0)
  const lines = shown.stdout.split("\n")
  // the session: its usage line, then its cache tokens
  expect(lines[2]).toContain(`cache ${rate}`)
  expect(lines[3]).toBe(`cache ${tokens(read)} read / ${tokens(written)} written (${rate})`)
  // each step (assistant message) with its own figures
  const steps = lines.filter((l) => l.startsWith("── assistant"))
  expect(steps).toHaveLength(3)
  steps.forEach((line, i) => {
    const u = billed[i]!
    const stepRate = `${Math.round((u.cache_read_input_tokens / (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens)) * 100)}%`
    expect(line).toEndWith(
      `· anthropic/claude-sonnet-4-5 · cache ${tokens(u.cache_read_input_tokens)} read / ${tokens(u.cache_creation_input_tokens)} written (${stepRate})`
    )
  })
}, 60_000)
