// The runtime tests' common set-up: a scripted server, scratch directories, and makeRuntime
// pointed at the server as provider "local".
import { afterEach } from "bun:test"
import { Bus, type Event, type ModelRef, type TurnResult } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore, Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions, type ScriptedStep } from "@reins/testkit"
import type { StoreError } from "@reins/storage"
import { Effect, type Layer, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"

/** The processes of a group that are still alive (a zombie is dead), as "pid state", read from /proc. */
export const aliveIn = (pgid: number) =>
  fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8")
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return Number(pgrp) === pgid && state !== "Z" && state !== "X" ? [`${d} ${state}`] : []
      } catch {
        return []
      }
    })

/** The processes still alive (a zombie is dead) whose command line contains `text`, as "pid command line", read from /proc. */
export const aliveWith = (text: string) =>
  fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .flatMap((d) => {
      try {
        const cmdline = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " ").trim()
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8")
        const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
        return cmdline.includes(text) && state !== "Z" && state !== "X" ? [`${d} ${cmdline}`] : []
      } catch {
        // the process ended while we looked
        return []
      }
    })

/** Runs an effect against a runtime's layer, in a scope closed when it ends. */
export const runIn = <A, E, R, LE>(layer: Layer.Layer<R, LE>, effect: Effect.Effect<A, E, R | Scope.Scope>) =>
  Effect.runPromise(effect.pipe(Effect.provide(layer), Effect.scoped))

/**
 * One turn per prompt, in order, on a new session in `directory`: their results, every event
 * published meanwhile, the stored messages and the session's id.
 */
export const sessionTurns = (prompts: ReadonlyArray<{ readonly text: string; readonly model: ModelRef }>, directory = "/") =>
  Effect.gen(function* () {
    const events: Array<Event> = []
    yield* (yield* Bus).listen((e) => Effect.sync(() => void events.push(e)))
    const sessions = yield* SessionService
    const session = yield* sessions.create({ directory })
    const results: Array<TurnResult> = []
    for (const prompt of prompts) results.push(yield* sessions.prompt({ sessionID: session.id, ...prompt }))
    return { sessionID: session.id, results, events, messages: yield* (yield* SessionStore).messages(session.id) }
  })

/** A fresh temporary directory, symlinks resolved. */
export const tmp = (prefix = "reins-rt-") => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

export interface ScriptedRuntimeOptions {
  /** The models of provider "local" (default `m`: 32k context, 2k output). */
  readonly models?: Record<string, { readonly context: number; readonly output: number }>
  /** More config, merged over the provider. */
  readonly config?: Record<string, unknown>
  /** Default: the memory store. */
  readonly store?: Layer.Layer<Storage.Services, StoreError>
  /** Default: the built-in tools. */
  readonly tools?: RuntimeOptions["tools"]
  readonly cwd?: string
  readonly dataDir?: string
  /** What `~` means to the permission rules and the bash scan. */
  readonly home?: string
  /** Default: yolo. */
  readonly permission?: RuntimeOptions["permission"]
  /** Options of the scripted server (a `respond` hook, …). */
  readonly server?: ScriptedServerOptions
}

/**
 * Registers an afterEach that stops the server of each test; returns the set-up to call in a
 * test: a server with `steps` and a runtime layer (yolo permissions) using it.
 */
export const scriptedRuntimes = () => {
  let server: ScriptedServer | undefined
  afterEach(async () => {
    await server?.stop()
    server = undefined
  })
  return async (steps: ReadonlyArray<ScriptedStep>, options: ScriptedRuntimeOptions = {}) => {
    server = await startScriptedServer(steps, options.server)
    const cwd = options.cwd ?? tmp()
    const dataDir = options.dataDir ?? tmp()
    const layer = makeRuntime({
      cwd,
      dataDir,
      env: {},
      config: {
        provider: { local: { type: "openai-compatible", baseURL: server.url, models: options.models ?? { m: { context: 32_000, output: 2_000 } } } },
        ...options.config
      } as RuntimeOptions["config"],
      store: options.store ?? Storage.layerMemory,
      ...(options.tools ? { tools: options.tools } : {}),
      permission: options.permission ?? { yolo: true },
      ...(options.home !== undefined ? { home: options.home } : {})
    })
    return { server, cwd, dataDir, layer }
  }
}
