// `reins serve` under test: the built CLI spawned on a free port, and a reader of its event stream.
import { afterEach } from "bun:test"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, HANG_MS, type Project } from "./support.ts"

/** The token of each server a test started, by URL: api() and openEvents() send it unless told otherwise. */
const tokens = new Map<string, string>()
/** The Authorization header for `url`'s server, unless `headers` has one (or `authorization: ""` to send none). */
const withToken = (url: string, headers: Record<string, string>) => {
  const given = Object.keys(headers).find((k) => k.toLowerCase() === "authorization")
  if (given !== undefined) return headers[given] === "" ? Object.fromEntries(Object.entries(headers).filter(([k]) => k !== given)) : headers
  const token = tokens.get(url)
  return token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` }
}

export interface Served {
  readonly url: string
  /** The server's token: the one given, or the one it made and left in the data dir. */
  readonly token: string
  readonly child: ChildProcess
  readonly stderr: () => string
  /** Resolves with the exit once the server has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly stop: () => Promise<void>
}

/** Starts `reins serve --port 0 …` in the project; resolves once it printed its URL. */
export const startServe = (p: Project, args: ReadonlyArray<string> = [], env: Record<string, string> = {}) =>
  new Promise<Served>((resolve, reject) => {
    const child = spawn(BIN, ["serve", "--port", "0", ...args], { cwd: p.cwd, env: { ...p.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("close", (code, signal) => done({ code, signal })))
    child.stderr!.on("data", (b) => (stderr += b))
    child.stdout!.on("data", (b) => {
      stdout += b
      const url = /reins server listening on (http:\/\/\S+)\n/.exec(stdout)?.[1]
      if (url !== undefined) {
        // every server wants a token: the one it left for this user's clients (written before it printed its URL)
        const token = (JSON.parse(fs.readFileSync(path.join(p.dataDir, "servers", `${new URL(url).port}.json`), "utf8")) as { token: string }).token
        tokens.set(url, token)
        resolve({
          url,
          token,
          child,
          stderr: () => stderr,
          exited,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
            await exited
          }
        })
      }
    })
    void exited.then((exit) => reject(new Error(`reins serve exited (${exit.code ?? exit.signal}) before listening: ${stderr}`)))
  })

export interface SseFrame {
  readonly id?: number
  readonly event: string
  readonly data: any
}

/** An open `GET /event`: the frames as they arrive, and a wait for one that matches. */
export const openEvents = async (url: string, options: { readonly headers?: Record<string, string>; readonly query?: string } = {}) => {
  const controller = new AbortController()
  const response = await fetch(`${url}/event${options.query ?? ""}`, { headers: withToken(url, options.headers ?? {}), signal: controller.signal })
  const frames: Array<SseFrame> = []
  const waiters: Array<() => void> = []
  let ended = false
  const pump = (async () => {
    if (!response.ok || response.body === null) return
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let at: number
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at)
          buffer = buffer.slice(at + 2)
          const lines = block.split("\n")
          if (lines.every((l) => l.startsWith(":"))) continue
          const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2)
          const id = field("id")
          frames.push({ ...(id !== undefined ? { id: Number(id) } : {}), event: field("event") ?? "message", data: JSON.parse(field("data") ?? "null") })
          for (const wake of waiters.splice(0)) wake()
        }
      }
    } catch {
      // aborted by close()
    }
    ended = true
    for (const wake of waiters.splice(0)) wake()
  })()
  /** The first frame (from `from` on) that matches; fails when the stream ends without it, or after `ms` (a hang guard). */
  const waitFor = (match: (f: SseFrame) => boolean, ms = HANG_MS, from = 0): Promise<SseFrame> =>
    new Promise<SseFrame>((resolve, reject) => {
      const got = () => frames.map((f) => f.event).join(", ")
      let done = false
      const finish = (end: () => void) => {
        done = true
        clearTimeout(timer)
        end()
      }
      // looked at again on every frame and at the end of the stream
      const look = () => {
        if (done) return
        const found = frames.slice(from).find(match)
        if (found) return finish(() => resolve(found))
        if (ended) return finish(() => reject(new Error(`the event stream ended without the frame; got: ${got()}`)))
        waiters.push(look)
      }
      const timer = setTimeout(() => finish(() => reject(new Error(`no such frame within ${ms / 1000} s; got: ${got()}`))), ms)
      look()
    })
  return {
    response,
    frames,
    waitFor,
    ended: () => ended,
    close: async () => {
      controller.abort()
      await pump
    }
  }
}

/** JSON request helper: method, path, body; the status and the parsed body. */
export const api = async (url: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: withToken(url, { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers }),
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as any) }
}

/** The pids of the running `sleep <n>` processes. */
const sleepPids = (n: string) =>
  Bun.spawnSync(["ps", "-eo", "pid=,stat=,args="])
    .stdout.toString()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, stat, ...args]) => !stat?.startsWith("Z") && args.join(" ") === `sleep ${n}`)
    .map(([pid]) => Number(pid))

/** How many `sleep <n>` processes are running (zombies not counted). */
export const sleeping = (n: string) => sleepPids(n).length

/** A marker for `sleep <n>`: a duration no other test uses (hours: the command runs until something ends it). */
export const marker = () => `3${Math.floor(Math.random() * 90000) + 10000}.5`

/** Ends the `sleep <n>` processes (SIGTERM): a command the test held open is let go. */
export const endSleeping = (n: string) => {
  for (const pid of sleepPids(n)) {
    try {
      process.kill(pid, "SIGTERM")
    } catch {
      // gone meanwhile
    }
  }
}

/** `startServe` for a test file: every server a test starts is stopped after it. */
export const servers = () => {
  const running: Array<Served> = []
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop()
  })
  return async (...args: Parameters<typeof startServe>) => {
    const s = await startServe(...args)
    running.push(s)
    return s
  }
}

/** The Authorization header of a started server, for requests made without api(). */
export const auth = (s: Pick<Served, "token">) => ({ authorization: `Bearer ${s.token}` })
