// Variants (T22) as a user meets them: `reins run --variant` against the scripted Anthropic server;
// an unknown variant (on the command line or in reins.json) is a usage error before any request.
import { afterEach, beforeAll, expect, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startAnthropicServer, thinkingSignature, type AnthropicServer } from "@reins/testkit"
import { ensureBuilt, reins, writeUserConfig } from "./support.ts"

beforeAll(ensureBuilt)
const servers: Array<AnthropicServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop()
})

const setup = async (steps: Parameters<typeof startAnthropicServer>[0], extra: Record<string, unknown> = {}, models?: Record<string, unknown>) => {
  const server = await startAnthropicServer(steps)
  servers.push(server)
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-variant-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-variant-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  writeUserConfig(
    dataDir,
    JSON.stringify({
      model: "anthropic/claude-sonnet-4-5",
      provider: { anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key", ...(models ? { models } : {}) } },
      ...extra
    })
  )
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }
  return { server, p: { cwd, dataDir, env } }
}

const KNOWN = "use one of minimal, low, medium, high, max"

test("reins run --variant high asks Claude for a thinking budget and replays the signed thinking on the next step", async () => {
  const { server, p } = await setup([
    { reasoning: "Look first.", toolCalls: [{ name: "bash", arguments: { command: "echo hi", description: "hi" } }] },
    { text: "Looked." }
  ])
  const run = await reins(["run", "--yolo", "--variant", "high", "look"], p)
  expect(run.stderr).not.toContain("rror")
  expect(run.code).toBe(0)
  expect(run.stdout.trim()).toBe("Looked.")
  const bodies = server.requests.map((r) => r.body as { thinking?: unknown; messages: Array<{ content: Array<Record<string, unknown>> }> })
  expect(bodies.map((b) => b.thinking)).toEqual([
    { type: "enabled", budget_tokens: 16_000 },
    { type: "enabled", budget_tokens: 16_000 }
  ])
  const thinking = bodies[1]!.messages.flatMap((m) => m.content.filter((c) => c.type === "thinking"))
  expect(thinking).toEqual([{ type: "thinking", thinking: "Look first.", signature: thinkingSignature("Look first.") }])
})

test.each([
  ["--variant", ["--variant", "hgih"], {}, 'Unknown variant "hgih" for anthropic/claude-sonnet-4-5'],
  ["config variant", [], { variant: "nope" }, 'Unknown variant "nope" for anthropic/claude-sonnet-4-5']
])("an unknown variant (%s) exits 2 naming the known ones, before any request", async (_, flags, extra, message) => {
  const { server, p } = await setup([{ text: "never" }], extra)
  const run = await reins(["run", ...flags, "hi"], p)
  expect(run.code).toBe(2)
  expect(run.stderr).toContain(`${message}: ${KNOWN}`)
  expect(run.stderr.trim().split("\n")).toHaveLength(1)
  expect(run.stdout).toBe("")
  expect(server.requests).toHaveLength(0)
})

test("a variant defined in reins.json for the model is accepted and sent", async () => {
  const { server, p } = await setup(
    [{ text: "ok" }],
    {},
    { "claude-sonnet-4-5": { variants: { deep: { thinking: { type: "enabled", budgetTokens: 30000 } } } } }
  )
  const run = await reins(["run", "--variant", "deep", "hi"], p)
  expect(run.code).toBe(0)
  expect((server.requests[0]!.body as { thinking: unknown }).thinking).toEqual({ type: "enabled", budget_tokens: 30_000 })
})

test("the interactive session keeps the variant: shown in the footer, /model … VARIANT changes it, an unknown one is refused", async () => {
  const { server, p } = await setup([{ text: "Thought low." }])
  const { openTui, send, settled } = await import("./tui-support.ts")
  await using pty = await openTui({ ...p, server } as never, ["--variant", "high"])
  expect(pty.screen()).toContain("anthropic/claude-sonnet-4-5 (high)")
  await send(pty, "/model anthropic/claude-sonnet-4-5 hgih")
  await pty.waitFor('Unknown variant "hgih"')
  await send(pty, "/model anthropic/claude-sonnet-4-5 low")
  await pty.waitFor("Model: anthropic/claude-sonnet-4-5 (low) for the next turns")
  await send(pty, "think")
  await settled(pty, "Thought low.")
  expect((server.requests[0]!.body as { thinking?: unknown }).thinking).toEqual({ type: "enabled", budget_tokens: 4_000 })
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
}, 60_000)
