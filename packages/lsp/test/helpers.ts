import { Effect, Layer } from "effect"
import { Bus, DataDir, Ids } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { Reducers, builtinReducers } from "@reins/reduce"
import { Diagnostics, type ToolContext, type ToolInfo, type ToolResult } from "@reins/tool"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { LanguageServers, type LspSettings } from "../src/index.ts"

/** A fresh temp directory (symlinks resolved). */
export const tempDir = (prefix = "reins-lsp-") => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

/** The devDependencies' programs (typescript-language-server, pyright-langserver). */
export const BIN = path.join(import.meta.dir, "..", "node_modules", ".bin")

/** PATH with the devDependencies' programs, and node (their interpreter). */
export const pathWithServers = () => [BIN, path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter)

export type Call = (tool: Effect.Effect<ToolInfo, never, Permission | Truncate>, args: unknown) => Promise<ToolResult & { readonly failed?: string }>

/**
 * Runs `body` with the language servers of `settings` behind the tools (permission allowing everything); the servers
 * are shut down when it ends. `call` runs one tool call; `offered` says whether the diagnostics tool is offered.
 */
export const withServers = async <A>(settings: LspSettings, body: (call: Call, offered: boolean) => Promise<A>): Promise<A> => {
  const ctx: ToolContext = { sessionID: "ses_lsp", messageID: "msg_lsp", callID: "call_lsp", cwd: settings.cwd }
  const base = Layer.mergeAll(Bus.layer, Ids.layer)
  const layer = Layer.mergeAll(Permission.layer, Truncate.layer, LanguageServers.layer(settings)).pipe(
    Layer.provideMerge(base),
    Layer.provide(Layer.succeed(DataDir, tempDir("reins-lsp-data-"))),
    Layer.provide(Layer.succeed(PermissionSettings, { rules: [...defaultRules, { permission: "*", pattern: "*", action: "allow" }], nonInteractive: "deny" })),
    Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
  )
  return Effect.runPromise(
    Effect.gen(function* () {
      const context = yield* Effect.context<Permission | Truncate>()
      const port = yield* Diagnostics
      const call: Call = (tool, args) =>
        Effect.runPromise(
          Effect.gen(function* () {
            const info = yield* tool
            const result = yield* Effect.result(info.execute(args, ctx))
            return result._tag === "Success" ? result.success : { title: "failed", output: "", failed: result.failure.message }
          }).pipe(Effect.provideContext(context), Effect.provideService(Reducers, builtinReducers))
        )
      return yield* Effect.promise(() => body(call, port.offered))
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

/** Whether a process is gone (or a zombie: it ended, its parent has not reaped it yet). */
export const gone = (pid: number) => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    return /^State:\s+Z/m.test(status)
  } catch {
    return true
  }
}

/** The pids of a process's children. */
export const childrenOf = (pid: number): ReadonlyArray<number> => {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter((s) => s !== "")
      .map(Number)
  } catch {
    return []
  }
}
