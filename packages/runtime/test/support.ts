// The runtime tests' common set-up: a scripted server, scratch directories, and makeRuntime
// pointed at the server as provider "local".
import { afterEach } from "bun:test"
import { Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions, type ScriptedStep } from "@reins/testkit"
import type { StoreError } from "@reins/storage"
import type { Layer } from "effect"
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
