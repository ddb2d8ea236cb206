// A sandbox that lives for many commands: one bubblewrap running the host (HostBody.ts), which spawns each
// command inside it on reins's order. bubblewrap is ~4.5 ms of a command (its mount and pid namespaces, /dev,
// /proc); through the host a command costs about what a plain spawn does. The sandbox is the same: its
// arguments are the ones a command would get on its own, and a host is used only while they (and the files
// they mount) are unchanged (`mountKey`) and its mounts are all still there (`spoiled`). It runs one command
// at a time (another meanwhile gets a bubblewrap of its own); what a command leaves behind is killed when its
// shell exits, and a host it was found in is not used again (HostBody.ts). What the host says is parsed as
// untrusted: a frame that does not parse, or longer than MAX_FRAME, ends the host and its commands, never reins.
// reins sees a command as it sees one it spawned: a child object with its output streams and its pid — the
// pid outside, found from the host's children (`NSpid`), so that recording, killing and waiting for its
// process group work unchanged. A host that dies (as pid 1 a command's signals do not reach it; a crash, the
// OOM killer, a signal held during a spawn) ends its running command as killed; the next command starts another.
import { type ChildProcess, spawn } from "node:child_process"
import { EventEmitter } from "node:events"
import * as fs from "node:fs"
import { HOST_FRAME, type HostOrder } from "./HostBody.ts"

/** A hosted command's output: 'data' as each frame comes, in order (synchronously: its exit comes after the last). */
export class HostedOutput extends EventEmitter {
  /** Nothing is held back: a reader that stops listening drops what comes. */
  resume() {}
}

/** A command run by the host, shaped as the part of a ChildProcess a command's runner uses. */
export class HostedChild extends EventEmitter {
  /** Its pid outside the sandbox (its process group's id), once `spawn` is emitted; undefined if it ended first. */
  pid: number | undefined
  /** Whether the host said it started (once: a later frame saying so again is not taken). */
  told = false
  /** Whether reins killed it (its timeout, an interrupt): it ends as killed by SIGKILL, as a bubblewrap of its own killed would. */
  killed = false
  readonly stdout = new HostedOutput()
  readonly stderr = new HostedOutput()
  /** Kills its process group (through the host when its pid is not known here). */
  constructor(readonly killGroup: () => void) {
    super()
  }
}

/** A running host: where commands are spawned while its mounts are the ones a command would get. */
export interface SandboxHost {
  /** The arguments and mounted files it was started with (`mountKey`). */
  readonly key: string
  /** Whether it answered that it runs, and has not ended. */
  ready(): boolean
  /** Whether it ended on its own before it ever answered that it runs (it cannot start here). */
  failed(): boolean
  /** Whether it has ended (or is ending). */
  ended(): boolean
  /** Commands it runs now (reins gives it one at a time). */
  running(): number
  /** Whether it is ready and runs no command: the one check, made as a command is spawned (two wrapped at once get one host). */
  idle(): boolean
  /**
   * Whether it is no longer to be given commands: a command left something behind (`tainted`), a mount of its
   * sandbox is gone or another appeared (a path renamed over or removed outside drops the mount on it, hiding
   * nothing any more), or it is stopped (a command sent it SIGSTOP).
   */
  spoiled(): boolean
  spawn(file: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>>, cwd: string, input?: string): HostedChild
  /** Ends it and what runs in it. */
  close(): void
}

/** The longest frame taken from a host: a command's output comes in chunks of at most 64 KiB. */
export const MAX_FRAME = 16 * 1024 * 1024

/** How long a killed command's exit is waited for before its host is given up (a stopped host sends none). */
export const HOST_KILL_WAIT_MS = 3_000

const readText = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** The pids `pid`'s threads have forked. */
const childrenOf = (pid: number): Array<number> => {
  const out: Array<number> = []
  let tasks: Array<string>
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const task of tasks) for (const c of (readText(`/proc/${pid}/task/${task}/children`) ?? "").split(" ")) if (c !== "") out.push(Number(c))
  return out
}

/** A process's pids, outside first, innermost last. */
const nsPids = (pid: number) =>
  /^NSpid:\s+([\d\s]+)$/m
    .exec(readText(`/proc/${pid}/status`) ?? "")?.[1]
    ?.trim()
    .split(/\s+/)
    .map(Number)

/** mountinfo's escapes (\040 for a space, …) undone. */
const unescapeField = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))

/** Whether every place bwrap's `args` mount on is a mount point in `mountinfo` (its fifth field). */
export const mountsAll = (mountinfo: string, args: ReadonlyArray<string>) => {
  const points = new Set(mountinfo.split("\n").map((line) => unescapeField(line.split(" ")[4] ?? "")))
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    const dest =
      a === "--bind" || a === "--ro-bind" ? args[i + 2] : a === "--tmpfs" || a === "--dev" || a === "--proc" || a === "--mqueue" ? args[i + 1] : undefined
    if (dest !== undefined && !points.has(dest)) return false
  }
  return true
}

/** The pid outside of the host's child whose pid in the sandbox is `inner`; undefined when it is gone. */
const outerPid = (host: number, inner: number) => {
  // its main thread spawns them: its own list first, every thread's only when not found there
  const main = (readText(`/proc/${host}/task/${host}/children`) ?? "")
    .split(" ")
    .filter((c) => c !== "")
    .map(Number)
  return outerAmong(main, inner) ?? outerAmong(childrenOf(host), inner)
}

const outerAmong = (children: ReadonlyArray<number>, inner: number) => {
  for (const c of children) if (nsPids(c)?.at(-1) === inner) return c
  return undefined
}

/** An exit frame's body: `{code, signal}`, or undefined when it is not one. */
const exitOf = (text: string): { code: number | null; signal: string | null } | undefined => {
  try {
    const { code, signal } = JSON.parse(text) as { code: unknown; signal: unknown }
    if ((code === null || Number.isInteger(code)) && (signal === null || typeof signal === "string"))
      return { code: code as number | null, signal: signal as string | null }
  } catch {}
  return undefined
}

/**
 * What a host started with `args` runs in: the arguments (but the directory) and the identity of each path they
 * mount, so that a path replaced since (a renamed-over file, a directory made) starts a new host, as it would
 * give a command of its own other mounts.
 */
export const mountKey = (args: ReadonlyArray<string>) => {
  const parts: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? ""
    if (a === "--chdir") {
      i++
      continue
    }
    parts.push(a)
    if (a === "--bind" || a === "--ro-bind" || a === "--tmpfs") {
      try {
        const s = fs.statSync(args[i + 1] ?? "")
        parts.push(`@${s.dev}:${s.ino}`)
      } catch {
        parts.push("@none")
      }
    }
  }
  return parts.join("\0")
}

/**
 * Starts `bwrap bwrapArgs command` (the host) with `env`, `readFds` opened as fd 3, 4, …. Its commands are
 * spawned with `spawn` once it is ready; before, or after it ended, they must run otherwise.
 */
export const startHost = (options: {
  readonly bwrap: string
  readonly bwrapArgs: ReadonlyArray<string>
  readonly command: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly readFds: ReadonlyArray<string>
  readonly key: string
  /** Told each time it runs no command any more (a command ended, or it did): to retire one no longer used. */
  readonly onIdle?: () => void
}): SandboxHost => {
  const fds = options.readFds.map((file) => fs.openSync(file, "r"))
  let proc: ChildProcess
  try {
    proc = spawn(options.bwrap, [...options.bwrapArgs, ...options.command], {
      // a session (and autogroup) of its own: a command writing the host's /proc/<pid>/autogroup reaches only it, and
      // reins's terminal signals (Ctrl-C, Ctrl-Z) do not reach it
      detached: true,
      stdio: ["pipe", "pipe", "ignore", ...fds],
      env: options.env
    })
  } finally {
    for (const fd of fds) fs.closeSync(fd)
  }
  let ready = false
  let wasReady = false
  let tainted = false
  // its mounts when it answered: compared before each command
  let mounts: string | undefined
  let closed = false
  let ended = false
  // the host's pid outside: bwrap → its init (pid 1 inside) → the host
  let hostPid: number | undefined
  let next = 1
  const children = new Map<number, HostedChild>()
  const end = (child: HostedChild, id: number, code: number | null, signal: string | null) => {
    children.delete(id)
    child.emit("close", code, signal)
    if (children.size === 0) options.onIdle?.()
  }
  const finish = () => {
    if (ended) return
    ended = true
    ready = false
    for (const [id, child] of children) end(child, id, null, "SIGKILL")
    if (children.size === 0) options.onIdle?.()
  }
  // a host that says what does not parse: it and its commands end
  const broken = () => {
    pending = Buffer.alloc(0)
    closed = true
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL")
    finish()
  }
  proc.on("error", finish)
  proc.on("close", finish)
  proc.stdin?.on("error", () => {})
  let pending: Buffer = Buffer.alloc(0)
  // chunks are joined once a frame is whole, not at every chunk (a long frame in small chunks)
  const parts: Array<Buffer> = []
  let partsLength = 0
  let need = 9
  proc.stdout?.on("data", (chunk: Buffer) => {
    parts.push(chunk)
    partsLength += chunk.length
    if (pending.length + partsLength < need) return
    pending = Buffer.concat([pending, ...parts])
    parts.length = 0
    partsLength = 0
    need = 9
    while (pending.length >= 9 && !ended) {
      const length = pending.readUInt32LE(5)
      if (length > MAX_FRAME) return broken()
      if (pending.length < 9 + length) {
        need = 9 + length
        break
      }
      const kind = pending.readUInt8(0)
      const id = pending.readUInt32LE(1)
      const body = pending.subarray(9, 9 + length)
      pending = pending.subarray(9 + length)
      if (kind === HOST_FRAME.ready) {
        if (wasReady) continue
        // bwrap → the host, pid 1 of the sandbox (--as-pid-1)
        const found = proc.pid === undefined ? undefined : childrenOf(proc.pid)[0]
        hostPid = found !== undefined && nsPids(found)?.at(-1) === 1 ? found : undefined
        mounts = hostPid === undefined ? undefined : readText(`/proc/${hostPid}/mountinfo`)
        // without its pid here (no /proc/<pid>/task/<tid>/children) its commands could not be recorded or killed by
        // group; a mount its arguments make that is not there (a hidden file renamed over while it started) hides nothing
        if (hostPid === undefined || mounts === undefined || !mountsAll(mounts, options.bwrapArgs)) close()
        else {
          ready = !ended
          wasReady = true
        }
        continue
      }
      if (kind === HOST_FRAME.tainted) tainted = true
      const child = children.get(id)
      if (child === undefined) continue
      if (kind === HOST_FRAME.stdout) child.stdout.emit("data", Buffer.from(body))
      else if (kind === HOST_FRAME.stderr) child.stderr.emit("data", Buffer.from(body))
      else if (kind === HOST_FRAME.started) {
        if (child.told) continue
        child.told = true
        child.pid = hostPid === undefined ? undefined : outerPid(hostPid, Number(body.toString()))
        child.emit("spawn")
      } else if (kind === HOST_FRAME.error) child.emit("error", new Error(body.toString()))
      else if (kind === HOST_FRAME.exit) {
        const exit = exitOf(body.toString())
        if (exit === undefined) return broken()
        end(child, id, child.killed ? null : exit.code, child.killed ? "SIGKILL" : exit.signal)
      }
    }
  })
  const order = (o: HostOrder) => proc.stdin?.write(`${JSON.stringify(o)}\n`)
  const close = () => {
    closed = true
    proc.stdin?.end()
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL")
    finish()
  }
  return {
    key: options.key,
    ready: () => ready,
    failed: () => ended && !wasReady && !closed,
    ended: () => ended,
    running: () => children.size,
    idle: () => ready && !ended && children.size === 0,
    spoiled: () => {
      if (tainted || !ready || hostPid === undefined) return tainted
      const stat = readText(`/proc/${hostPid}/stat`)
      const state = stat?.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      return state === "T" || state === "t" || readText(`/proc/${hostPid}/mountinfo`) !== mounts
    },
    spawn: (file, args, env, cwd, input) => {
      const id = next++
      const child = new HostedChild(() => {
        child.killed = true
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, "SIGKILL")
          } catch {}
        }
        if (ended) return
        order({ t: "kill", id })
        // no exit from the host (stopped, or wedged): it and its commands end
        setTimeout(() => {
          if (children.has(id)) close()
        }, HOST_KILL_WAIT_MS).unref()
      })
      if (ended) {
        // ended meanwhile: the command is as killed
        queueMicrotask(() => child.emit("close", null, "SIGKILL"))
        return child
      }
      children.set(id, child)
      order({ t: "run", id, file, args, env, cwd, ...(input === undefined ? {} : { input }) })
      return child
    },
    close
  }
}
