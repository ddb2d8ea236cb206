// Issue 25: every bash command runs inside the OS sandbox (bubblewrap), --yolo included. Real commands
// through the built CLI: what is outside the writable set, the user's secrets, the network and the keys
// in the environment are out of reach, and the model is told why; the same work inside the project works.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { probeBwrap } from "@reins/sandbox"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { editConfig, ensureBuilt, lastToolResult, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const bwrap = probeBwrap()

// outside the project and outside /tmp (which the sandbox replaces with a private one)
const outside = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-cli-outside-"))
afterAll(() => fs.rmSync(outside, { recursive: true, force: true }))

const bash = (command: string) => [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }]

describe.skipIf(process.platform !== "linux")("the sandbox under reins run --yolo", () => {
  test("bubblewrap runs here (.ci/run installs it)", () => {
    expect(bwrap).toMatchObject({ available: true })
  })

  test("a delete outside the project is blocked and the model is told which path; inside, it works", async () => {
    fs.writeFileSync(path.join(outside, "victim.txt"), "keep me")
    const p = await setup(bash(`rm -f ${outside}/victim.txt; echo x > ${outside}/new.txt`))
    fs.writeFileSync(path.join(p.cwd, "mine.txt"), "x")
    const r = await reins(["run", "--yolo", "clean up"], p)
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("keep me")
    expect(fs.existsSync(path.join(outside, "new.txt"))).toBe(false)
    // the scan names the writes outside: lifting the sandbox for them is asked, and --yolo asks nothing: refused, not run
    const result = lastToolResult(p.server.requests)
    expect(result).toContain(`to write ${outside}`)
    expect(result).toContain("--yolo lifts no part of the sandbox")
    expect(result).toContain("it was not run")
    // a write the scan cannot see runs, and the sandbox stops it: the model is told which path
    const hidden = await setup(bash(`f=victim; d=$(printf %s ${outside}); rm -f "$d/$f.txt" || true; cd "$d" && echo x > new2.txt`))
    expect((await reins(["run", "--yolo", "clean up"], hidden)).code).toBe(0)
    expect(fs.readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("keep me")
    expect(lastToolResult(hidden.server.requests)).toContain("Blocked by reins's sandbox")
    const q = await setup(bash("rm mine.txt && echo made > made.txt"))
    fs.writeFileSync(path.join(q.cwd, "mine.txt"), "x")
    expect((await reins(["run", "--yolo", "clean up"], q)).code).toBe(0)
    expect(fs.existsSync(path.join(q.cwd, "mine.txt"))).toBe(false)
    expect(fs.readFileSync(path.join(q.cwd, "made.txt"), "utf8")).toBe("made\n")
    expect(lastToolResult(q.server.requests)).not.toContain("sandbox")
  })

  test("provider keys and other secrets in the environment do not reach the command (nor the model)", async () => {
    const p = await setup(bash('echo "k=$ANTHROPIC_API_KEY t=$GITHUB_TOKEN p=$DB_PASSWORD"; env | grep -c SECRET_VALUE || true'))
    const r = await reins(["run", "--yolo", "show"], {
      ...p,
      env: { ...p.env, ANTHROPIC_API_KEY: "SECRET_VALUE_1", GITHUB_TOKEN: "SECRET_VALUE_2", DB_PASSWORD: "SECRET_VALUE_3" }
    })
    expect(r.code).toBe(0)
    const result = lastToolResult(p.server.requests)
    expect(result).toContain("k= t= p=")
    expect(result).not.toContain("SECRET_VALUE")
  })

  test("~/.ssh and reins's auth store are hidden; the rest of home is readable", async () => {
    const p = await setup(bash("cat ~/.ssh/id_rsa; cat ~/notes.txt"))
    fs.mkdirSync(path.join(p.env.HOME!, ".ssh"), { recursive: true })
    fs.writeFileSync(path.join(p.env.HOME!, ".ssh", "id_rsa"), "PRIVATE-KEY-MATERIAL")
    fs.writeFileSync(path.join(p.env.HOME!, "notes.txt"), "ordinary notes")
    expect((await reins(["run", "--yolo", "read"], p)).code).toBe(0)
    const result = lastToolResult(p.server.requests)
    expect(result).not.toContain("PRIVATE-KEY-MATERIAL")
    expect(result).toContain("ordinary notes")
  })

  test("a file the read rules deny (*.env) is hidden from bash as from the read tool", async () => {
    const p = await setup(bash("cat config/.env; cat config/app.json"), { permission: { read: { "*.env": "deny" } } })
    fs.mkdirSync(path.join(p.cwd, "config"))
    fs.writeFileSync(path.join(p.cwd, "config", ".env"), "DB_PASSWORD=hunter2")
    fs.writeFileSync(path.join(p.cwd, "config", "app.json"), '{"port":1}')
    expect((await reins(["run", "--yolo", "read"], p)).code).toBe(0)
    const result = lastToolResult(p.server.requests)
    expect(result).not.toContain("hunter2")
    expect(result).toContain('{"port":1}')
  })

  test("no network: a server on 127.0.0.1 is not reached; sandbox.network all (the user's) reaches it", async () => {
    const server = net.createServer((socket) => socket.end("hello from the host\n"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as net.AddressInfo).port
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`
      const p = await setup(bash(probe))
      expect((await reins(["run", "--yolo", "fetch"], p)).code).toBe(0)
      expect(lastToolResult(p.server.requests)).not.toContain("hello from the host")
      expect(lastToolResult(p.server.requests)).toContain("no network")
      const q = await setup(bash(probe))
      editConfig(q, (c) => ({ ...c, sandbox: { network: { mode: "all" } } }))
      expect((await reins(["run", "--yolo", "fetch"], q)).code).toBe(0)
      expect(lastToolResult(q.server.requests)).toContain("hello from the host")
    } finally {
      server.close()
    }
  })

  test("sandbox.network allow (the user's): a listed host is reached through the proxy, an unlisted one is refused and named", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => new Response(`registry says ${new URL(r.url).pathname}\n`) })
    try {
      // localhost is the host's here only through the proxy (NO_PROXY sends it to the sandbox's own loopback)
      // the second host is computed at run time: the scan cannot name it, the proxy refuses it
      const fetch = `curl -sS -x "$HTTP_PROXY" --noproxy '' http://localhost:${server.port}/pkg; curl -sS "https://$(printf unlisted.example.org)/"`
      const p = await setup(bash(fetch))
      editConfig(p, (c) => ({ ...c, sandbox: { network: { mode: "allow", allow: ["@registries", "localhost"] } } }))
      expect((await reins(["run", "--yolo", "fetch"], p)).code).toBe(0)
      const result = lastToolResult(p.server.requests)
      expect(result).toContain("registry says /pkg")
      expect(result).toContain("CONNECT tunnel failed, response 403")
      expect(result).toContain("the sandbox's proxy refused host unlisted.example.org")
      // one the command names is an escalation, which --yolo refuses before anything runs
      const named = await setup(bash("curl -sS https://unlisted.example.org/"))
      editConfig(named, (c) => ({ ...c, sandbox: { network: { mode: "allow", allow: ["@registries", "localhost"] } } }))
      expect((await reins(["run", "--yolo", "fetch"], named)).code).toBe(0)
      expect(lastToolResult(named.server.requests)).toContain("--yolo lifts no part of the sandbox")
      // the same hosts from an untrusted project's config: no network at all
      const q = await setup(bash(fetch))
      fs.writeFileSync(path.join(q.cwd, "reins.json"), JSON.stringify({ sandbox: { network: { mode: "allow", allow: ["localhost"] } } }))
      expect((await reins(["run", "--yolo", "fetch"], q)).code).toBe(0)
      expect(lastToolResult(q.server.requests)).not.toContain("registry says")
      expect(lastToolResult(q.server.requests)).toContain("The command needs the network")
    } finally {
      void server.stop(true)
    }
  })

  test("--sandbox off runs the command as it is; an untrusted project cannot turn the sandbox off", async () => {
    fs.writeFileSync(path.join(outside, "off.txt"), "x")
    const p = await setup(bash(`rm ${outside}/off.txt`))
    expect((await reins(["run", "--yolo", "--sandbox", "off", "go"], p)).code).toBe(0)
    expect(fs.existsSync(path.join(outside, "off.txt"))).toBe(false)
    fs.writeFileSync(path.join(outside, "kept.txt"), "x")
    const q = await setup(bash(`rm ${outside}/kept.txt`))
    fs.writeFileSync(path.join(q.cwd, "reins.json"), JSON.stringify({ sandbox: { mode: "off", writable: [outside] } }))
    expect((await reins(["run", "--yolo", "go"], q)).code).toBe(0)
    expect(fs.existsSync(path.join(outside, "kept.txt"))).toBe(true)
  })

  test("hook commands run in the sandbox too: a formatter writes in the project, not outside; keys are not passed", async () => {
    fs.writeFileSync(path.join(outside, "hook-victim.txt"), "keep me")
    const p = await setup([{ toolCalls: [{ name: "write", arguments: { filePath: "a.txt", content: "x\n" } }] }, { text: "done" }])
    const hook = `echo "formatted k=$ANTHROPIC_API_KEY" >> "$FILE"; rm -f ${outside}/hook-victim.txt`
    editConfig(p, (c) => ({ ...c, hooks: { "tool.after": [{ command: hook, match: "write" }] } }))
    const r = await reins(["run", "--yolo", "write"], { ...p, env: { ...p.env, ANTHROPIC_API_KEY: "SECRET_VALUE_9" } })
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(p.cwd, "a.txt"), "utf8")).toBe("x\nformatted k=\n")
    expect(fs.readFileSync(path.join(outside, "hook-victim.txt"), "utf8")).toBe("keep me")
  })

  test("mode required without bubblewrap: nothing runs, and the model and the user are told what to do", async () => {
    const p = await setup(bash("touch ran.txt"))
    editConfig(p, (c) => ({ ...c, sandbox: { mode: "required" } }))
    const r = await reins(["run", "--yolo", "go"], { ...p, env: { ...p.env, REINS_BWRAP: "/nonexistent/bwrap" } })
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, "ran.txt"))).toBe(false)
    expect(lastToolResult(p.server.requests)).toContain('sandbox.mode is "required"')
    expect(lastToolResult(p.server.requests)).toContain("REINS_BWRAP names /nonexistent/bwrap")
  })
})
