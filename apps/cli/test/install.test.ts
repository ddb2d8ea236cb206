// Issue 26 item 1: the npm packages `npm run pack` makes install with npm alone, offline, and run where
// only Node is on PATH (no bun): the launcher finds the platform's standalone executable, and inside it
// grep's search process, the bash permission scan's tree-sitter wasm and the sandbox's network bridge work;
// the .env and bunfig.toml of the directory it runs in are not read. Only this machine's platform is built
// (REINS_PACK_TARGETS=host: the running bun is the runtime compiled in, nothing is downloaded).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { HOST_FRAME, probeBwrap } from "@reins/sandbox"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { spawnPty } from "./pty/index.ts"
import { gate, lastToolResult, projects, type RunResult, waitFor } from "./support.ts"
import { READY, send, settled } from "./tui-support.ts"

const repo = path.resolve(import.meta.dir, "..", "..", "..")
const version: string = JSON.parse(fs.readFileSync(path.join(import.meta.dir, "..", "package.json"), "utf8")).version
const host = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-install-")))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))
const setup = projects()

// Node itself, not a `node` that is bun (bun run puts such a shim first on PATH when there is no node)
const nodeExe = execFileSync("node", ["-e", "process.stdout.write(process.versions.bun ? '' : process.execPath)"], { encoding: "utf8" })
const prefix = path.join(work, "prefix")
const tarballs = path.join(work, "npm")
// what reins runs with: node alone in its directory, the npm prefix's bin, and the few programs the turn's commands use
const nodeDir = path.join(work, "node")
const toolsDir = path.join(work, "tools")
const PATH = [nodeDir, path.join(prefix, "bin"), toolsDir].join(path.delimiter)
const bwrap = probeBwrap()

beforeAll(() => {
  if (nodeExe === "") throw new Error("this test needs Node on PATH (the launcher runs on it)")
  execFileSync(process.execPath, [path.join(repo, "scripts", "pack-cli.ts"), "--out", tarballs], {
    // REINS_PACK_TARGETS unset: the default builds this machine's executable alone, so the glob below installs
    env: { ...process.env, REINS_PACK_TARGETS: undefined, REINS_PACK_GZIP_LEVEL: "1" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const home = path.join(work, "home")
  fs.mkdirSync(home)
  // offline: npm may not reach the registry (the other platforms' packages are skipped, being optional)
  execFileSync(
    "npm",
    [
      "i",
      "-g",
      "--prefix",
      prefix,
      "--cache",
      path.join(work, "npm-cache"),
      "--offline",
      "--no-audit",
      "--no-fund",
      "--no-update-notifier",
      "--loglevel=error",
      // what docs/install.md says: npm i -g dist/npm/*.tgz (the launcher and this platform's package)
      ...fs
        .readdirSync(tarballs)
        .filter((f) => f.endsWith(".tgz"))
        .map((f) => path.join(tarballs, f))
    ],
    {
      env: { PATH: [path.dirname(nodeExe), process.env.PATH].join(path.delimiter), HOME: home, npm_config_userconfig: path.join(home, ".npmrc") },
      stdio: ["ignore", "ignore", "inherit"]
    }
  )
  fs.mkdirSync(nodeDir)
  fs.symlinkSync(nodeExe, path.join(nodeDir, "node"))
  fs.mkdirSync(toolsDir)
  for (const tool of ["cat", "curl", "git", "sleep", "touch"]) {
    const found = execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim()
    fs.symlinkSync(found, path.join(toolsDir, tool))
  }
}, 180_000)

interface Started {
  readonly child: ChildProcess
  readonly done: Promise<RunResult>
}

/** Runs the installed `reins` (found on PATH) in `cwd`. */
const start = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>): Started => {
  const child = spawn("reins", args, { cwd, env: { ...env, PATH }, stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (b) => (stdout += b))
  child.stderr!.on("data", (b) => (stderr += b))
  child.stdin!.end()
  return { child, done: new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))) }
}

// Linux, where CI runs it: the turn's sandboxed commands need bubblewrap (macOS's sandbox has no network bridge)
describe.skipIf(process.platform !== "linux")("reins installed from the packed tarballs", () => {
  test("no bun is on the PATH it runs with; --version answers", async () => {
    for (const dir of PATH.split(path.delimiter)) expect(fs.existsSync(path.join(dir, "bun"))).toBe(false)
    const r = await start(["--version"], work, { HOME: work }).done
    expect(r).toMatchObject({ code: 0, stdout: `reins v${version}\n` })
    // the executable is the platform package's, beside the launcher's package in the prefix
    expect(fs.statSync(path.join(prefix, "lib", "node_modules", `reins-${host}`, "bin", "reins")).size).toBeGreaterThan(1_000_000)
    // and the config's JSON Schema ships in the reins package, the same file `reins config schema` prints
    const shipped = fs.readFileSync(path.join(prefix, "lib", "node_modules", "reins", "schema", "reins.schema.json"), "utf8")
    expect(JSON.parse(shipped).properties.model).toBeDefined()
  })

  test("a turn: grep's search process, the scanned bash, the sandbox's bridge and a custom tool run inside the executable; .env and bunfig.toml are not read", async () => {
    const served = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => new Response(`proxied ${new URL(r.url).pathname}\n`) })
    try {
      const p = await setup(
        [
          { toolCalls: [{ name: "grep", arguments: { pattern: "TOKEN" } }] },
          // allowed only as two commands the scan told apart (echo, cat): with no parser the whole line is asked, and refused
          { toolCalls: [{ name: "bash", arguments: { command: 'echo "mark=[$REINS_DOTENV_MARK]" && cat app.ts' } }] },
          // through the bridge: the sandbox has only its own loopback, and the proxy carries the listed host
          { toolCalls: [{ name: "bash", arguments: { command: `curl -sS -x "$HTTP_PROXY" --noproxy '' http://localhost:${served.port}/pkg` } }] },
          // the user's own tool, TypeScript importing @reins/plugin: compiled and given the runtime's modules at run time
          { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
          { text: "done" }
        ],
        {
          // the proxy given by a variable is a path the scan cannot see: allowed outside the project
          permission: { bash: { "*": "deny", "echo *": "allow", "cat *": "allow", "curl *": "allow" }, external_directory: "allow" },
          sandbox: { mode: "required", network: { mode: "allow", allow: ["localhost"] } }
        }
      )
      fs.writeFileSync(path.join(p.cwd, "app.ts"), "const TOKEN = 1\n")
      const tool = path.join(p.dataDir, ".config", "reins", "tools", "greet.ts")
      fs.mkdirSync(path.dirname(tool), { recursive: true })
      fs.writeFileSync(
        tool,
        `import { Tool, Schema, Effect } from "@reins/plugin"
export default Tool.define("greet", {
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args: { readonly name: string }) => Effect.succeed({ title: "greet", output: "hello " + args.name })
})`
      )
      // what a hostile repository could hold for bun: its variables and a preload that would run first
      fs.writeFileSync(path.join(p.cwd, ".env"), "REINS_DOTENV_MARK=loaded\n")
      fs.writeFileSync(path.join(p.cwd, "bunfig.toml"), 'preload = ["./preload.ts"]\n')
      fs.writeFileSync(path.join(p.cwd, "preload.ts"), 'require("node:fs").writeFileSync(`${process.cwd()}/preloaded-${process.pid}`, "")\n')
      const r = await start(["run", "find the token"], p.cwd, { ...p.env, ...(bwrap.available ? { REINS_BWRAP: bwrap.bwrap } : {}) }).done
      expect(r.stderr).not.toContain("error")
      expect(r.code).toBe(0)
      const results = p.server.requests.slice(1).map((q) => lastToolResult([q]))
      expect(results[0]).toContain("Line 1: const TOKEN = 1")
      expect(results[1]).toContain("mark=[]")
      expect(results[1]).toContain("const TOKEN = 1")
      expect(results[2]).toContain("proxied /pkg")
      expect(results[3]).toContain("hello Ada")
      expect(fs.readdirSync(p.cwd).filter((f) => f.startsWith("preloaded-"))).toEqual([])
    } finally {
      void served.stop(true)
    }
  })

  test("the sandbox's host runs inside the executable: a command on order, its output and its exit in frames", async () => {
    const exe = path.join(prefix, "lib", "node_modules", `reins-${host}`, "bin", "reins")
    // outside a sandbox's own pid namespace it refuses at once (its sweep is kill(-1))
    const outside = execFileSync("sh", ["-c", `"${exe}" --reins-helper SandboxHost </dev/null; echo "exit $?"`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    })
    expect(outside).toBe("exit 2\n")
    if (!bwrap.available) return
    // as pid 1 of a bubblewrap, as reins starts it
    const sandbox = ["--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--as-pid-1", "--"]
    const child = spawn(bwrap.bwrap, [...sandbox, exe, "--reins-helper", "SandboxHost"], {
      cwd: work,
      env: { PATH: "/usr/bin:/bin" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const frames: Array<{ kind: number; id: number; body: string }> = []
    let pending = Buffer.alloc(0)
    child.stdout?.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 9 && pending.length >= 9 + pending.readUInt32LE(5)) {
        const length = pending.readUInt32LE(5)
        frames.push({ kind: pending.readUInt8(0), id: pending.readUInt32LE(1), body: pending.subarray(9, 9 + length).toString() })
        pending = pending.subarray(9 + length)
      }
    })
    await waitFor(() => frames.some((f) => f.kind === HOST_FRAME.ready), "the host to be ready")
    const order = { t: "run", id: 7, file: "/bin/sh", args: ["-c", "echo hosted; exit 4"], env: { PATH: "/usr/bin:/bin" }, cwd: work }
    child.stdin?.write(`${JSON.stringify(order)}\n`)
    await waitFor(() => frames.some((f) => f.kind === HOST_FRAME.exit), "the command's exit")
    expect(frames.find((f) => f.kind === HOST_FRAME.started)?.id).toBe(7)
    expect(frames.filter((f) => f.kind === HOST_FRAME.stdout).map((f) => f.body)).toEqual(["hosted\n"])
    expect(JSON.parse(frames.find((f) => f.kind === HOST_FRAME.exit)?.body ?? "")).toEqual({ code: 4, signal: null })
    // reins closing its end ends it
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    child.stdin?.end()
    expect(await exited).toBe(0)
  })

  test("the interactive session on a terminal, through the launcher: a turn, then /exit", async () => {
    const p = await setup([{ text: "Hello from the executable." }])
    await using pty = spawnPty([path.join(prefix, "bin", "reins")], { cwd: p.cwd, env: { ...p.env, PATH, TERM: "xterm-256color" }, cols: 100, rows: 30 })
    await pty.waitFor(READY)
    await send(pty, "hello")
    await settled(pty, "Hello from the executable.")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("SIGTERM to the launcher reaches reins: the turn stops, its command is ended, and the launcher exits", async () => {
    const held = gate()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `touch started; ${held.command}` } }] }, { text: "done" }], {
      sandbox: { mode: "off" }
    })
    const run = start(["run", "--yolo", "wait"], p.cwd, p.env)
    await waitFor(() => fs.existsSync(path.join(p.cwd, "started")), "the command to start")
    run.child.kill("SIGTERM")
    const r = await run.done
    expect(r.code === 0).toBe(false)
    // the command's shell is gone: nothing is left polling for the gate file
    const polling = () => execFileSync("ps", ["-eo", "args="], { encoding: "utf8" }).includes(held.command)
    await waitFor(() => !polling(), "the command to be ended")
  })

  test("without the platform package the launcher says which platforms exist and what to do", async () => {
    // the launcher's package alone, where no reins-<platform> package can be found
    const lonely = path.join(work, "lonely", "node_modules", "reins")
    fs.cpSync(path.join(prefix, "lib", "node_modules", "reins"), lonely, { recursive: true })
    const launcher = spawn(path.join(nodeDir, "node"), [path.join(lonely, "bin", "reins"), "--version"], { env: { PATH }, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    launcher.stderr.on("data", (b) => (stderr += b))
    const code = await new Promise((resolve) => launcher.on("close", resolve))
    expect(code).toBe(1)
    expect(stderr).toContain(`no reins executable for this platform (${host}) is installed`)
    expect(stderr).toContain("linux-x64, linux-arm64, darwin-x64, darwin-arm64, windows-x64")
    expect(stderr).toContain(`npm i -g reins@${version}`)
  })
})
