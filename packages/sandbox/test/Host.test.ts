// What a sandbox host says is parsed as untrusted (Host.ts): a command that reached the host's output (with
// ptrace allowed, through pidfd_getfd) could write anything there. A frame longer than MAX_FRAME or an exit that
// does not parse ends the host and its commands as killed; reins goes on. A host that ends, or does not answer
// a kill, ends its commands as killed. Here the host is a script saying exactly that, as pid 1 of a bubblewrap.
import { afterAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { HOST_FRAME, HOST_KILL_WAIT_MS, probeBwrap, startHost } from "../src/index.ts"

const bwrap = probeBwrap()

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-host-frames-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const frame = (kind: number, id: number, body: Buffer | string) => {
  const b = typeof body === "string" ? Buffer.from(body) : body
  const head = Buffer.alloc(9)
  head.writeUInt8(kind, 0)
  head.writeUInt32LE(id, 1)
  head.writeUInt32LE(b.length, 5)
  return Buffer.concat([head, b])
}

/** A host that is ready, then answers the first order with `said` (or does `then`). */
const fakeHost = (said: Buffer, then = "") => {
  const script = path.join(dir, `host-${Math.random().toString(36).slice(2)}.js`)
  fs.writeFileSync(
    script,
    `process.stdout.write(Buffer.from(${JSON.stringify(frame(HOST_FRAME.ready, 0, "").toString("hex"))}, "hex"))
process.stdin.once("data", () => { process.stdout.write(Buffer.from(${JSON.stringify(said.toString("hex"))}, "hex")); ${then} })
process.stdin.on("end", () => process.exit(0))`
  )
  if (!bwrap.available) throw new Error("no bubblewrap")
  return startHost({
    bwrap: bwrap.bwrap,
    bwrapArgs: ["--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--as-pid-1", "--"],
    command: [process.execPath, script],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    readFds: [],
    key: "k"
  })
}

const ready = async (host: ReturnType<typeof startHost>) => {
  while (!host.ready()) {
    if (host.ended()) throw new Error("the host ended before it was ready")
    await Bun.sleep(5)
  }
}

describe.skipIf(!bwrap.available)("a host's frames", () => {
  const broken: ReadonlyArray<[string, Buffer]> = [
    ["a frame longer than MAX_FRAME", Buffer.concat([frame(HOST_FRAME.stdout, 1, "").subarray(0, 5), Buffer.from([0xff, 0xff, 0xff, 0x7f])])],
    ["an exit that is not JSON", frame(HOST_FRAME.exit, 1, "{x}")],
    ["an exit whose code is a string", frame(HOST_FRAME.exit, 1, JSON.stringify({ code: "7", signal: null }))],
    ["an exit whose signal is a number", frame(HOST_FRAME.exit, 1, JSON.stringify({ code: null, signal: 9 }))]
  ]
  for (const [name, said] of broken) {
    test(`${name}: the host ends and its command ends as killed`, async () => {
      const host = fakeHost(said)
      await ready(host)
      const child = host.spawn("/bin/true", [], {}, dir)
      const closed = await new Promise<Array<unknown>>((resolve) => child.on("close", (...a) => resolve(a)))
      expect(closed).toEqual([null, "SIGKILL"])
      expect(host.ended()).toBe(true)
      expect(host.failed()).toBe(false)
    })
  }

  test("a host that ends while its command runs: the command ends as killed", async () => {
    const host = fakeHost(Buffer.alloc(0), "process.exit(0)")
    await ready(host)
    const child = host.spawn("/bin/true", [], {}, dir)
    expect(await new Promise<Array<unknown>>((resolve) => child.on("close", (...a) => resolve(a)))).toEqual([null, "SIGKILL"])
    expect(host.failed()).toBe(false)
  })

  test("a host that does not answer a kill: HOST_KILL_WAIT_MS later it and its command end", async () => {
    const host = fakeHost(Buffer.alloc(0))
    await ready(host)
    const child = host.spawn("/bin/true", [], {}, dir)
    const closed = new Promise<Array<unknown>>((resolve) => child.on("close", (...a) => resolve(a)))
    const killedAt = Date.now()
    child.killGroup()
    expect(await closed).toEqual([null, "SIGKILL"])
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(HOST_KILL_WAIT_MS - 50)
    expect(host.ended()).toBe(true)
  })

  test("frames for no command, of an unknown kind, then a good exit: the command's own exit", async () => {
    const host = fakeHost(
      Buffer.concat([
        frame(HOST_FRAME.stdout, 99, "not yours"),
        frame(200, 1, "?"),
        frame(HOST_FRAME.stdout, 1, "out"),
        frame(HOST_FRAME.exit, 1, JSON.stringify({ code: 3, signal: null }))
      ])
    )
    await ready(host)
    const child = host.spawn("/bin/true", [], {}, dir)
    const out: Array<string> = []
    child.stdout.on("data", (b: Buffer) => out.push(b.toString()))
    const closed = await new Promise<Array<unknown>>((resolve) => child.on("close", (...a) => resolve(a)))
    expect(closed).toEqual([3, null])
    expect(out).toEqual(["out"])
    expect(host.ended()).toBe(false)
    host.close()
  })
})
