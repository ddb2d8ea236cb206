// The session's long-lived sandbox (@reins/sandbox Host.ts) as the bash tool runs commands in it: after the
// first command (which runs in a bubblewrap of its own while the host starts), commands are spawned by the
// host inside one bubblewrap with the same mounts, and reins sees them as its own children: output, exit,
// the process group outside (recorded, killed, waited for), a long command on stdin, a timeout. A host
// killed from inside ends its commands as killed and another starts; a mount that changed (a secret place
// made, a read-only file replaced) starts another; a grant runs in a bubblewrap of its own. Real bubblewrap.
import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Fiber, type Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { probeBwrap, Sandbox } from "@reins/sandbox"
import { ARGV_MAX, runCommand, shellSpawn } from "../src/builtin/bash.ts"
import { groupRunning } from "../src/builtin/ProcessGroup.ts"

const available = process.platform === "linux" && probeBwrap().available
// not under /tmp, which the sandbox keeps writable
const root = fs.realpathSync(fs.mkdtempSync("/var/tmp/reins-host-"))
const project = path.join(root, "project")
const home = path.join(root, "home")
const dataDir = path.join(root, "data")
for (const d of [project, path.join(home, ".ssh"), dataDir, path.join(project, ".git", "hooks")]) fs.mkdirSync(d, { recursive: true })
fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "KEY")
fs.writeFileSync(path.join(dataDir, "auth.json"), "AUTH-OLD")
fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n\tbare = false\n")
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const sandboxLayer = (): Layer.Layer<Sandbox> => Sandbox.layer({ config: {}, places: { project, home, dataDir } })

interface Ran {
  readonly output: string
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly hosted: boolean
  readonly pid: number | undefined
}

interface RunOptions {
  readonly timeoutMs?: number
  readonly grant?: boolean
  readonly onStart?: (pid: number) => void
}

/** Runs `command` as the bash tool does, in the sandbox. */
const ran = (command: string, options: RunOptions = {}) =>
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    const plain = shellSpawn(command)
    const wrapped = yield* sandbox.wrap(plain.file, plain.args, {
      cwd: project,
      env: plain.env,
      ...(options.grant ? { grant: { writable: [path.join(root, "outside")] } } : {})
    })
    const launch = { ...wrapped, ...(plain.input !== undefined ? { input: plain.input } : {}) }
    const chunks: Array<Buffer> = []
    let pid: number | undefined
    const outcome = yield* runCommand(
      command,
      project,
      options.timeoutMs ?? 60_000,
      { write: (b) => chunks.push(b) },
      (p) => {
        pid = p
        options.onStart?.(p)
      },
      launch
    )
    return { ...outcome, output: Buffer.concat(chunks).toString("utf8"), hosted: launch.hosted !== undefined, pid } satisfies Ran
  })

const run = (runtime: ManagedRuntime.ManagedRuntime<Sandbox, never>, command: string, options: RunOptions = {}) => runtime.runPromise(ran(command, options))

/** What is pid 1 of the command's sandbox: bubblewrap's init in one of its own, the host (bun, its name as comm keeps it) in the long-lived one. */
const WHO = "cat /proc/1/comm"
const HOST = `${path.basename(fs.realpathSync(process.execPath)).slice(0, 15)}\n`

/** Runs `true` until a command is hosted (the host has started): each one before runs in a bubblewrap of its own. */
const untilHosted = async (runtime: ManagedRuntime.ManagedRuntime<Sandbox, never>) => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const one = await run(runtime, WHO)
    if (one.output === HOST) return expect(one.hosted).toBe(true)
    expect(one).toMatchObject({ output: "bwrap\n" })
    if (Date.now() > deadline) throw new Error("no command was hosted in 60 s")
  }
}

describe.skipIf(!available)("the long-lived sandbox", () => {
  test("commands run in it once it started: output, exit code, stderr joined, the sandbox's own rules", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      const first = await run(runtime, WHO)
      expect(first).toMatchObject({ hosted: false, output: "bwrap\n", exitCode: 0 })
      await untilHosted(runtime)
      expect(await run(runtime, "echo out; echo err >&2; exit 3")).toMatchObject({ hosted: true, output: "out\nerr\n", exitCode: 3, signal: null })
      // secrets hidden, the project writable, outside read-only, no network: as a command of its own
      const secret = await run(runtime, "cat ~/.ssh/id_rsa")
      expect(secret.output).not.toContain("KEY")
      expect(secret.exitCode).not.toBe(0)
      expect((await run(runtime, "echo made > made.txt && cat made.txt")).output).toBe("made\n")
      const outside = await run(runtime, `echo x > ${path.join(root, "outside.txt")}`)
      expect(outside.output).toContain("Read-only file system")
      expect(fs.existsSync(path.join(root, "outside.txt"))).toBe(false)
      // the network namespace's own interfaces (/sys shows the mounter's)
      expect((await run(runtime, "tail -n +3 /proc/net/dev | cut -d: -f1")).output.trim()).toBe("lo")
      expect((await run(runtime, "echo x > .git/hooks/pre-commit")).output).toContain("Read-only file system")
      // a command too long for an argument comes on stdin
      const long = `echo ${"y".repeat(ARGV_MAX + 10)} | wc -c; ${WHO}`
      expect(await run(runtime, long)).toMatchObject({ hosted: true, output: `${ARGV_MAX + 11}\n${HOST}`, exitCode: 0 })
      // a signal's death as a bubblewrap of its own reports it: exit 128+n
      expect(await run(runtime, "kill -TERM $$")).toMatchObject({ hosted: true, exitCode: 143, signal: null })
      // the host cannot be looked into (non-dumpable): its pipes to reins, its environment; a command of its own
      // (dumpable, same uid) can be
      const peek = await run(runtime, "readlink /proc/$PPID/fd/1 || echo no-fd; cat /proc/$PPID/environ || echo no-environ")
      expect(peek).toMatchObject({ hosted: true })
      expect(peek.output).toContain("no-fd")
      expect(peek.output).toContain("no-environ")
      expect((await run(runtime, "sh -c 'readlink /proc/$PPID/fd/1 >/dev/null && echo own-fd'")).output).toBe("own-fd\n")
    } finally {
      await runtime.dispose()
    }
  })

  test("its command's process group is the one outside: recorded, killed by an interrupt, by the timeout", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      await untilHosted(runtime)
      const started = Promise.withResolvers<number>()
      const fiber = runtime.runFork(ran("sleep 1000 & sleep 1000; echo never", { onStart: (pid) => started.resolve(pid) }))
      const pid = await started.promise
      // the pid outside, whose pid in the sandbox is another (NSpid: outside, inside)
      const ns = /^NSpid:\s+(.*)$/m
        .exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
        ?.trim()
        .split(/\s+/)
      expect(ns?.[0]).toBe(String(pid))
      expect(ns).toHaveLength(2)
      expect(groupRunning(pid)).toBe(true)
      await runtime.runPromise(Fiber.interrupt(fiber))
      expect(groupRunning(pid)).toBe(false)
      // what the killed command left (dying) spoiled that host
      await untilHosted(runtime)
      const timed = await run(runtime, "echo before; sleep 1000 & sleep 1000", { timeoutMs: 300 })
      expect(timed).toMatchObject({ hosted: true, timedOut: true, output: "before\n" })
      expect(timed.pid).toBeDefined()
      expect(groupRunning(timed.pid ?? 0)).toBe(false)
    } finally {
      await runtime.dispose()
    }
  })

  test("what a command leaves behind ends with it, as in a sandbox of its own: holding its output or not, in its session or a new one", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      await untilHosted(runtime)
      // the sleeps hold the command's output open: the command still ends when its shell does
      const left = await run(runtime, "sleep 1001 & setsid sleep 1002 & nohup sleep 1003 >/dev/null 2>&1 & echo bg")
      expect(left).toMatchObject({ hosted: true, output: "bg\n", exitCode: 0, timedOut: false })
      // a host something was left in is not used again: the next command runs in a bubblewrap of its own
      expect((await run(runtime, "echo next")).hosted).toBe(false)
      await untilHosted(runtime)
      expect((await run(runtime, "cat /proc/[0-9]*/cmdline | tr '\\0' ' '")).output).not.toMatch(/sleep 100[123]/)
      // so is one with something left in /dev/shm or System V IPC
      for (const leave of ["echo x > /dev/shm/note", "ipcmk -M 4096 >/dev/null"]) {
        await untilHosted(runtime)
        expect((await run(runtime, leave)).hosted).toBe(true)
        expect((await run(runtime, "ls /dev/shm; ipcs -m | grep -c 0x || true")).hosted).toBe(false)
      }
      // two at once: one is hosted, the other gets a bubblewrap of its own (no shared pid namespace)
      await untilHosted(runtime)
      // both launches made while the host was idle, then both spawned: the host takes the first only
      const both = await runtime.runPromise(
        Effect.gen(function* () {
          const sandbox = yield* Sandbox
          const plain = shellSpawn(`sleep 0.2; ${WHO}`)
          const launches = [
            yield* sandbox.wrap(plain.file, plain.args, { cwd: project, env: plain.env }),
            yield* sandbox.wrap(plain.file, plain.args, { cwd: project, env: plain.env })
          ]
          expect(launches.every((l) => l.hosted !== undefined)).toBe(true)
          return yield* Effect.all(
            launches.map((launch) => {
              const chunks: Array<Buffer> = []
              return runCommand("", project, 60_000, { write: (b) => chunks.push(b) }, undefined, launch).pipe(
                Effect.map(() => Buffer.concat(chunks).toString())
              )
            }),
            { concurrency: "unbounded" }
          )
        })
      )
      expect(both.sort()).toEqual([HOST, "bwrap\n"].sort())
    } finally {
      await runtime.dispose()
    }
  })

  test("a sandbox's kernel settings are read-only and its keyrings refused, hosted or not; an orphan collected keeps the host", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      const probe = [
        "for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/msgmax /proc/sys/fs/mqueue/msg_max /proc/sys/kernel/pid_max /proc/sysrq-trigger; do test -w $f && echo writable $f; done",
        "{ echo 1234 > /proc/sys/kernel/msgmax; } 2>/dev/null || echo refused",
        // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING): the seccomp filter's EPERM
        `perl -e 'print syscall(${process.arch === "arm64" ? 219 : 250}, 0, -3, 0) == -1 ? "keys: $!\\n" : "keys allowed\\n"'`
      ].join("; ")
      const own = await run(runtime, probe)
      await untilHosted(runtime)
      const hosted = await run(runtime, probe)
      for (const r of [own, hosted]) expect(r.output).toBe("refused\nkeys: Operation not permitted\n")
      expect(hosted.hosted).toBe(true)
      // an orphan that ended before its command did is collected by the host, which stays in use
      expect(await run(runtime, "(sleep 0.1 &); sleep 0.5; echo done")).toMatchObject({ hosted: true, output: "done\n" })
      expect(await run(runtime, WHO)).toMatchObject({ hosted: true, output: HOST })
    } finally {
      await runtime.dispose()
    }
  })

  test("the host is the sandbox's pid 1: a command cannot kill or stop it", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      await untilHosted(runtime)
      // the signals it handles (as pid 1 no other reaches it), sent many times: one that came while a spawn had signals blocked ended it
      expect(
        await run(
          runtime,
          "kill -9 -1 2>/dev/null; kill -STOP 1; kill -9 1; for i in $(seq 50); do kill -USR1 1; kill -TERM 1; kill -HUP 1; done; echo survived"
        )
      ).toMatchObject({
        hosted: true,
        output: "survived\n",
        exitCode: 0
      })
      expect(await run(runtime, WHO)).toMatchObject({ hosted: true, output: HOST })
    } finally {
      await runtime.dispose()
    }
  })

  test("what would outlive a command in the host spoils it: /dev changed, a message queue, its limits, priority or CPUs", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      const spoilers = [
        "rm /dev/stdout && ln -s /proc/self/fd/999 /dev/stdout",
        "rmdir /dev/shm && ln -s /tmp /dev/shm",
        "touch /dev/mqueue/left",
        "prlimit --pid 1 --fsize=4096",
        "prlimit --pid 1 --nproc=1:1",
        "renice -n 5 -p 1 >/dev/null",
        "taskset -p 1 1 >/dev/null",
        // a loopback connection its server closed first: TIME_WAIT in the host's network namespace
        `"${process.execPath}" -e 'const n = require("net"); const s = n.createServer((c) => c.end()).listen(5555, "127.0.0.1", () => { const c = n.connect(5555, "127.0.0.1"); c.resume(); c.on("close", () => s.close()) })'`,
        // root only (reins run as root): the host's own /proc files
        ...(process.getuid?.() === 0 ? ["echo 1000 > /proc/1/oom_score_adj", "echo 0 > /proc/1/coredump_filter"] : [])
      ]
      for (const spoiler of spoilers) {
        await untilHosted(runtime)
        expect(await run(runtime, spoiler)).toMatchObject({ hosted: true, exitCode: 0 })
        // the next one runs in a bubblewrap of its own, and finds none of it
        const next = await run(
          runtime,
          `${WHO}; readlink /dev/stdout; test -e /dev/mqueue/left || echo no-queue; ulimit -f; nice; test ! -L /dev/shm && echo shm-dir`
        )
        expect(next).toMatchObject({ output: "bwrap\n/proc/self/fd/1\nno-queue\nunlimited\n0\nshm-dir\n" })
      }
    } finally {
      await runtime.dispose()
    }
  })

  test("a mount that changed starts another: a secret place made since, a read-only file replaced", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      // a hidden file renamed over while the host starts (after bubblewrap mounted over it): that host is not used
      const auth = path.join(dataDir, "auth.json")
      await run(runtime, "true")
      fs.writeFileSync(`${auth}.new`, "AUTH-STARTING")
      fs.renameSync(`${auth}.new`, auth)
      await untilHosted(runtime)
      expect((await run(runtime, `cat ${auth}`)).output).not.toContain("AUTH-STARTING")
      // made after the host mounted what was there: hidden from the next command as from a command of its own
      fs.mkdirSync(path.join(home, ".aws"), { recursive: true })
      fs.writeFileSync(path.join(home, ".aws", "credentials"), "AWS-SECRET")
      const aws = await run(runtime, "cat ~/.aws/credentials")
      expect(aws.output).not.toContain("AWS-SECRET")
      // .git/config is bound read-only by its inode: one renamed over it outside is what the next command reads
      fs.writeFileSync(path.join(project, ".git", "config.new"), "[core]\n\tbare = false\n[user]\n\tname = renamed\n")
      fs.renameSync(path.join(project, ".git", "config.new"), path.join(project, ".git", "config"))
      expect((await run(runtime, "cat .git/config")).output).toContain("renamed")
      await untilHosted(runtime)
      expect((await run(runtime, "cat .git/config; cat ~/.aws/credentials")).output).not.toContain("AWS-SECRET")
      // a hidden file renamed over outside (as reins writes its auth store): the mount hiding it is dropped, and
      // with it the host; removed and made again (the inode number may come back): the same
      fs.writeFileSync(`${auth}.new`, "AUTH-NEW")
      fs.renameSync(`${auth}.new`, auth)
      expect((await run(runtime, `cat ${auth}`)).output).not.toContain("AUTH-NEW")
      await untilHosted(runtime)
      fs.rmSync(path.join(home, ".aws"), { recursive: true })
      fs.mkdirSync(path.join(home, ".aws"))
      fs.writeFileSync(path.join(home, ".aws", "credentials"), "AWS-AGAIN")
      fs.rmSync(path.join(project, ".git", "hooks"), { recursive: true })
      fs.mkdirSync(path.join(project, ".git", "hooks"))
      const again = await run(runtime, `cat ${path.join(home, ".aws", "credentials")}; echo x > .git/hooks/pre-commit`)
      expect(again.output).not.toContain("AWS-AGAIN")
      expect(again.output).toContain("Read-only file system")
      expect(fs.existsSync(path.join(project, ".git", "hooks", "pre-commit"))).toBe(false)
    } finally {
      fs.rmSync(path.join(home, ".aws"), { recursive: true, force: true })
      await runtime.dispose()
    }
  })

  test("a command with a grant runs in a bubblewrap of its own", async () => {
    const runtime = ManagedRuntime.make(sandboxLayer())
    try {
      await untilHosted(runtime)
      fs.mkdirSync(path.join(root, "outside"), { recursive: true })
      const granted = await run(runtime, `${WHO}; echo y > ${path.join(root, "outside", "y")}`, { grant: true })
      expect(granted).toMatchObject({ hosted: false, output: "bwrap\n", exitCode: 0 })
    } finally {
      await runtime.dispose()
    }
  })
})
