// The sandbox host's body: the one program a session's long-lived sandbox runs (Host.ts). It reads orders
// as JSON lines on stdin — run a command (its program, arguments, environment, directory and what it reads
// on stdin), or kill one's process group — and answers in frames on stdout: started (the command's pid in
// the sandbox, once it has its whole input), output, exit, error. Each command is a process group of its
// own, as a command reins spawns itself is. It ends when reins closes its stdin.
// It runs with reins's own runtime, as `bun -e <script>` (hostMain must stay self-contained) or in the
// standalone executable as its SandboxHost helper (Helper.ts).

/** The frame kinds, host to reins: [kind u8][id u32 LE][length u32 LE][payload]. */
export const HOST_FRAME = { ready: 0, started: 1, stdout: 2, stderr: 3, exit: 4, error: 5 } as const

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
  const K = { ready: 0, started: 1, stdout: 2, stderr: 3, exit: 4, error: 5 }
  const send = (kind: number, id: number, payload: Uint8Array | string = "") => {
    const body = typeof payload === "string" ? Buffer.from(payload) : payload
    const head = Buffer.allocUnsafe(9)
    head.writeUInt8(kind, 0)
    head.writeUInt32LE(id, 1)
    head.writeUInt32LE(body.length, 5)
    process.stdout.write(body.length === 0 ? head : Buffer.concat([head, body]))
  }
  const fs = require("node:fs") as typeof import("node:fs")
  const groups = new Map<number, number>()
  // A process a command left behind dies with the command, as it would with a sandbox of its own (whose pid
  // namespace ends with its shell): once a command's shell exited, every process of the sandbox outside the
  // sessions of the commands still running (each is one: spawned detached) is killed; the host's own session
  // is kept (a spawn not yet in its own), and bubblewrap's init is pid 1.
  const sessionOf = (pid: string) => {
    try {
      const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[3])
    } catch {
      return undefined
    }
  }
  const own = sessionOf("self")
  const sweep = () => {
    const keep = new Set<number>(groups.values())
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry) || entry === "1" || Number(entry) === process.pid) continue
      const session = sessionOf(entry)
      if (session === undefined || session === own || keep.has(session)) continue
      try {
        process.kill(Number(entry), "SIGKILL")
      } catch {}
    }
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
    const pid = child.pid
    if (pid !== undefined) groups.set(id, pid)
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
    child.on("exit", () => {
      groups.delete(id)
      sweep()
    })
    child.on("close", (code, signal) => {
      groups.delete(id)
      send(K.exit, id, JSON.stringify({ code, signal }))
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
      else {
        const pid = groups.get(order.id)
        try {
          if (pid !== undefined) process.kill(-pid, "SIGKILL")
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
