// sandbox.network "allow": real bubblewrap, the real bridge and proxy, real curl and bash. Servers on the
// host's 127.0.0.1 stand in for registries; the proxy's resolver maps test names to them (the seam), so
// what is listed by name is reached through the proxy, and nothing is reached any other way.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Duplex } from "node:stream"
import {
  DEFAULT_ALLOWED_HOSTS,
  decide,
  expandAllowList,
  hostListing,
  isPrivateAddress,
  type Launch,
  parseHead,
  probeBwrap,
  profileFor,
  type Resolve,
  Sandbox,
  type SandboxConfig
} from "../src/index.ts"

const available = probeBwrap()
const curl = spawnSync("sh", ["-c", "command -v curl"]).status === 0
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-network-test-")))
const project = path.join(root, "project")
const home = path.join(root, "home")
const dataDir = path.join(home, ".local", "share", "reins")
for (const dir of [project, home, dataDir]) fs.mkdirSync(dir, { recursive: true })
const outside = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-network-outside-"))

const big = Buffer.alloc(6 * 1024 * 1024, 7).map((_, i) => (i * 31) & 255)
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
// a registry stand-in: echoes the path, serves a large file, counts an upload
const http = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (request) => {
    const url = new URL(request.url)
    if (url.pathname === "/big") return new Response(big)
    if (request.method === "POST") return new Response(`uploaded ${(await request.arrayBuffer()).byteLength}\n`)
    return new Response(`registry says ${url.pathname}\n`)
  }
})
// a TCP service behind CONNECT (what TLS would ride on): answers each line
const echo = net.createServer((socket) => socket.on("data", (d) => socket.end(`echo:${d}`)))
await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve))
const echoPort = (echo.address() as net.AddressInfo).port
// another service on the host's loopback that no entry names
const hidden = net.createServer((socket) => socket.end("HIDDEN SERVICE\n"))
await new Promise<void>((resolve) => hidden.listen(0, "127.0.0.1", resolve))
const hiddenPort = (hidden.address() as net.AddressInfo).port
afterAll(() => {
  void http.stop(true)
  echo.close()
  hidden.close()
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

// test names: each resolves to the host's loopback (where the stand-ins listen)
const resolve: Resolve = async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1" }] : [])
const allow: SandboxConfig = { network: { mode: "allow", allow: ["registry.test", "echo.test", "*.mirror.test"] } }
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C" }

/** Spawns a launch as the bash tool does: readFds as fd 3…, then the channel (a socketpair) handed to the proxy. */
const spawned = (launch: Launch, stdin?: string) =>
  new Promise<{ code: number | null; output: string }>((done) => {
    const fds = (launch.readFds ?? []).map((f) => fs.openSync(f, "r"))
    const child = spawn(launch.file, [...launch.args], {
      cwd: project,
      env: launch.env,
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", ...fds, ...(launch.channel ? (["pipe"] as const) : [])]
    })
    for (const fd of fds) fs.closeSync(fd)
    if (launch.channel) launch.channel.attach(child.stdio[3 + fds.length] as Duplex)
    if (stdin !== undefined) child.stdin?.end(stdin)
    const chunks: Array<Buffer> = []
    child.stdout?.on("data", (b: Buffer) => chunks.push(b))
    child.stderr?.on("data", (b: Buffer) => chunks.push(b))
    child.on("close", (code) => done({ code, output: Buffer.concat(chunks).toString("utf8") }))
  })

/** Runs `script` with bash in a sandbox built from `config`; PORT, ECHO and HIDDEN name the servers' ports. */
const run = (script: string, config: SandboxConfig = allow, stdin?: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox
      const text = script.replaceAll("PORT", String(http.port)).replaceAll("ECHO", String(echoPort)).replaceAll("HIDDEN", String(hiddenPort))
      const launch = yield* sandbox.wrap("/bin/bash", ["-c", `exec 2>&1; ${text}`], { cwd: project, env })
      const r = yield* Effect.promise(() => spawned(launch, stdin))
      return { ...r, explained: sandbox.explain(r.output, launch), refused: launch.channel?.refused ?? [] }
    }).pipe(Effect.provide(Sandbox.layer({ config, places: { project, home, dataDir }, resolve })), Effect.scoped)
  )

/** A raw CONNECT through the bridge's port with bash alone: the request line, then a line for the tunnel. */
const rawConnect = (target: string) =>
  `p=\${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p; printf 'CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\nping\\n' >&3; cat <&3`

describe.skipIf(process.platform !== "linux")("what the network tests need", () => {
  test("curl is here (.ci/run installs it): without it the tests below would not run", () => {
    expect(curl).toBe(true)
  })
})

describe.skipIf(process.platform !== "linux" || !available.available || !curl)("sandbox.network allow", () => {
  test("a listed host is reached through the proxy: plain http, and curl's CONNECT tunnel", async () => {
    const r = await run("curl -sS http://registry.test:PORT/pkg && curl -sS --proxytunnel http://registry.test:PORT/tunneled")
    expect(r.output).toBe("registry says /pkg\nregistry says /tunneled\n")
    expect(r).toMatchObject({ code: 0, explained: undefined, refused: [] })
  })

  test("a CONNECT tunnel carries raw bytes (what https rides on), sent with the request or after", async () => {
    const r = await run(rawConnect("echo.test:ECHO"))
    expect(r.output).toBe("HTTP/1.1 200 Connection Established\r\n\r\necho:ping\n")
  })

  test("large bodies both ways arrive whole (the channel's flow control)", async () => {
    fs.writeFileSync(path.join(project, "upload.bin"), big.subarray(0, 3 * 1024 * 1024))
    const r = await run(
      "curl -sS http://registry.test:PORT/big | sha256sum | cut -c1-64 && curl -sS --data-binary @upload.bin http://registry.test:PORT/up && curl -sS --proxytunnel http://registry.test:PORT/big | wc -c"
    )
    expect(r.output).toBe(`${sha(big)}\nuploaded ${3 * 1024 * 1024}\n${big.length}\n`)
  })

  test("an unlisted host gets 403 with a body that names it, and the model is told which host and how to allow it", async () => {
    const plain = await run("curl -sS http://other.test:PORT/x; curl -sS -o /dev/null -w '%{http_code}\\n' http://other.test:PORT/x")
    expect(plain.output).toContain(`reins's sandbox refused other.test: it is not in sandbox.network.allow`)
    expect(plain.output).toContain("403\n")
    const tls = await run("curl -sS https://unlisted.example.org/ ; exit 56")
    expect(tls.output).toContain("CONNECT tunnel failed, response 403")
    expect(tls.refused).toEqual(["unlisted.example.org"])
    expect(tls.explained).toContain("the sandbox's proxy refused host unlisted.example.org (not in sandbox.network.allow")
    expect(tls.explained).toContain('"network": {"allow": [')
  })

  test("no way around the proxy: direct connections, DNS, and the host's other loopback ports fail", async () => {
    for (const attempt of [
      "exec 3<>/dev/tcp/127.0.0.1/PORT && cat <&3",
      "exec 3<>/dev/tcp/127.0.0.1/HIDDEN && cat <&3",
      "curl -sS --noproxy '*' http://registry.test:PORT/direct",
      "curl -sS --noproxy '*' http://127.0.0.1:PORT/direct",
      // the proxy, asked for the host's loopback by IP: not listed, refused
      'curl -sS -x "$HTTP_PROXY" --noproxy "" http://127.0.0.1:HIDDEN/',
      'curl -sS -x "$HTTP_PROXY" --noproxy "" http://localhost:HIDDEN/'
    ]) {
      const r = await run(attempt)
      expect([attempt, r.code === 0 && !r.output.includes("refused"), r.output.includes("HIDDEN SERVICE") || r.output.includes("registry says")]).toEqual([
        attempt,
        false,
        false
      ])
    }
    const direct = await run("curl -sS --noproxy '*' http://registry.test:PORT/direct")
    expect(direct.explained).toContain("no direct network")
  })

  test("IP literals are refused unless listed as they are; a wildcard name that resolves to loopback is refused (rebinding)", async () => {
    for (const target of ["127.0.0.1:HIDDEN", "[::1]:HIDDEN", "127.0.0.1:ECHO"]) {
      const r = await run(rawConnect(target))
      expect([target, r.output.split("\r\n")[0]]).toEqual([target, "HTTP/1.1 403 Forbidden"])
      expect(r.output).not.toContain("echo:")
    }
    const rebound = await run(rawConnect("a.mirror.test:ECHO"))
    expect(rebound.output).toContain("it resolves to 127.0.0.1, a loopback or private address")
    // listed as it is, an IP literal is reached
    const listed = await run(rawConnect("127.0.0.1:ECHO"), { network: { allow: ["127.0.0.1"] } })
    expect(listed.output).toContain("echo:ping")
  })

  test("the command's exit code, stdin and environment come through the bridge; proxies are set, loopback is direct", async () => {
    const r = await run('read -r line; echo "got $line"; echo "$HTTPS_PROXY $NO_PROXY"; exit 7', allow, "hello\n")
    expect(r.code).toBe(7)
    expect(r.output).toMatch(/^got hello\nhttp:\/\/127\.0\.0\.1:\d+ localhost,127\.0\.0\.1,::1\n$/)
  })

  test("Unix-domain sockets stay refused in allow mode (the bridge needs none)", async () => {
    const sock = path.join(outside, "host.sock")
    const server = net.createServer((socket) => socket.end("REACHED THE HOST\n"))
    await new Promise<void>((done) => server.listen(sock, done))
    try {
      const r = await run(
        `${process.execPath} -e "require('net').connect('${sock}').on('data',d=>process.stdout.write(String(d))).on('error',e=>console.log('refused',e.code))"`
      )
      expect(r.output).not.toContain("REACHED THE HOST")
      expect(r.output).toContain("refused")
    } finally {
      server.close()
    }
  })

  test("stopping the runtime ends the proxy: a command holding a tunnel sees it close", async () => {
    // the far end says when the tunnel is up end to end: the command wrote through it after the 200
    const through = Promise.withResolvers<void>()
    const waiting = net.createServer((socket) => socket.on("data", (d) => String(d).includes("after-200") && through.resolve()))
    await new Promise<void>((done) => waiting.listen(0, "127.0.0.1", done))
    const port = (waiting.address() as net.AddressInfo).port
    const script = [
      `p=\${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p`,
      `printf 'CONNECT echo.test:${port} HTTP/1.1\\r\\n\\r\\n' >&3`,
      'read -r status <&3; echo "$status"',
      "printf 'after-200\\n' >&3",
      'cat <&3; echo "closed $?"'
    ].join("; ")
    try {
      const running = await Effect.runPromise(
        Effect.gen(function* () {
          const launch = yield* (yield* Sandbox).wrap("/bin/bash", ["-c", `exec 2>&1; ${script}`], { cwd: project, env })
          return spawned(launch)
        }).pipe(
          // the layer's scope closes once the tunnel carries bytes: the runtime stopping
          Effect.tap(() => Effect.promise(() => through.promise)),
          Effect.provide(Sandbox.layer({ config: allow, places: { project, home, dataDir }, resolve })),
          Effect.scoped
        )
      )
      const r = await running
      expect(r.output).toBe("HTTP/1.1 200 Connection Established\r\n\r\nclosed 0\n")
    } finally {
      waiting.close()
    }
  })
})

describe("the allowlist's rules", () => {
  test("exact names, *.suffix, IP literals only as listed; @registries is the default list", () => {
    const list = expandAllowList(["Registry.NPMjs.org.", "*.pypi.org", "10.0.0.5", "[::1]"])
    expect(list).toEqual(["registry.npmjs.org", "*.pypi.org", "10.0.0.5", "::1"])
    expect(hostListing(list, "registry.npmjs.org")).toBe("exact")
    expect(hostListing(list, "files.pypi.org")).toBe("wildcard")
    expect(hostListing(list, "pypi.org")).toBeUndefined()
    expect(hostListing(list, "evilpypi.org")).toBeUndefined()
    expect(hostListing(list, "10.0.0.5")).toBe("exact")
    expect(hostListing(list, "[::1]")).toBe("exact")
    expect(hostListing(["*"], "127.0.0.1")).toBeUndefined()
    expect(expandAllowList(undefined)).toEqual(DEFAULT_ALLOWED_HOSTS)
    expect(expandAllowList(["@registries", "api.example.com"])).toEqual([...DEFAULT_ALLOWED_HOSTS, "api.example.com"])
  })

  test("private and loopback addresses, mapped ones too; public ones are not", () => {
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1"
    ])
      expect([a, isPrivateAddress(a)]).toEqual([a, true])
    for (const a of ["93.184.216.34", "140.82.112.3", "2606:4700::6810:84e5", "fc::1", "::ffff:8.8.8.8"]) expect([a, isPrivateAddress(a)]).toEqual([a, false])
  })

  test("decide: a listed public name is reached at the address checked; an exact name may be private; a failed lookup is 502", async () => {
    const table: Resolve = async (h) =>
      h === "pub.example" ? [{ address: "93.184.216.34" }] : h === "mixed.example" ? [{ address: "93.184.216.34" }, { address: "10.0.0.1" }] : []
    expect(await decide(["*.example"], "pub.example", table)).toEqual({ ok: true, address: "93.184.216.34" })
    expect(await decide(["*.example"], "mixed.example", table)).toMatchObject({ ok: false, status: 403 })
    expect(await decide(["mixed.example"], "mixed.example", table)).toEqual({ ok: true, address: "93.184.216.34" })
    expect(await decide(["*.example"], "gone.example", table)).toMatchObject({ ok: false, status: 502 })
  })

  test("the profile: allow mode unshares the network like none, its caches are writable, `allow` alone implies the mode", () => {
    const places = { project, home, dataDir }
    expect(profileFor({ network: { allow: ["a.test"] } }, places)).toMatchObject({ network: "allow", allow: ["a.test"] })
    expect(profileFor({ network: { mode: "allow" } }, places).allow).toEqual(DEFAULT_ALLOWED_HOSTS)
    expect(profileFor({ network: { mode: "none", allow: ["a.test"] } }, places)).toMatchObject({ network: "none", allow: [] })
    expect(profileFor({}, places)).toMatchObject({ network: "none", allow: [] })
  })
})

describe("the proxy's request head", () => {
  test("a plain http request goes to the host it was judged by: its Host header is that one, whatever the client sent", () => {
    const r = parseHead("GET http://allowed.test:8080/x?y=1 HTTP/1.1\r\nHost: evil.example\r\nhost: other\r\nAccept: */*")
    expect(typeof r).toBe("object")
    if (typeof r === "string") return
    expect(r.host).toBe("allowed.test")
    expect(r.head).toContain("GET /x?y=1 HTTP/1.1\r\nHost: allowed.test:8080\r\n")
    expect(r.head).not.toContain("evil.example")
    expect(r.head).not.toMatch(/host: other/i)
  })
})
