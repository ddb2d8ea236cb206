// The sandbox host's body: the one program a session's long-lived sandbox runs (Host.ts). It reads orders
// as JSON lines on stdin — run a command (its program, arguments, environment, directory and what it reads
// on stdin), or kill it — and answers in frames on stdout: started (the command's pid in the sandbox, once
// it has its whole input), output, exit, error, and `tainted` when the command left something behind.
// It runs one command at a time (reins sends no other meanwhile), as a process group and session of its
// own. It is the sandbox's pid 1 (bwrap --as-pid-1: no other process there holds its pipes, and signals a
// command sends it are ignored). When the command's shell exits, every other process of the sandbox is killed
// (kill(-1): a fork under way is stopped too), as the sandbox of a command of its own ends with its shell. What
// would outlive the command taints the host — a process found then, anything changed in /dev (a tmpfs of the
// sandbox's: /dev/shm, POSIX message queues, its links), a System V IPC object, the host's own limits,
// priority or CPUs (which its next commands would inherit) — and reins starts another.
// Before anything it makes itself non-dumpable (prctl): a command (same uid, no capabilities) can then
// neither ptrace it nor take its pipes to reins (pidfd_getfd, /proc/<pid>/fd). Without that it exits at once,
// and reins runs each command in a bubblewrap of its own.
// It runs with reins's own runtime, as `bun -e <script>` (hostMain must stay self-contained) or in the
// standalone executable as its SandboxHost helper (Helper.ts).

/** The frame kinds, host to reins: [kind u8][id u32 LE][length u32 LE][payload]. */
export const HOST_FRAME = { ready: 0, started: 1, stdout: 2, stderr: 3, exit: 4, error: 5, tainted: 6 } as const

/** An order, reins to host: one JSON line. */
export type HostOrder =
  | {
      readonly t: "run"
      readonly id: number
      readonly file: string
      readonly args: ReadonlyArray<string>
      readonly env: Readonly<Record<string, string>>
      readonly cwd: string
      readonly input?: string
    }
  | { readonly t: "kill"; readonly id: number }

export function hostMain() {
  const { spawn } = require("node:child_process") as typeof import("node:child_process")
  const fs = require("node:fs") as typeof import("node:fs")
  const os = require("node:os") as typeof import("node:os")
  const K = { ready: 0, started: 1, stdout: 2, stderr: 3, exit: 4, error: 5, tainted: 6 }
  // only as pid 1 of a sandbox's own pid namespace: its sweep is kill(-1), which anywhere else reaches every process
  // the user may signal
  if (process.pid !== 1) {
    process.stderr.write("reins sandbox host: runs only as pid 1 of a sandbox (bwrap --unshare-pid --as-pid-1)\n")
    process.exit(2)
  }
  const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi")
  const libcOf = () => {
    for (const lib of ["libc.so.6", "libc.so", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`]) {
      try {
        return dlopen(lib, {
          prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
          syscall: { args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64], returns: FFIType.i64 },
          waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 }
        }).symbols
      } catch {}
    }
    return undefined
  }
  const libc = libcOf()
  // PR_SET_DUMPABLE 0, then PR_GET_DUMPABLE to be sure
  if (libc === undefined || libc.prctl(4, 0, 0, 0, 0) !== 0 || libc.prctl(3, 0, 0, 0, 0) !== 0) process.exit(3)
  // ioprio_get(IOPRIO_WHO_PROCESS, self): a command may lower it as it may the priority
  const ioprio = () => String(libc.syscall(process.arch === "arm64" ? 31 : 252, 1, 0, 0, 0))
  // sched_getattr(self): the whole of it (a time slice, utilization clamps), which commands inherit
  const attr = new Uint8Array(128)
  const schedAttr = () => {
    attr.fill(0)
    const { ptr } = require("bun:ffi") as typeof import("bun:ffi")
    const size = libc.syscall(process.arch === "arm64" ? 275 : 315, 0, Number(ptr(attr)), attr.length, 0)
    return `${String(size)}:${Buffer.from(attr).toString("hex")}`
  }
  // as pid 1 it is the parent of what a command left: collected (its shell, Bun's own child, was already)
  const reap = () => {
    while (libc.waitpid(-1, null, 1) > 0) {}
  }
  // as pid 1 only signals it handles reach it, but one sent while a spawn has them blocked is kept and would end it
  for (const signal of [
    "SIGUSR1",
    "SIGUSR2",
    "SIGTERM",
    "SIGHUP",
    "SIGINT",
    "SIGALRM",
    "SIGQUIT",
    "SIGPIPE",
    "SIGVTALRM",
    "SIGPROF",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGTRAP"
  ])
    try {
      process.on(signal as NodeJS.Signals, () => {})
    } catch {}
  // its own network namespace (not the machine's): a socket left in it (TIME_WAIT) would meet the next command
  const ownNet = process.argv.includes("own-net")
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, "utf8")
    } catch {
      return ""
    }
  }
  const listing = (dir: string): string =>
    entries(dir)
      .sort()
      .map((name) => {
        const file = `${dir}/${name}`
        try {
          const st = fs.lstatSync(file)
          return `${name}:${st.mode}:${st.ino}:${st.isSymbolicLink() ? fs.readlinkSync(file) : ""}`
        } catch {
          return `${name}:gone`
        }
      })
      .join("/")
  /** What later commands would find of earlier ones outside their files: /dev, IPC objects, the host's limits, scheduling and CPUs. */
  const state = () => {
    const stat = read("/proc/self/stat")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return [
      listing("/dev"),
      listing("/dev/shm"),
      listing("/dev/mqueue"),
      ...["shm", "msg", "sem"].map((k) => read(`/proc/sysvipc/${k}`)),
      read("/proc/self/limits"),
      read("/proc/self/oom_score_adj"),
      read("/proc/self/coredump_filter"),
      schedAttr(),
      // the namespace's own counts (in use, TIME_WAIT): /proc/net/tcp would walk the machine's whole table (~3 ms)
      ...(ownNet
        ? ["sockstat", "sockstat6"].map(
            (k) =>
              read(`/proc/net/${k}`)
                .match(/\b(?:inuse|tw) \d+/g)
                ?.join(" ") ?? ""
          )
        : []),
      // priority, nice, rt priority, policy
      [fields[15], fields[16], fields[37], fields[38]].join(" "),
      /^Cpus_allowed_list:.*$/m.exec(read("/proc/self/status"))?.[0] ?? "",
      ioprio()
    ].join("\n")
  }
  let running: ReturnType<typeof spawn> | undefined
  let runningID: number | undefined
  const send = (kind: number, id: number, payload: Uint8Array | string = "") => {
    const body = typeof payload === "string" ? Buffer.from(payload) : payload
    const head = Buffer.allocUnsafe(9)
    head.writeUInt8(kind, 0)
    head.writeUInt32LE(id, 1)
    head.writeUInt32LE(body.length, 5)
    // a command writing faster than reins reads waits, as it would on a pipe of its own
    if (!process.stdout.write(body.length === 0 ? head : Buffer.concat([head, body]))) {
      running?.stdout?.pause()
      running?.stderr?.pause()
    }
  }
  process.stdout.on("drain", () => {
    running?.stdout?.resume()
    running?.stderr?.resume()
  })
  const entries = (dir: string) => {
    try {
      return fs.readdirSync(dir)
    } catch {
      return []
    }
  }
  const initial = state()
  /** Kills every process but the host; whether there was one, or the sandbox's state changed. */
  const sweep = () => {
    reap()
    const left = entries("/proc").some((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid && !/^\S+ \(.*\) Z/s.test(read(`/proc/${entry}/stat`)))
    if (left) {
      try {
        process.kill(-1, "SIGKILL")
      } catch {}
    }
    return left || state() !== initial
  }
  const run = (order: Extract<HostOrder, { t: "run" }>) => {
    const { id, input } = order
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(order.file, [...order.args], {
        cwd: order.cwd,
        env: order.env,
        detached: true,
        stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
      })
    } catch (error) {
      send(K.error, id, error instanceof Error ? error.message : String(error))
      send(K.exit, id, JSON.stringify({ code: null, signal: null }))
      return
    }
    running = child
    runningID = id
    const pid = child.pid
    let told = false
    const started = () => {
      if (told || pid === undefined) return
      told = true
      send(K.started, id, String(pid))
    }
    if (input === undefined || child.stdin === null) started()
    else {
      child.stdin.on("error", started)
      child.stdin.once("close", started)
      child.stdin.end(input)
    }
    child.stdout?.on("data", (chunk: Buffer) => send(K.stdout, id, chunk))
    child.stderr?.on("data", (chunk: Buffer) => send(K.stderr, id, chunk))
    child.on("error", (error) => send(K.error, id, error.message))
    // the shell ended: so does what it left behind (which may hold its output open), then its output ends
    let tainted = false
    child.on("exit", () => {
      tainted = sweep()
    })
    child.on("close", (code, signal) => {
      if (running === child) running = undefined
      // again: what the first sweep killed may still be a zombie of the host's (it is their init)
      if (sweep() || tainted) send(K.tainted, id)
      // a signal's death as bubblewrap reports its command's: 128 + its number
      const number = signal ? os.constants.signals[signal as keyof typeof os.constants.signals] : undefined
      send(K.exit, id, JSON.stringify(number !== undefined ? { code: 128 + number, signal: null } : { code: code ?? null, signal: signal ?? null }))
    })
  }
  let pending = ""
  process.stdin.setEncoding("utf8")
  process.stdin.on("data", (text: string) => {
    pending += text
    let at = pending.indexOf("\n")
    while (at >= 0) {
      const order = JSON.parse(pending.slice(0, at)) as HostOrder
      pending = pending.slice(at + 1)
      if (order.t === "run") run(order)
      else if (order.id === runningID && running?.pid !== undefined) {
        try {
          process.kill(-running.pid, "SIGKILL")
        } catch {}
      }
      at = pending.indexOf("\n")
    }
  })
  // reins is gone or done with the sandbox: so is everything in it (bwrap's init kills what is left)
  process.stdin.on("end", () => process.exit(0))
  send(K.ready, 0)
}

/** The host as a script for `bun -e`. */
export const hostScript = `(${hostMain.toString()})()`
