// The first run without a model, under a real pty: `reins` walks the user to a provider, a key and a model, writes
// them (auth.json 0600, the user's reins.json) and opens the chat, whose turn uses the stored key. Off a terminal
// the one-line error stays.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer, type ScriptedServer } from "@reins/testkit"
import { spawnPty, type Pty } from "./pty/index.ts"
import { BIN, ensureBuilt, reins, writeUserConfig } from "./support.ts"
import { READY, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const servers: Array<{ stop(): Promise<void> | void }> = []
afterAll(async () => {
  for (const s of servers) await s.stop()
})

/** A temp project and HOME (= data dir) with no model anywhere; no local server probed unless `probe` says so. */
const fresh = (probe = "") => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-onboard-")))
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-onboard-home-")))
  execFileSync("git", ["init", "-q"], { cwd })
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, REINS_DATA_DIR: home, NO_COLOR: "1", REINS_LOCAL_PROBE: probe }
  return { cwd, home, dataDir: home, env, userConfig: path.join(home, ".config", "reins", "reins.json"), auth: path.join(home, "auth.json") }
}

const open = (p: ReturnType<typeof fresh>): Pty => spawnPty([BIN], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" }, cols: 120, rows: 30 })

describe("reins without a model, on a terminal", () => {
  test("pick a provider, type its key (not echoed), pick a model: the key is stored 0600, the model in the user's config, and the chat's turn sends the key", async () => {
    const server: ScriptedServer = await startScriptedServer([{ text: "Hello from the scripted model." }])
    servers.push(server)
    const p = fresh()
    // the user's config names an endpoint for openai (the scripted server) and an unrelated setting, but no model
    writeUserConfig(p.home, JSON.stringify({ provider: { openai: { type: "openai", baseURL: server.url } }, permission_timeout: 30 }, null, 2))
    await using pty = open(p)
    await pty.waitFor("Provider")
    // no key anywhere: nothing is marked ready; openai (configured) comes first
    expect(pty.screen()).toContain("openai  configured, no key yet")
    expect(pty.screen()).toContain("anthropic  paste an API key (or set ANTHROPIC_API_KEY)")
    await pty.press("enter")
    await pty.waitFor("API key for openai")
    const secret = "sk-onboard-secret-4242"
    pty.type(secret)
    await pty.waitFor(`(${secret.length} characters, hidden)`)
    expect(pty.output()).not.toContain(secret)
    await pty.press("enter")
    await pty.waitFor("Model of openai")
    // the default first
    expect(pty.screen()).toMatch(/gpt-5 +suggested/)
    await pty.press("enter")
    await pty.waitFor(READY)
    // what was written
    expect(fs.statSync(p.auth).mode & 0o777).toBe(0o600)
    expect(JSON.parse(fs.readFileSync(p.auth, "utf8"))).toEqual({ openai: { type: "api", key: secret } })
    const config = JSON.parse(fs.readFileSync(p.userConfig, "utf8"))
    expect(config).toEqual({ provider: { openai: { type: "openai", baseURL: server.url } }, permission_timeout: 30, model: "openai/gpt-5" })
    // the chat works with the stored key
    await send(pty, "hi")
    await settled(pty, "Hello from the scripted model.")
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`)
    expect(pty.output()).not.toContain(secret)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("a local Ollama that answers is offered with its models and set up as an openai-compatible provider", async () => {
    const ollama = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new URL(req.url).pathname === "/api/tags"
          ? Response.json({ models: [{ name: "qwen3:8b" }, { name: "llama3.2:3b" }] })
          : new Response("", { status: 404 })
    })
    servers.push(ollama)
    // lmstudio on a port nothing listens on: not offered
    const p = fresh(`ollama=127.0.0.1:${ollama.port},lmstudio=127.0.0.1:9`)
    await using pty = open(p)
    await pty.waitFor("Provider")
    const screen = pty.screen()
    expect(screen).toContain(`ollama  ✓ Ollama running at http://127.0.0.1:${ollama.port}/v1 (2 models)`)
    expect(screen).not.toContain("lmstudio")
    await pty.press("enter")
    await pty.waitFor("Model of ollama")
    await pty.press("down", "enter")
    await pty.waitFor(READY)
    expect(fs.existsSync(p.auth)).toBe(false)
    expect(JSON.parse(fs.readFileSync(p.userConfig, "utf8"))).toEqual({
      provider: { ollama: { type: "openai-compatible", baseURL: `http://127.0.0.1:${ollama.port}/v1`, models: { "qwen3:8b": {}, "llama3.2:3b": {} } } },
      model: "ollama/llama3.2:3b"
    })
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("Esc at the key prompt cancels: nothing written, exit 130", async () => {
    const p = fresh()
    writeUserConfig(p.home, '{\n  // mine\n  "permission_timeout": 30\n}\n')
    const before = fs.readFileSync(p.userConfig, "utf8")
    await using pty = open(p)
    await pty.waitFor("Provider")
    pty.type("anthropic")
    await pty.waitFor("filter: anthropic")
    await pty.press("enter")
    await pty.waitFor("API key for anthropic")
    pty.type("sk-half-typed")
    await pty.press("esc")
    expect(await pty.waitExit()).toBe(130)
    expect(pty.scrollback()).toContain("Setup cancelled: nothing was written")
    expect(fs.existsSync(p.auth)).toBe(false)
    expect(fs.readFileSync(p.userConfig, "utf8")).toBe(before)
  })
})

describe("without a model off a terminal", () => {
  test("reins run keeps the one-line error, now naming reins auth login, and exits 2", async () => {
    const p = fresh()
    const r = await reins(["run", "hi"], { cwd: p.cwd, dataDir: p.dataDir, env: p.env })
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("No model configured")
    expect(r.stderr).toContain("reins auth login")
    const json = await reins(["run", "--format", "json", "hi"], { cwd: p.cwd, dataDir: p.dataDir, env: p.env })
    expect(json.code).toBe(2)
    expect(json.stdout).toBe("")
  })
})
