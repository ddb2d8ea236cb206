// The sandbox host's body: the one program a session's long-lived sandbox runs (Host.ts). It reads orders
// as JSON lines on stdin — run a command (its program, arguments, environment, directory and what it reads
// on stdin), or kill it — and answers in frames on stdout: started (the command's pid in the sandbox, once
// it has its whole input), output, exit, error, and `tainted` when the command left something behind.
// It runs one command at a time (reins sends no other meanwhile), as a process group and session of its
// own. When the command's shell exits, every other process of the sandbox is killed, as the sandbox of a
// command of its own ends with its shell; one found then, or a file in /dev/shm, or a System V IPC object,
// taints the host: reins starts another rather than trust a sweep a process could race.
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
  // PR_SET_DUMPABLE 0, then PR_GET_DUMPABLE to be sure
  const undumpable = () => {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi")
    for (const lib of ["libc.so.6", "libc.so", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`]) {
      try {
        const libc = dlopen(lib, { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } })
        return libc.symbols.prctl(4, 0, 0, 0, 0) === 0 && libc.symbols.prctl(3, 0, 0, 0, 0) === 0
      } catch {}
    }
    return false
  }
  if (!undumpable()) process.exit(3)
  let running: ReturnType<typeof spawn> | undefined
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
  const lines = (file: string) => {
    try {
      return fs.readFileSync(file, "utf8").trim().split("\n").length - 1
    } catch {
      return 0
    }
  }
  /** Kills every process but bubblewrap's init and the host; whether there was one, or anything left in /dev/shm or IPC. */
  const sweep = () => {
    let left = false
    for (const entry of entries("/proc")) {
      if (!/^\d+$/.test(entry) || entry === "1" || Number(entry) === process.pid) continue
      left = true
      try {
        process.kill(Number(entry), "SIGKILL")
      } catch {}
    }
    return left || entries("/dev/shm").length > 0 || ["shm", "msg", "sem"].some((k) => lines(`/proc/sysvipc/${k}`) > 0)
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
      if (tainted || sweep()) send(K.tainted, id)
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
      else if (running?.pid !== undefined) {
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
