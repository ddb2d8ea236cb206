// The edit tools' `Diagnostics` port over language servers: one server per (language, root), started on the first
// file it serves, reused, shut down after 10 minutes unused (started again by the next file) and when the runtime's
// scope closes. A server not found, or one that does not start, is a debug line; one that stops is one warning,
// started again at most once.
import { Clock, Deferred, Effect, Exit, Layer, Option, Scope } from "effect"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { LspConfig } from "@reins/domain"
import { Sandbox } from "@reins/sandbox"
import { Diagnostics, type FileCheck, isTextContent, type Written } from "@reins/tool"
import { type Client, start } from "./Client.ts"
import type { Launch } from "./Connection.ts"
import type { LspError } from "./LspError.ts"
import { cannotRun, findProgram, findRoot, findTsserver, isInside, type ServerDef, serverFor, serverTable, type Where } from "./Servers.ts"

/** What the runtime tells the language servers. */
export interface LspSettings {
  /** The project directory: roots stop there, files outside it are not checked. */
  readonly cwd: string
  readonly config: LspConfig | undefined
  /** Where PATH and the servers' environment come from. */
  readonly env: Readonly<Record<string, string | undefined>>
  /**
   * Whether the user trusted the project themselves (a stored trust, `--trust`, a yes), not merely "nothing to trust":
   * without it its node_modules/.bin and its `typescript` are not run, nor servers that run its code (rust-analyzer, gopls).
   */
  readonly projectCode: boolean
  /** How long a server may go unused before it is shut down (default IDLE_SHUTDOWN_MS). */
  readonly idleShutdownMs?: number
}

/**
 * A server unused this long is shut down: a long interactive session would otherwise keep every server it ever
 * started (tsserver alone holds hundreds of MB). The next file it serves starts it again, with the startup allowance.
 */
export const IDLE_SHUTDOWN_MS = 10 * 60_000
/** No shorter: a server just started must outlive the check that started it. */
const MIN_IDLE_MS = 100

/** What a server inherits from reins's environment (no keys): what finding a toolchain needs. */
const ENV_KEYS = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TZ",
  "XDG_CACHE_HOME",
  "XDG_CONFIG_HOME",
  "NODE_PATH",
  "GOPATH",
  "GOROOT",
  "GOCACHE",
  "GOMODCACHE",
  "GOFLAGS",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "RUSTUP_TOOLCHAIN",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "PYTHONPATH"
]

/** A server's environment: the keys above, and Go, rustup and cargo told not to fetch anything (reins never downloads). */
const serverEnv = (env: Readonly<Record<string, string | undefined>>) => {
  const out: Record<string, string> = {}
  for (const key of ENV_KEYS) {
    const value = env[key]
    if (value !== undefined) out[key] = value
  }
  return { ...out, GOPROXY: "off", GOTOOLCHAIN: "local", RUSTUP_AUTO_INSTALL: "0", CARGO_NET_OFFLINE: "true" }
}

/** The most of a file given to a server: a bigger one is not source a check is for. */
const MAX_SYNC_BYTES = 2 * 1024 * 1024

/** A file's text for a server: a regular file (opened without blocking: a FIFO never is), at most 2 MiB, not binary; else undefined. */
const readForSync = (file: string): Effect.Effect<string | undefined> =>
  Effect.acquireUseRelease(
    Effect.tryPromise(() => fs.open(file, fsSync.constants.O_RDONLY | fsSync.constants.O_NONBLOCK)),
    (handle) =>
      Effect.flatMap(
        Effect.tryPromise(() => handle.stat()),
        (stat) =>
          !stat.isFile() || stat.size > MAX_SYNC_BYTES
            ? Effect.succeed(undefined)
            : Effect.map(
                Effect.tryPromise(() => handle.readFile()),
                (bytes) => (bytes.length <= MAX_SYNC_BYTES && isTextContent(file, bytes) ? bytes.toString("utf8") : undefined)
              )
      ),
    (handle) => Effect.promise(() => handle.close())
  ).pipe(Effect.orElseSucceed(() => undefined))

interface Running {
  readonly client: Client
  readonly def: ServerDef
  readonly key: string
  readonly root: string
  /** The server's own scope: closing it shuts the server down. */
  readonly scope: Scope.Closeable
  /** Whether no sync was tried yet: the first may take what is left of the startup timeout. */
  first: boolean
  /** Checks using it now: it is not shut down under them. */
  busy: number
  /** When the last check using it ended (Clock time). */
  lastUsed: number
}

/** How one server is found and launched; `missing` says why not when it is not there or would not run. */
const launchFor = (
  def: ServerDef,
  where: Where,
  env: Readonly<Record<string, string | undefined>>,
  serverEnv: Record<string, string>
):
  | { readonly missing: string }
  | { readonly missing?: undefined; readonly launch: Launch; readonly name: string; readonly initializationOptions?: unknown } => {
  if (def.runsProjectCode && !where.useProject)
    return { missing: `${def.name} runs the project's own code, and you have not trusted ${where.project} (reins trust)` }
  let missing = `no ${def.commands.map((c) => c[0]).join(" or ")} in the project's node_modules/.bin or on PATH`
  for (const command of def.commands) {
    const program = findProgram(command[0]!, where)
    if (program === undefined) continue
    const broken = cannotRun(program, env)
    if (broken !== undefined) {
      missing = broken
      continue
    }
    const tsserver = def.id === "typescript" ? findTsserver(program, where) : undefined
    if (def.id === "typescript" && tsserver === undefined && def.commands[0]![0] === "typescript-language-server")
      return {
        missing: `${program} was found but no typescript package beside it${where.useProject ? " or in the project" : " (the project's own runs only once you trust it)"}`
      }
    // typescript-language-server: never download type packages (automatic typing acquisition runs npm)
    const initializationOptions =
      def.id === "typescript" ? { disableAutomaticTypingAcquisition: true, ...(tsserver !== undefined ? { tsserver: { path: tsserver } } : {}) } : undefined
    return {
      launch: { file: program, args: command.slice(1), env: serverEnv, cwd: where.root } satisfies Launch,
      name: path.basename(command[0]!),
      ...(initializationOptions !== undefined ? { initializationOptions } : {})
    }
  }
  return { missing }
}

/** The language servers behind the `Diagnostics` port, living as long as the scope the layer is built in. */
export const make = (settings: LspSettings) =>
  Effect.gen(function* () {
    const table = serverTable(settings.config)
    const scope = yield* Effect.scope
    const sandbox = yield* Effect.serviceOption(Sandbox)
    const env = serverEnv(settings.env)
    const whereFor = (root: string): Where => ({ project: settings.cwd, root, useProject: settings.projectCode, pathEnv: settings.env.PATH })
    // the tool is offered only when a server is here for this kind of project (its marker at the root, or a server of
    // the user's own) and would run (not rustup's proxy alone): every request carries its definition. Edits are
    // checked whatever the project.
    const offered = table.some(
      (def) =>
        (def.markers.length === 0 || def.markers.some((m) => fsSync.existsSync(path.join(settings.cwd, m)))) &&
        launchFor(def, whereFor(settings.cwd), settings.env, env).missing === undefined
    )
    const servers = new Map<string, Deferred.Deferred<Running | undefined>>()
    /** The servers started, for closing a file wherever it is open. */
    const live = new Set<Running>()
    const restarted = new Set<string>()
    const said = new Set<string>()
    const touched = new Map<string, Set<string>>()
    /** The entry of `servers` each running server came from. */
    const readyOf = new WeakMap<Running, Deferred.Deferred<Running | undefined>>()
    /** Those shut down for being idle. */
    const retired = new WeakSet<Running>()
    /** Starts the watch that shuts idle servers down (below), once a server runs. */
    let startWatch: Effect.Effect<void> = Effect.void

    const once = (key: string, log: Effect.Effect<void>) =>
      said.has(key)
        ? Effect.void
        : Effect.andThen(
            Effect.sync(() => said.add(key)),
            log
          )

    const launchIn = (def: ServerDef, root: string) =>
      Effect.gen(function* () {
        const found = launchFor(def, whereFor(root), settings.env, env)
        if (found.missing !== undefined) {
          yield* once(`missing ${def.id}`, Effect.logDebug(`No language server for ${def.extensions.join(" ")} files: ${found.missing}.`))
          return undefined
        }
        const plain = found.launch
        // in the OS sandbox like a local MCP server, without the network: a language server has nothing to fetch
        const wrapped = Option.isNone(sandbox)
          ? { ...plain, sandboxed: false }
          : yield* sandbox.value
              .wrapServer(plain.file, plain.args, { cwd: root, env: plain.env, sandbox: { network: "none" } })
              .pipe(Effect.mapError((e) => ({ message: `Language server ${found.name} not started: ${e.message}` })))
        const launch: Launch = { file: wrapped.file, args: wrapped.args, env: wrapped.env, cwd: root }
        return { launch, name: found.name, initializationOptions: found.initializationOptions, parentPid: wrapped.sandboxed ? null : process.pid }
      })

    /** Starts the server for (def, root) in a scope of its own; undefined (and said once) when it cannot run. */
    const boot = (def: ServerDef, root: string, key: string, ready: Deferred.Deferred<Running | undefined>) =>
      Effect.gen(function* () {
        const found = yield* launchIn(def, root)
        if (found === undefined) return undefined
        const own = yield* Scope.fork(scope)
        const spec = {
          name: found.name,
          root,
          parentPid: found.parentPid,
          languageId: (file: string) => def.languages[path.extname(file).toLowerCase()] ?? "plaintext",
          ...(found.initializationOptions !== undefined ? { initializationOptions: found.initializationOptions } : {})
        }
        const started = yield* Effect.exit(start(spec, found.launch, def.startupTimeoutMs).pipe(Scope.provide(own)))
        if (Exit.isFailure(started)) {
          yield* Scope.close(own, Exit.void)
          const message = started.cause.reasons.map((r) => (r._tag === "Fail" ? r.error.message : String(r))).join("; ")
          // a program found that does not run (a proxy without its toolchain, a broken install): nothing to act on
          yield* once(`failed ${key}`, Effect.logDebug(`Language server ${found.name} for ${root} could not start: ${message}`))
          return undefined
        }
        const running: Running = { client: started.value, def, key, root, scope: own, first: true, busy: 0, lastUsed: yield* Clock.currentTimeMillis }
        readyOf.set(running, ready)
        live.add(running)
        yield* startWatch
        return running
      }).pipe(Effect.catch((e: { message: string }) => Effect.as(once(`failed ${key}`, Effect.logWarning(e.message)), undefined)))

    /** One warning for a server that stopped, by whichever use notices first: it is started again once. */
    const reported = new WeakSet<Client>()
    const reportStop = (running: Running, again = restarted.has(running.key)) =>
      Effect.gen(function* () {
        if (reported.has(running.client)) return
        reported.add(running.client)
        live.delete(running)
        const how = yield* Deferred.await(running.client.exited)
        const stderr = running.client.stderrTail().split("\n").at(-1) ?? ""
        yield* Effect.logWarning(
          `Language server ${running.client.name} stopped${again ? " again" : ""} (${how}${stderr !== "" ? `: ${stderr}` : ""}); ${again ? "it is not started again" : "it is started again for the next file"}.`
        )
      })

    /** The running server for a file's (language, root): started in the background on first use, restarted once. */
    const serverOf = (def: ServerDef, root: string): Effect.Effect<Running | undefined> =>
      Effect.suspend(() => {
        const key = `${def.id}\u0000${root}`
        const known = servers.get(key)
        if (known === undefined) {
          const ready = Deferred.makeUnsafe<Running | undefined>()
          servers.set(key, ready)
          // started in the layer's scope: a first edit that stops waiting leaves it starting for the next
          return Effect.andThen(
            Effect.forkIn(
              Effect.flatMap(boot(def, root, key, ready), (running) => Deferred.succeed(ready, running)),
              scope
            ),
            Deferred.await(ready)
          )
        }
        return Effect.flatMap(Deferred.await(known), (running) => {
          if (running === undefined || !Deferred.isDoneUnsafe(running.client.exited) || running.client.closing()) return Effect.succeed(running)
          // decided here at once, nothing run in between: of the checks that notice the same stop, one decides
          const again = restarted.has(key)
          if (servers.get(key) === known) {
            if (again) {
              const off = Deferred.makeUnsafe<Running | undefined>()
              Deferred.doneUnsafe(off, Effect.succeed(undefined))
              servers.set(key, off)
            } else {
              restarted.add(key)
              servers.delete(key)
            }
          }
          return Effect.andThen(reportStop(running, again), serverOf(def, root))
        })
      })

    /** Closes `files` in every server that has them open (deleted, moved away, unreadable). */
    const closeEverywhere = (files: ReadonlyArray<string>) =>
      Effect.forEach([...live], (running) => Effect.forEach(files, (file) => (running.client.opened().has(file) ? running.client.close(file) : Effect.void)), {
        discard: true
      })

    /** The server's other open files brought up to date with the disk (changed by a formatter, a script), or closed when unreadable. */
    const resync = (client: Client, except: string) =>
      Effect.forEach(
        [...client.opened()].filter(([file]) => file !== except),
        ([file, sent]) =>
          Effect.flatMap(readForSync(file), (now) => (now === undefined ? client.close(file) : now !== sent ? client.change(file, now) : Effect.void)),
        { discard: true }
      )

    /** One file synced with its server and checked; undefined when no server serves it. */
    const checkFile = (file: string, before?: string, retried = false): Effect.Effect<FileCheck | undefined> =>
      Effect.gen(function* () {
        const def = serverFor(table, file)
        if (def === undefined || !isInside(settings.cwd, file)) return undefined
        const root = findRoot(file, def.markers, settings.cwd, def.rootAt)
        const startedAt = yield* Clock.currentTimeMillis
        const running = yield* serverOf(def, root).pipe(Effect.timeoutOption(def.startupTimeoutMs))
        if (Option.isNone(running)) return { status: "timeout", path: file, server: def.name, waitedMs: def.startupTimeoutMs } as const
        const server = running.value
        if (server === undefined) return undefined
        // shut down for being idle just as this check found it: a new one is started, once
        if (retired.has(server)) return retried ? undefined : yield* checkFile(file, before, true)
        server.busy++
        return yield* syncAndCheck(server, file, startedAt, before).pipe(
          Effect.ensuring(
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.sync(() => {
                server.busy--
                server.lastUsed = now
              })
            )
          )
        )
      })

    /** `file` sent to `server` (its other files brought up to date first) and its problems read. */
    const syncAndCheck = (server: Running, file: string, startedAt: number, before: string | undefined): Effect.Effect<FileCheck | undefined> =>
      Effect.gen(function* () {
        const text = yield* readForSync(file)
        if (text === undefined) {
          yield* server.client.close(file)
          return undefined
        }
        yield* resync(server.client, file)
        // the first sync may take what is left of the startup allowance (tsserver loads the project); only the first,
        // whatever came of it: after a timeout the next edit waits the usual time
        const now = yield* Clock.currentTimeMillis
        const budget = server.first ? Math.max(server.def.timeoutMs, server.def.startupTimeoutMs - (now - startedAt)) : server.def.timeoutMs
        server.first = false
        const synced = yield* server.client.sync(file, text, budget, before).pipe(
          Effect.map((s) => ({ ok: true, synced: s }) as const),
          Effect.catch((e: LspError) => Effect.succeed({ ok: false, error: e } as const))
        )
        if (!synced.ok) {
          if (synced.error.reason === "timeout") return { status: "timeout", path: file, server: server.client.name, waitedMs: budget } as const
          if (synced.error.reason === "exited") yield* reportStop(server)
          else yield* once(`error ${server.key}`, Effect.logWarning(synced.error.message))
          return undefined
        }
        if (synced.synced === undefined) return { status: "timeout", path: file, server: server.client.name, waitedMs: budget } as const
        return {
          status: "checked",
          path: file,
          server: server.client.name,
          problems: synced.synced.problems,
          ...(synced.synced.before !== undefined ? { before: synced.synced.before } : {})
        } as const
      })

    const checkAll = (files: ReadonlyArray<Written>) =>
      Effect.map(
        Effect.forEach(files, (w) => checkFile(w.path, w.before), { concurrency: "unbounded" }),
        (checks) => checks.filter((c) => c !== undefined)
      )

    // servers unused for idleMs are shut down; a check finding one gone (above) or the next file starts it again
    const idleMs = Math.max(settings.idleShutdownMs ?? IDLE_SHUTDOWN_MS, MIN_IDLE_MS)
    const idle = (running: Running, now: number) => running.busy === 0 && now - running.lastUsed >= idleMs
    const shutDown = (running: Running) =>
      Effect.gen(function* () {
        live.delete(running)
        retired.add(running)
        // not a stop to warn of, nor one that counts against the restart
        reported.add(running.client)
        // the next file starts a new one (unless a new one is already there)
        if (servers.get(running.key) === readyOf.get(running)) servers.delete(running.key)
        yield* Effect.logDebug(
          `Language server ${running.client.name} for ${running.root} shut down after ${idleMs >= 60_000 ? `${Math.round(idleMs / 60_000)} min` : `${idleMs} ms`} unused; the next file it serves starts it again.`
        )
        yield* Scope.close(running.scope, Exit.void)
      })
    // the watch runs while a server does (no timer for a runtime that never started one)
    let watching = false
    const watchIdle = Effect.gen(function* () {
      while (live.size > 0) {
        // a server is shut down between idleMs and a quarter more after its last use
        yield* Effect.sleep(Math.min(idleMs / 4, 60_000))
        const now = yield* Clock.currentTimeMillis
        for (const running of [...live]) {
          // one that stopped by itself meanwhile is a stop (reported, and restarted by the next check at most once), not idle
          if (Deferred.isDoneUnsafe(running.client.exited) && !running.client.closing()) yield* reportStop(running)
          else if (idle(running, now)) yield* shutDown(running)
        }
      }
      // in the step that found none running: a server started from now on starts a watch of its own
      watching = false
    }).pipe(
      // a watch that died (a defect) leaves the next server to start another
      Effect.onError(() =>
        Effect.sync(() => {
          watching = false
        })
      )
    )
    startWatch = Effect.suspend(() => {
      if (watching) return Effect.void
      watching = true
      return Effect.asVoid(Effect.forkIn(watchIdle, scope))
    })

    return Diagnostics.of({
      offered,
      afterWrite: (sessionID, written, removed = []) =>
        Effect.suspend(() => {
          const mine = touched.get(sessionID) ?? new Set<string>()
          touched.set(sessionID, mine)
          for (const file of removed) mine.delete(file)
          for (const w of written) if (serverFor(table, w.path) !== undefined) mine.add(w.path)
          return Effect.andThen(closeEverywhere(removed), checkAll(written))
        }),
      check: (sessionID, files) => Effect.suspend(() => checkAll((files ?? [...(touched.get(sessionID) ?? [])]).map((path) => ({ path }))))
    })
  })

/** The `Diagnostics` port over language servers (the runtime provides it; `lsp: false` leaves the port's default). */
export const layer = (settings: LspSettings) => Layer.effect(Diagnostics, make(settings))
