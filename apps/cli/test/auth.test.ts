// reins auth login|list|logout through the built CLI: keys stored 0600 in the data dir, listed masked (text and
// JSON), removed; a damaged store is named and left alone; a script without a key gets one line and exit 2.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, reins } from "./support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())

const home = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-auth-home-")))
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, REINS_DATA_DIR: path.join(dir, "data"), NO_COLOR: "1" }
  return { cwd: dir, dataDir: env.REINS_DATA_DIR!, env, auth: path.join(env.REINS_DATA_DIR!, "auth.json") }
}

describe("reins auth", () => {
  test("login from stdin and --key -, list masked (text, json; the environment's key wins), logout", async () => {
    const p = home()
    const first = await reins(["auth", "login", "anthropic"], p, "sk-ant-secret-0001\n")
    expect(first).toMatchObject({ code: 0 })
    expect(first.stdout).toContain(`Stored the key for anthropic (sk-…0001) in ${p.auth}.`)
    expect((await reins(["auth", "login", "openai", "--key", "-"], p, "sk-oai-secret-0002")).code).toBe(0)
    expect(fs.statSync(p.auth).mode & 0o777).toBe(0o600)
    expect(fs.statSync(p.dataDir).mode & 0o777).toBe(0o700)

    const withEnv = { ...p, env: { ...p.env, OPENAI_API_KEY: "sk-from-the-env-0003" } }
    const text = await reins(["auth", "list"], withEnv)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("anthropic  stored              sk-…0001")
    expect(text.stdout).toContain("openai     env OPENAI_API_KEY  sk-…0003")
    expect(text.stdout).toContain("openai     stored              sk-…0002  (unused while the environment has one)")
    for (const secret of ["secret-0001", "secret-0002", "env-0003"]) expect(text.stdout).not.toContain(secret)
    const json = JSON.parse((await reins(["auth", "list", "--format", "json"], withEnv)).stdout)
    expect(json).toEqual({
      file: p.auth,
      keys: [
        { provider: "anthropic", source: "stored", key: "sk-…0001", active: true },
        { provider: "openai", source: "env", variable: "OPENAI_API_KEY", key: "sk-…0003", active: true },
        { provider: "openai", source: "stored", key: "sk-…0002", active: false }
      ]
    })

    expect(await reins(["auth", "logout", "anthropic"], p)).toMatchObject({ code: 0, stdout: "Removed the stored key for anthropic.\n" })
    expect(JSON.parse(fs.readFileSync(p.auth, "utf8"))).toEqual({ openai: { type: "api", key: "sk-oai-secret-0002" } })
    const again = await reins(["auth", "logout", "anthropic"], p)
    expect(again).toMatchObject({ code: 2, stderr: "reins: No key stored for anthropic (reins auth list shows the keys)\n" })
  })

  test("without a key off a terminal: one line, exit 2; a provider reins does not know needs --base-url, which goes into the user's config", async () => {
    const p = home()
    const none = await reins(["auth", "login", "openai"], p, "")
    expect(none.code).toBe(2)
    expect(none.stderr).toBe(
      'reins: No key given for openai: paste it at the prompt on a terminal, or pass it with --key KEY or --key - (stdin): echo "$KEY" | reins auth login openai --key -\n'
    )
    expect((await reins(["auth", "login"], p, "sk-x")).stderr).toBe("reins: Name the provider: reins auth login anthropic --key - < key.txt\n")
    const unknown = await reins(["auth", "login", "vllm"], p, "sk-vllm-1234")
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('reins does not know the provider "vllm": give its endpoint with --base-url URL')
    expect(fs.existsSync(p.auth)).toBe(false)
    const added = await reins(["auth", "login", "vllm", "--base-url", "http://127.0.0.1:8000/v1", "--key", "sk-vllm-1234"], p)
    expect(added.code).toBe(0)
    expect(JSON.parse(fs.readFileSync(path.join(p.cwd, ".config", "reins", "reins.json"), "utf8"))).toEqual({
      provider: { vllm: { type: "openai-compatible", baseURL: "http://127.0.0.1:8000/v1" } }
    })
  })

  test("a damaged auth.json is named with what to do, and no command overwrites it", async () => {
    const p = home()
    fs.mkdirSync(p.dataDir, { recursive: true })
    fs.writeFileSync(p.auth, "{ oops")
    const message = `reins: The key store ${p.auth} is not valid (not JSON): fix it, or move it away and store your keys again with reins auth login.\n`
    for (const args of [
      ["auth", "list"],
      ["auth", "login", "openai", "--key", "sk-new-key-1"],
      ["auth", "logout", "openai"],
      ["run", "hi"]
    ]) {
      expect({ args, ...(await reins(args, p)) }).toMatchObject({ args, code: 2, stderr: message })
    }
    expect(fs.readFileSync(p.auth, "utf8")).toBe("{ oops")
  })

  test("on a terminal the key is asked for without echo", async () => {
    const p = home()
    await using pty = spawnPty([BIN, "auth", "login", "mistral"], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" } })
    await pty.waitFor("API key for mistral (not shown as you type):")
    pty.type("mistral-typed-secret")
    await pty.settle()
    await pty.press("enter")
    expect(await pty.waitExit()).toBe(0)
    expect(pty.output()).not.toContain("mistral-typed-secret")
    expect(pty.screen()).toContain("Stored the key for mistral (mis…cret)")
    expect(JSON.parse(fs.readFileSync(p.auth, "utf8"))).toEqual({ mistral: { type: "api", key: "mistral-typed-secret" } })
  })
})
