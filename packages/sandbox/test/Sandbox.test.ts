// The sandbox with real bubblewrap and real commands: what a command may write, read, reach and see.
// Each row is run twice where it matters: the blocked form, and the same work inside the project (it works).
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer, Logger } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { explainBlocked, probeBwrap, Sandbox, type SandboxConfig, scrubEnv } from "../src/index.ts"

const available = probeBwrap()
// The sandbox tests need bubblewrap (.ci/run installs it); without it they say so instead of passing quietly
const linux = process.platform === "linux"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-sandbox-test-")))
// outside the project and outside /tmp (which the sandbox replaces): a place that is read-only inside
const outside = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-sandbox-outside-"))
const project = path.join(root, "project")
const home = path.join(root, "home")
const dataDir = path.join(home, ".local", "share", "reins")
fs.mkdirSync(path.join(project, ".git", "hooks"), { recursive: true })
fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n")
fs.mkdirSync(path.join(home, ".ssh"), { recursive: true })
fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "PRIVATE-KEY-MATERIAL")
fs.mkdirSync(dataDir, { recursive: true })
fs.writeFileSync(path.join(dataDir, "auth.json"), '{"anthropic":"sk-stored"}')
fs.writeFileSync(path.join(outside, "victim.txt"), "keep me")
fs.writeFileSync(path.join(project, "secret.env"), "DB_PASSWORD=hunter2")
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ANTHROPIC_API_KEY: "sk-ant-user", GITHUB_TOKEN: "ghp_user", LANG: "C" }

const spawned = (file: string, args: ReadonlyArray<string>, cwd: string, env: Readonly<Record<string, string>>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(file, [...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (b: Buffer) => chunks.push(b))
    child.stderr.on("data", (b: Buffer) => chunks.push(b))
    child.on("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }))
  })

/** Runs `script` with bash through the sandbox built from `config`; output is stdout and stderr together. */
const run = (script: string, config: SandboxConfig = {}, options: { cwd?: string; availability?: Parameters<typeof Sandbox.layer>[0]["availability"] } = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const launch = yield* sandbox.wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd: options.cwd ?? project, env })
      // not spawnSync: a test's server in this process must go on answering
      const r = yield* Effect.promise(() => spawned(launch.file, launch.args, options.cwd ?? project, launch.env))
      return { code: r.code, output: r.output, sandboxed: launch.sandboxed, explained: sandbox.explain(r.output) }
    }).pipe(
      Effect.provide(
        Sandbox.layer({
          config,
          places: { project, home, dataDir, denyRead: [path.join(project, "secret.env")] },
          ...(options.availability ? { availability: options.availability } : {})
        })
      ),
      Effect.scoped
    )
  )

describe.skipIf(!linux)("bubblewrap is here", () => {
  test("the probe finds it and it starts (install bubblewrap if this fails)", () => {
    expect(available).toMatchObject({ available: true })
  })
})

describe.skipIf(!linux || !available.available)("a sandboxed command", () => {
  test("writes in the project and in /tmp; not outside: the file stays, the model is told which path", async () => {
    const inside = await run("echo made > made.txt && echo t > /tmp/t && cat /tmp/t")
    expect(inside).toMatchObject({ code: 0, sandboxed: true })
    expect(fs.readFileSync(path.join(project, "made.txt"), "utf8")).toBe("made\n")
    for (const attempt of [
      `rm -f ${outside}/victim.txt`,
      `echo x > ${outside}/victim.txt`,
      `mv ${outside}/victim.txt ${project}/`,
      `touch ${outside}/new.txt`,
      `rm -rf ${outside}`
    ]) {
      const r = await run(attempt)
      expect([attempt, r.code === 0]).toEqual([attempt, false])
      expect(r.explained).toContain("Blocked by reins's sandbox")
      expect(fs.readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("keep me")
    }
    expect((await run(`touch ${outside}/new.txt`)).explained).toContain(`${outside}/new.txt`)
    expect(fs.existsSync(path.join(outside, "new.txt"))).toBe(false)
  })

  test("/tmp is the host's (as the file tools see it), its sockets to programs outside are hidden", async () => {
    const tmp = fs.realpathSync(os.tmpdir())
    const shared = path.join(tmp, `reins-host-${process.pid}.txt`)
    const x11 = path.join(tmp, ".X11-unix")
    const made = !fs.existsSync(x11)
    if (made) {
      fs.mkdirSync(x11)
      fs.writeFileSync(path.join(x11, "X0"), "")
    }
    try {
      fs.writeFileSync(shared, "from the host")
      const r = await run(`cat ${shared} && echo back > ${shared}.out && ls -A ${x11} | wc -l`, {}, {})
      expect(r.output).toBe("from the host0\n")
      expect(fs.readFileSync(`${shared}.out`, "utf8")).toBe("back\n")
    } finally {
      fs.rmSync(shared, { force: true })
      fs.rmSync(`${shared}.out`, { force: true })
      if (made) fs.rmSync(x11, { recursive: true, force: true })
    }
  })

  test("git hooks and git config stay read-only inside the project", async () => {
    for (const attempt of [
      "echo 'touch pwned' > .git/hooks/pre-commit",
      "git config core.fsmonitor 'touch pwned' 2>&1 || false",
      "echo '[core]' >> .git/config"
    ]) {
      const r = await run(attempt)
      expect([attempt, r.code === 0]).toEqual([attempt, false])
    }
    expect(fs.existsSync(path.join(project, ".git", "hooks", "pre-commit"))).toBe(false)
    expect(fs.readFileSync(path.join(project, ".git", "config"), "utf8")).toBe("[core]\n")
  })

  test("secrets are not readable: ~/.ssh, reins's auth store, a path the read rules deny", async () => {
    // the rest of home and the data dir is readable (so what is hidden is hidden by the mask)
    fs.writeFileSync(path.join(home, "notes.txt"), "visible-note")
    fs.writeFileSync(path.join(dataDir, "spill.txt"), "visible-spill")
    expect((await run(`cat ${home}/notes.txt ${dataDir}/spill.txt`)).output).toBe("visible-notevisible-spill")
    for (const [attempt, secret] of [
      [`cat ${home}/.ssh/id_rsa`, "PRIVATE-KEY-MATERIAL"],
      ["cat ~/.ssh/id_rsa", "PRIVATE-KEY-MATERIAL"],
      [`cat ${dataDir}/auth.json`, "sk-stored"],
      ["cat secret.env", "hunter2"],
      [`ls -la ${home}/.ssh`, "id_rsa"]
    ] as const) {
      const r = await run(attempt)
      expect([attempt, r.output.includes(secret)]).toEqual([attempt, false])
    }
  })

  test("the environment has no keys, and reins's own process (its environment) is out of sight", async () => {
    const r = await run(`env; cat /proc/${process.pid}/environ; cat /proc/${process.ppid}/environ; ls /proc | grep -c '^[0-9]'`)
    expect(r.output).not.toContain("sk-ant-user")
    expect(r.output).not.toContain("ghp_user")
    expect(r.output).toContain(`HOME=${home}`)
    // a new pid namespace: only the command's own processes
    expect(Number(r.output.trim().split("\n").at(-1))).toBeLessThan(10)
    const passed = await run("echo $GITHUB_TOKEN", { env: { pass: ["GITHUB_TOKEN"] } })
    expect(passed.output.trim()).toBe("ghp_user")
  })

  test("no network: a server on 127.0.0.1 is not reached; with network all, it is", async () => {
    const server = net.createServer((socket) => socket.end("hello from the host\n"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as net.AddressInfo).port
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`
      const blocked = await run(probe)
      expect(blocked.code).not.toBe(0)
      expect(blocked.output).not.toContain("hello from the host")
      expect(blocked.explained).toContain("no network")
      const open = await run(probe, { network: { mode: "all" } })
      expect(open.output).toContain("hello from the host")
    } finally {
      server.close()
    }
  })

  test("writable adds a directory; off runs outside the sandbox, environment untouched", async () => {
    expect((await run(`echo ok > ${outside}/allowed.txt`, { writable: [outside] })).code).toBe(0)
    expect(fs.readFileSync(path.join(outside, "allowed.txt"), "utf8")).toBe("ok\n")
    const off = await run("echo $ANTHROPIC_API_KEY", { mode: "off" })
    expect(off).toMatchObject({ sandboxed: false, output: "sk-ant-user\n" })
  })

  test("ordinary work is unchanged: a git repository, a build, pipes, subshells, a script in the project", async () => {
    const r = await run(
      [
        "git init -q repo && cd repo && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m first && git log --oneline | wc -l",
        "cd .. && printf 'echo from script\\n' > s.sh && bash s.sh",
        "echo abc | tr a-z A-Z",
        "(cd /tmp && mkdir -p w && echo in-tmp)",
        "ls / >/dev/null && echo listed"
      ].join(" && ")
    )
    expect(r.code).toBe(0)
    expect(r.output.split("\n").filter(Boolean)).toEqual(["1", "from script", "ABC", "in-tmp", "listed"])
    expect(r.explained).toBeUndefined()
  })
})

describe("without bubblewrap", () => {
  const missing = { available: false as const, reason: "bubblewrap (bwrap) is not installed: install it" }
  test("mode required: nothing runs, and the error says what to do", async () => {
    const error = await run("touch ran.txt", { mode: "required" }, { availability: missing }).catch((e: Error) => e)
    expect(String(error)).toContain('sandbox.mode is "required"')
    expect(String(error)).toContain("Install bubblewrap")
    expect(fs.existsSync(path.join(project, "ran.txt"))).toBe(false)
  })

  test("mode auto: runs, says so once, and the keys are still scrubbed", async () => {
    const warnings: Array<string> = []
    const logger = Logger.make<unknown, void>(({ message }) => warnings.push(String(message)))
    const twice = await Effect.runPromise(
      Effect.gen(function* () {
        const sandbox = yield* Sandbox
        const outputs: Array<string> = []
        for (let i = 0; i < 2; i++) {
          const launch = yield* sandbox.wrap("/bin/bash", ["-c", "echo key=$ANTHROPIC_API_KEY"], { cwd: project, env })
          outputs.push(spawnSync(launch.file, launch.args, { env: launch.env, encoding: "utf8" }).stdout)
        }
        return outputs
      }).pipe(
        Effect.provide(Layer.mergeAll(Sandbox.layer({ config: {}, places: { project, home, dataDir }, availability: missing }), Logger.layer([logger]))),
        Effect.scoped
      )
    )
    expect(twice).toEqual(["key=\n", "key=\n"])
    expect(warnings.filter((w) => w.includes("without a sandbox"))).toHaveLength(1)
  })
})

describe("pure parts", () => {
  test("scrubEnv: secret-looking names go, passes stay, ordinary ones stay", () => {
    const { env: out, removed } = scrubEnv(
      {
        OPENAI_API_KEY: "x",
        AWS_SECRET_ACCESS_KEY: "x",
        AWS_ACCESS_KEY_ID: "x",
        NPM_TOKEN: "x",
        DB_PASSWORD: "x",
        MY_SECRET_THING: "x",
        SSH_AUTH_SOCK: "/tmp/ssh",
        DATABASE_URL: "postgres://u:p@h/db",
        PATH: "/bin",
        HOME: "/h",
        TERM: "dumb",
        KEYBOARD_LAYOUT: "us",
        TOKENIZERS_PARALLELISM: "false",
        GITHUB_TOKEN: "x"
      },
      ["GITHUB_*"]
    )
    expect(removed).toEqual([
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "DATABASE_URL",
      "DB_PASSWORD",
      "MY_SECRET_THING",
      "NPM_TOKEN",
      "OPENAI_API_KEY",
      "SSH_AUTH_SOCK"
    ])
    expect(Object.keys(out).sort()).toEqual(["GITHUB_TOKEN", "HOME", "KEYBOARD_LAYOUT", "PATH", "TERM", "TOKENIZERS_PARALLELISM"])
  })

  test("explainBlocked names the read-only paths; ordinary failures are not blamed on the sandbox", () => {
    const profile = { mode: "auto", network: "none", writable: ["/p", "/tmp"], readOnly: [], denyRead: [], envPass: [] } as const
    expect(explainBlocked("touch: cannot touch '/etc/x': Read-only file system", profile)).toContain("/etc/x")
    expect(explainBlocked("rm: cannot remove '/var/a': Read-only file system", profile)).toContain("/var/a")
    expect(explainBlocked("curl: (6) Could not resolve host: example.com", profile)).toContain("no network")
    expect(explainBlocked("error: test failed, expected 1 got 2", profile)).toBeUndefined()
    expect(explainBlocked("cat: x: No such file or directory", profile)).toBeUndefined()
  })
})
