// Issue 25 item 2: approval and the OS sandbox as one system. A command the rules allow runs in the
// sandbox without a question; one that needs more (the network, a write outside) is asked for that
// escalation, which then holds for that command only; "always" records the escalation, not the
// command; secrets are never offered; --yolo's rules lift nothing. Real bubblewrap, real commands.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Bus, DataDir, HomeDir, Ids } from "@reins/domain"
import { type Answer, defaultRules, hostOf, Permission, PermissionSettings, type Pending, type Rule, scanBash } from "@reins/permission"
import { Reducers, builtinReducers } from "@reins/reduce"
import { escalationFor, grantedProfile, probeBwrap, profileFor, Sandbox } from "@reins/sandbox"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import { bash } from "../src/builtin/bash.ts"
import { wantOf } from "../src/builtin/SandboxNeeds.ts"

const available = process.platform === "linux" && probeBwrap().available
// not under /tmp, which the sandbox keeps writable: the home directory must be outside every writable place
const root = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-escalate-"))
const project = path.join(root, "project")
const home = path.join(root, "home")
const dataDir = path.join(root, "data")
// outside the project and outside /tmp (which is writable in the sandbox)
const outside = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-escalate-outside-"))
for (const d of [project, path.join(home, ".ssh"), dataDir]) fs.mkdirSync(d, { recursive: true })
fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "KEY")
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

const want = async (command: string, network?: boolean) =>
  wantOf(await Effect.runPromise(scanBash(command, { cwd: project, worktree: project, home })), network)

describe("what a command wants beyond the sandbox", () => {
  const online: ReadonlyArray<[string, ReadonlyArray<string>]> = [
    ["curl -s https://example.com/x.tgz -o x.tgz", ["example.com"]],
    ["wget http://files.example.org/a", ["files.example.org"]],
    ["git push origin main", []],
    ["git -C . fetch --all", []],
    ["git clone git@github.com:acme/app.git", ["github.com"]],
    ["git clone https://gitlab.com/acme/app", ["gitlab.com"]],
    ["npm install left-pad", []],
    ["npm i", []],
    ["pnpm add zod", []],
    ["yarn", []],
    ["bun add effect", []],
    ["npx prettier --check .", []],
    ["pip install requests", []],
    ["python3 -m pip install -r requirements.txt", []],
    ["uv sync", []],
    ["cargo fetch", []],
    ["go mod download", []],
    ["go get example.com/m@v1", []],
    ["ssh deploy@10.0.0.5 uptime", ["10.0.0.5"]],
    ["scp build.tgz me@host.example.net:/srv", ["host.example.net"]],
    ["rsync -a dist/ web.example.com:/var/www", ["web.example.com"]],
    ["gh pr list", []],
    ["sudo apt-get install -y jq", []],
    ["cd sub && npm ci", []],
    ["ls && curl -fsS https://api.example.com/v1 | jq .", ["api.example.com"]]
  ]
  for (const [command, hosts] of online) {
    test(`network: ${command}`, async () => {
      expect((await want(command)).network).toEqual({ hosts })
    })
  }

  const local = [
    "ls -la",
    "git status",
    "git commit -m 'x'",
    "git log --oneline | head",
    "npm test",
    "npm run build",
    "bun test",
    "cargo build",
    "go test ./...",
    "go mod init example.com/m",
    "python3 -m pytest",
    "echo hi > out.txt",
    "cat /etc/hosts",
    "grep -r host src",
    "cat curl wget",
    "head ./ssh < npm",
    "make"
  ]
  for (const command of local) {
    test(`no network: ${command}`, async () => {
      expect((await want(command)).network).toBeUndefined()
    })
  }

  test("the model's network: true is a want of its own (a command the table does not know)", async () => {
    expect((await want("exec 3<>/dev/tcp/127.0.0.1/80", true)).network).toEqual({ hosts: [], explicit: true })
    expect((await want("exec 3<>/dev/tcp/127.0.0.1/80")).network).toBeUndefined()
  })

  test("writes outside: what writers and redirections name; reads outside are no write", async () => {
    expect((await want("rm /opt/app/cache.db")).writes).toEqual(["/opt/app"])
    expect((await want("echo x > /var/tmp/out/f.txt")).writes).toContain("/var/tmp/out/f.txt")
    expect((await want("mkdir -p /srv/data/new && touch /srv/data/new/x")).writes).toContain("/srv/data/new")
    expect((await want("cp a.txt /srv/b/")).writes?.length).toBeGreaterThan(0)
    for (const read of ["cat /etc/passwd", "ls /opt", "head -n1 /var/log/syslog", "diff /etc/hosts hosts", "cat /etc/hosts; rm x"]) {
      expect([read, (await want(read)).writes]).toEqual([read, []])
    }
  })
})

describe("the escalation under each network mode", () => {
  const places = { project, home, dataDir }
  const none = profileFor({}, places)
  const allow = profileFor({ network: { mode: "allow", allow: ["@registries", "*.example.org"] } }, places)
  const all = profileFor({ network: { mode: "all" } }, places)
  test("none: any network want is asked; all: none is", () => {
    expect(escalationFor(none, home, { network: { hosts: ["github.com"] } })?.network).toEqual({ hosts: ["github.com"] })
    expect(escalationFor(none, home, { network: { hosts: [] } })?.network).toEqual({ hosts: [] })
    expect(escalationFor(all, home, { network: { hosts: ["evil.test"] } })).toBeUndefined()
  })
  test("allow: only hosts the list lacks; a command naming none goes through the proxy unless the model asked", () => {
    expect(escalationFor(allow, home, { network: { hosts: ["registry.npmjs.org", "a.example.org"] } })).toBeUndefined()
    expect(escalationFor(allow, home, { network: { hosts: ["registry.npmjs.org", "evil.test"] } })?.network).toEqual({ hosts: ["evil.test"] })
    expect(escalationFor(allow, home, { network: { hosts: [] } })).toBeUndefined()
    expect(escalationFor(allow, home, { network: { hosts: [], explicit: true } })?.network).toEqual({ hosts: [] })
    // the model asking for the network itself asks for all of it (shown as network *), hosts named or not
    expect(escalationFor(none, home, { network: { hosts: ["github.com"], explicit: true } })?.network).toEqual({ hosts: [] })
  })
  test("hosts are names or addresses: a wildcard or a control character names none", () => {
    for (const [word, host] of [
      ["https://GitHub.com/x", "github.com"],
      ["http://[::1]:8080/", "::1"],
      ["git@gitlab.example.org:a/b.git", "gitlab.example.org"],
      ["deploy@10.0.0.5", "10.0.0.5"],
      ["http://*.com/", undefined],
      ["http://*/", undefined],
      ["http://github.com\u001b[2K/x", undefined],
      ["http://a?b/", "a"],
      ["http://exa_mple.com/", undefined]
    ] as const) {
      expect([word, hostOf(word)]).toEqual([word, host])
    }
  })

  test("home's code places are never offered: dot directories (not caches), ~/.local/bin, ~/bin; home through a link too", () => {
    for (const dir of [".config/fish", ".config/systemd/user", ".local/bin", "bin", ".ssh", ".bashrc.d"])
      fs.mkdirSync(path.join(home, dir), { recursive: true })
    for (const target of [".config/fish/config.fish", ".config/systemd/user/x.service", ".local/bin/git", "bin/git", ".bashrc.d/x"]) {
      expect([target, escalationFor(none, home, { writes: [path.join(home, target)] })]).toEqual([target, undefined])
    }
    const link = path.join(root, "homelink")
    fs.symlinkSync(home, link)
    expect(escalationFor(none, link, { writes: [path.join(home, "notes.txt")] })).toBeUndefined()
    expect(escalationFor(none, link, { writes: [path.join(home, ".bashrc")] })).toBeUndefined()
    // an ordinary directory outside home is offered
    expect(escalationFor(none, home, { writes: [path.join(outside, "x.txt")] })?.writable).toEqual([outside])
  })

  test("a granted directory that is another repository keeps its git hooks and config read-only", () => {
    const other = path.join(outside, "other-repo")
    fs.mkdirSync(path.join(other, ".git", "hooks"), { recursive: true })
    fs.writeFileSync(path.join(other, ".git", "config"), "[core]\n")
    const granted = grantedProfile({}, places, { writable: [other] })
    expect(granted.writable).toContain(other)
    expect(granted.readOnly).toEqual(expect.arrayContaining([path.join(other, ".git", "hooks"), path.join(other, ".git", "config")]))
  })

  test("a granted host joins the allow list for that command; a grant naming none turns the network on", () => {
    const config = { network: { mode: "allow" as const, allow: ["@registries"] } }
    const granted = grantedProfile(config, places, { network: { hosts: ["evil.test"] }, writable: [] })
    expect(granted.network).toBe("allow")
    expect(granted.allow).toContain("evil.test")
    expect(granted.allow).toContain("registry.npmjs.org")
    expect(grantedProfile(config, places, { network: { hosts: [] }, writable: [] }).network).toBe("all")
    // without network, named hosts come through the proxy: the grant is no wider than the question
    const named = grantedProfile({}, places, { network: { hosts: ["github.com"] }, writable: [] })
    expect([named.network, named.allow]).toEqual(["allow", ["github.com"]])
    expect(grantedProfile({}, places, { network: { hosts: [] }, writable: [] }).network).toBe("all")
  })
})

/**
 * Runs the bash tool once with `rules` and the real sandbox; the prompter answers a `sandbox` question
 * with `answer` (and records it), any other question (a path outside) with once.
 */
const call = (command: string, options: { rules?: ReadonlyArray<Rule>; answer?: Answer; network?: boolean; callID?: string; asked?: Array<Pending> }) => {
  const asked = options.asked ?? []
  const settings = {
    rules: options.rules ?? defaultRules,
    nonInteractive: "deny" as const,
    ...(options.answer
      ? {
          prompter: {
            ask: (request: Pending) => {
              if (request.permission !== "sandbox") return Effect.succeed<Answer>({ reply: "once" })
              asked.push(request)
              return Effect.succeed(options.answer!)
            }
          }
        }
      : {})
  }
  const layer = Layer.mergeAll(
    Permission.layer,
    Truncate.layer,
    Sandbox.layer({ config: {}, places: { project, home, dataDir }, resolve: async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1" }] : []) })
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
    Layer.provide(Layer.succeed(DataDir, dataDir)),
    Layer.provide(Layer.succeed(PermissionSettings, settings)),
    Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
  )
  const ctx = { sessionID: "ses_esc", messageID: "msg_esc", callID: options.callID ?? `call_${Math.random().toString(36).slice(2)}`, cwd: project }
  return Effect.runPromise(
    Effect.gen(function* () {
      const tool = yield* bash
      const result = yield* Effect.result(tool.execute({ command, ...(options.network ? { network: true } : {}) }, ctx))
      return { result, asked }
    }).pipe(Effect.provide(layer), Effect.provideService(Reducers, builtinReducers), Effect.provideService(HomeDir, home), Effect.scoped) as Effect.Effect<{
      result: any
      asked: Array<Pending>
    }>
  )
}

const output = (r: { result: any }) => (r.result._tag === "Success" ? String(r.result.success.output) : String(r.result.failure.message))

/** A loopback server that counts its connections and answers each with a line. */
const server = async () => {
  let connections = 0
  const s = net.createServer((socket) => {
    connections++
    socket.end("hello from outside\n")
  })
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))
  return { port: (s.address() as net.AddressInfo).port, connections: () => connections, close: () => s.close() }
}

describe.skipIf(!available)("escalations asked, granted for one command, recorded by always", () => {
  test("no escalation needed: an allowed command inside the project asks nothing and runs sandboxed", async () => {
    const r = await call("echo inside > in.txt && cat in.txt", { answer: { reply: "reject" } })
    expect(r.asked).toEqual([])
    expect(output(r)).toContain("inside")
    expect(r.result.success.metadata.sandboxed).toBe(true)
  })

  test("network: asked as `sandbox network *`; once lets this command through; reject runs nothing", async () => {
    const s = await server()
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${s.port} && cat <&3`
      const granted = await call(probe, { network: true, answer: { reply: "once" } })
      expect(granted.asked.map((q) => [q.permission, q.patterns])).toEqual([["sandbox", ["network *"]]])
      expect(granted.asked[0]?.title).toContain("network access")
      expect(output(granted)).toContain("hello from outside")
      expect(s.connections()).toBe(1)

      const rejected = await call(probe, { network: true, answer: { reply: "reject" } })
      expect(rejected.result._tag).toBe("Failure")
      expect(s.connections()).toBe(1)

      // the grant was for that command only: the same command without the question has no network
      const plain = await call(probe, { answer: { reply: "once" } })
      expect(plain.asked).toEqual([])
      expect(output(plain)).not.toContain("hello from outside")
      expect(s.connections()).toBe(1)
    } finally {
      s.close()
    }
  })

  test("a named host is granted through the proxy: that host only, nothing else on the network", async () => {
    const web = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("hello over http\n") })
    const other = await server()
    try {
      // web.test stands for a public host (the proxy's resolver maps it to the server here)
      const command = `curl -sS http://web.test:${web.port}/x; exec 3<>/dev/tcp/127.0.0.1/${other.port} && cat <&3`
      const r = await call(command, { answer: { reply: "once" } })
      expect(r.asked.map((q) => q.patterns)).toEqual([["network web.test"]])
      expect(output(r)).toContain("hello over http")
      expect(output(r)).not.toContain("hello from outside")
      expect(other.connections()).toBe(0)
    } finally {
      web.stop(true)
      other.close()
    }
  })

  test("a write outside: asked as `sandbox write <dir>`; once writes it; reject leaves it alone", async () => {
    const target = path.join(outside, "made.txt")
    const rejected = await call(`touch ${target}`, { answer: { reply: "reject" } })
    expect(rejected.asked.map((q) => q.patterns)).toEqual([[`write ${outside}`]])
    expect(fs.existsSync(target)).toBe(false)
    const granted = await call(`touch ${target}`, { answer: { reply: "once" } })
    expect(granted.result._tag).toBe("Success")
    expect(fs.existsSync(target)).toBe(true)
  })

  test("always records the escalation (network *), not the command: a different command is not asked again", async () => {
    const s = await server()
    try {
      const asked: Array<Pending> = []
      const rules: Array<Rule> = [...defaultRules]
      const first = await call(`exec 3<>/dev/tcp/127.0.0.1/${s.port} && cat <&3`, { network: true, answer: { reply: "always" }, asked })
      expect(output(first)).toContain("hello from outside")
      expect(asked[0]?.always).toEqual(["network *"])
      // what "always" would add, as a rule; the next command with the same need is not asked
      rules.push(...asked[0]!.always.map((pattern) => ({ permission: "sandbox", pattern, action: "allow" as const })))
      const second = await call(`exec 3<>/dev/tcp/127.0.0.1/${s.port} && cat <&3 && echo again`, { network: true, rules, answer: { reply: "reject" } })
      expect(second.asked).toEqual([])
      expect(output(second)).toContain("again")
    } finally {
      s.close()
    }
  })

  test("secrets and the home directory are never offered: no question, the write stays blocked", async () => {
    for (const command of [`echo x > ${home}/.ssh/authorized_keys`, `touch ${home}/.bashrc`, `rm ${home}/.ssh/id_rsa`]) {
      const r = await call(command, { answer: { reply: "once" } })
      expect([command, r.asked]).toEqual([command, []])
    }
    expect(fs.readFileSync(path.join(home, ".ssh", "id_rsa"), "utf8")).toBe("KEY")
    expect(fs.existsSync(path.join(home, ".bashrc"))).toBe(false)
  })

  test('"permission": "allow" allows tools, not lifting the sandbox; --yolo\'s rules deny it and say why', async () => {
    const everything: Array<Rule> = [...defaultRules, { permission: "*", pattern: "*", action: "allow" }]
    const asked = await call("git ls-remote http://127.0.0.1:9/x", { rules: everything, answer: { reply: "reject" } })
    expect(asked.asked.map((q) => q.permission)).toEqual(["sandbox"])
    const yolo: Array<Rule> = [...everything, { permission: "sandbox", pattern: "*", action: "deny" }]
    const denied = await call(`touch ${path.join(outside, "yolo.txt")}`, { rules: yolo, answer: { reply: "once" } })
    expect(denied.asked).toEqual([])
    expect(output(denied)).toContain("--yolo lifts no part of the sandbox")
    expect(fs.existsSync(path.join(outside, "yolo.txt"))).toBe(false)
  })

  test("without a person (non-interactive deny) the escalation is refused with what to do", async () => {
    const r = await call("git fetch http://127.0.0.1:9/x", {})
    expect(r.result._tag).toBe("Failure")
    expect(output(r)).toContain("nobody answered")
    expect(output(r)).toContain('"sandbox"')
  })
})
