// JSON-RPC with a language server over its stdin and stdout: requests with a timeout, notifications both ways,
// the server's own requests answered, and the process ended with the scope (shutdown, exit, then a kill).
import { type ChildProcess, spawn } from "node:child_process"
import { Deferred, Effect, type Scope } from "effect"
import { Decoder, encode } from "./Framing.ts"
import { LspError } from "./LspError.ts"

/** How to start a server: the program, its arguments, environment and working directory. */
export interface Launch {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
}

/** What the server sends besides answers: notifications, and requests answered with what the handler gives. */
export interface Handlers {
  readonly notification: (method: string, params: unknown) => void
  readonly request: (method: string, params: unknown) => { readonly result: unknown } | undefined
}

/** A running server. */
export interface Connection {
  readonly pid: number | undefined
  request(method: string, params: unknown, timeoutMs: number): Effect.Effect<unknown, LspError>
  notify(method: string, params: unknown): Effect.Effect<void>
  /** Done when the process ended, with how it ended. */
  readonly exited: Deferred.Deferred<string>
  /** Whether the scope is closing it (an exit then is not a crash). */
  readonly closing: () => boolean
  readonly stderrTail: () => string
}

const STDERR_TAIL = 2_000
/** How long a server has to answer `shutdown`, then to exit after `exit`. */
const SHUTDOWN_MS = 3_000

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Kills the server's process group (it was started detached): its children (tsserver) go with it. */
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, "SIGKILL")
    return true
  } catch {
    return false
  }
}

/** The server and what it started. */
const kill = (child: ChildProcess) => {
  if (child.pid !== undefined && !killGroup(child.pid)) child.kill("SIGKILL")
}

/** Starts `launch` and speaks JSON-RPC with it; closing the scope shuts it down (and kills it when it does not exit). */
export const open = (server: string, launch: Launch, handlers: Handlers): Effect.Effect<Connection, LspError, Scope.Scope> =>
  Effect.gen(function* () {
    const exited = yield* Deferred.make<string>()
    const pending = new Map<number, Deferred.Deferred<unknown, LspError>>()
    let nextId = 1
    let tail = ""
    let closing = false
    const decoder = new Decoder()

    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () => spawn(launch.file, [...launch.args], { cwd: launch.cwd, env: { ...launch.env }, stdio: ["pipe", "pipe", "pipe"], detached: true }),
        catch: (e) => new LspError({ server, reason: "start", message: `${server} could not start: ${e instanceof Error ? e.message : String(e)}` })
      }),
      (child) => shutdown(child)
    )

    const send = (message: unknown) => {
      if (child.stdin?.writable) child.stdin.write(encode(message))
    }
    const ended = (how: string) => {
      if (Deferred.isDoneUnsafe(exited)) return
      // its children at once (a crashed typescript-language-server leaves tsserver running); after this the pid is
      // never signalled again: once reaped it may be another process's
      if (child.pid !== undefined) killGroup(child.pid)
      Deferred.doneUnsafe(exited, Effect.succeed(how))
      for (const waiting of pending.values())
        Deferred.doneUnsafe(waiting, Effect.fail(new LspError({ server, reason: "exited", message: `${server} stopped (${how})` })))
      pending.clear()
    }
    const receive = (message: unknown) => {
      if (!isRecord(message)) return
      const { id, method } = message
      if (typeof method === "string") {
        if (id === undefined) return handlers.notification(method, message.params)
        const answer = handlers.request(method, message.params)
        return send(
          answer === undefined
            ? { jsonrpc: "2.0", id, error: { code: -32601, message: `reins does not handle ${method}` } }
            : { jsonrpc: "2.0", id, result: answer.result }
        )
      }
      if (typeof id !== "number") return
      const waiting = pending.get(id)
      if (waiting === undefined) return
      pending.delete(id)
      const error = message.error
      Deferred.doneUnsafe(
        waiting,
        isRecord(error)
          ? Effect.fail(new LspError({ server, reason: "protocol", message: `${server} answered with an error: ${String(error.message)}` }))
          : Effect.succeed(message.result)
      )
    }

    child.on("error", (e) => ended(e.message))
    child.on("exit", (code, signal) => ended(signal !== null ? `signal ${signal}` : `exit code ${code}`))
    child.stdin?.on("error", () => {})
    child.stderr?.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL)
    })
    child.stdout?.on("data", (chunk: Buffer) => {
      const decoded = decoder.push(chunk)
      for (const message of decoded.messages) receive(message)
      if (decoded.error !== undefined) {
        tail = `${tail}\nreins: ${server} sent ${decoded.error}`.slice(-STDERR_TAIL)
        kill(child)
      }
    })

    const request = (method: string, params: unknown, timeoutMs: number) =>
      Effect.gen(function* () {
        if (Deferred.isDoneUnsafe(exited)) return yield* new LspError({ server, reason: "exited", message: `${server} is not running` })
        const id = nextId++
        const answer = yield* Deferred.make<unknown, LspError>()
        pending.set(id, answer)
        send({ jsonrpc: "2.0", id, method, params })
        // given up (a timeout, or the caller interrupted): forgotten here and cancelled there
        const cancel = Effect.sync(() => {
          if (pending.delete(id)) send({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } })
        })
        return yield* Deferred.await(answer).pipe(
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () =>
              Effect.andThen(
                cancel,
                Effect.fail(new LspError({ server, reason: "timeout", message: `${server} did not answer ${method} within ${timeoutMs} ms` }))
              )
          }),
          Effect.onInterrupt(() => cancel)
        )
      })

    const shutdown = (child: ChildProcess) =>
      Effect.gen(function* () {
        closing = true
        if (!Deferred.isDoneUnsafe(exited)) {
          yield* Effect.ignore(request("shutdown", null, SHUTDOWN_MS))
          send({ jsonrpc: "2.0", method: "exit" })
          child.stdin?.end()
        }
        const gone = yield* Deferred.await(exited).pipe(Effect.timeoutOption(SHUTDOWN_MS))
        // one that exited had its group killed then (the exit handler); only a live one is signalled here
        if (gone._tag === "None") {
          yield* Effect.sync(() => kill(child))
          yield* Effect.ignore(Deferred.await(exited).pipe(Effect.timeoutOption(SHUTDOWN_MS)))
        }
      })

    return {
      pid: child.pid,
      request,
      notify: (method, params) => Effect.sync(() => send({ jsonrpc: "2.0", method, params })),
      exited,
      closing: () => closing,
      stderrTail: () => tail.trim()
    } satisfies Connection
  })
