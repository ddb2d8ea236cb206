import { Effect, Layer } from "effect"
import { Bus, DataDir, Ids } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules, type Prompter, type Rule } from "@reins/permission"
import { Reducers, builtinReducers, type Reducer } from "@reins/reduce"
import { Truncate, TruncateSettings, defaultSettings, type OutputSettings } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Info, ToolContext } from "../src/Tool.ts"

/** A fresh temp directory (symlinks resolved). */
export const tempDir = (prefix = "reins-tool-") => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

export interface RunOptions {
  cwd: string
  rules?: ReadonlyArray<Rule>
  nonInteractive?: "allow" | "deny"
  dataDir?: string
  settings?: Partial<OutputSettings>
  reducers?: ReadonlyArray<Reducer>
  sessionID?: string
  /** Answers the questions asked (a person at a terminal). */
  prompter?: Prompter
}

/** Builds a tool with real Permission and Truncate services and runs one call. */
export const runTool = <R>(definition: Effect.Effect<Info, never, R>, args: unknown, options: RunOptions) =>
  Effect.runPromise(toolCall(definition, args, options))

/** One tool call as an Effect (to fork and interrupt it); its result is an `Effect.result`. */
export const toolCall = <R>(definition: Effect.Effect<Info, never, R>, args: unknown, options: RunOptions) => {
  const ctx: ToolContext = { sessionID: options.sessionID ?? "ses_test", messageID: "msg_test", callID: "call_test", cwd: options.cwd }
  const settings = {
    rules: options.rules ?? defaultRules,
    nonInteractive: options.nonInteractive ?? "deny",
    ...(options.prompter ? { prompter: options.prompter } : {})
  }
  const base = Layer.mergeAll(Bus.layer, Ids.layer)
  const layer = Layer.mergeAll(Permission.layer, Truncate.layer).pipe(
    Layer.provideMerge(base),
    Layer.provide(Layer.succeed(DataDir, options.dataDir ?? tempDir("reins-data-"))),
    Layer.provide(Layer.succeed(PermissionSettings, settings)),
    Layer.provide(Layer.succeed(TruncateSettings, { ...defaultSettings, ...options.settings }))
  )
  return Effect.gen(function* () {
    const tool = yield* definition
    return yield* Effect.result(tool.execute(args, ctx))
  }).pipe(Effect.provide(layer), Effect.provideService(Reducers, options.reducers ?? builtinReducers), Effect.scoped) as Effect.Effect<any, never, never>
}
