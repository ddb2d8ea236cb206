import { Effect, Option, Result } from "effect"
import * as path from "node:path"
import { HomeDir, type CommandHookConfig, type HooksConfig } from "@reins/domain"
import { Permission, scanBash } from "@reins/permission"
import { Sandbox } from "@reins/sandbox"
import { parsePatch, touchedPaths } from "../builtin/Patch.ts"
import { type Spawn, spawnLaunch } from "../builtin/bash.ts"
import { killGroup } from "../builtin/ProcessGroup.ts"
import type { HookCall, ToolHook } from "./Hooks.ts"
import { isRecord } from "./Values.ts"

/** A command hook's time limit when the config gives none. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000

const OUTPUT_LIMIT = 4_000

/** Quotes a value for `sh`. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`

/**
 * The files a call is about, absolute: the `filePath` of edit, write or read; for a patch
 * (`patchText`, apply_patch), each file it changes — before the call every path it names (move
 * destinations too), after it the files as they now are (a moved file under its new name, a
 * deleted one left out). Empty when the call names no file.
 */
export const filesOf = (call: HookCall, phase: "before" | "after"): ReadonlyArray<string> => {
  const args = isRecord(call.args) ? call.args : {}
  const file = [args.filePath, args.file_path, args.path].find((v): v is string => typeof v === "string" && v.length > 0)
  if (file !== undefined) return [path.resolve(call.cwd, file)]
  if (typeof args.patchText !== "string") return []
  const parsed = parsePatch(args.patchText)
  if (Result.isFailure(parsed)) return []
  const paths =
    phase === "before"
      ? touchedPaths(parsed.success)
      : parsed.success.flatMap((op) => (op.type === "delete" ? [] : [op.type === "update" && op.movePath !== undefined ? op.movePath : op.path]))
  return [...new Set(paths.map((p) => path.resolve(call.cwd, p)))]
}

/** What a hook's command sees: `FILE` (absolute; empty when the call names none), `TOOL`, `SESSION`. */
export const variables = (call: HookCall, file: string | undefined): Record<string, string> => ({ FILE: file ?? "", TOOL: call.tool, SESSION: call.sessionID })

/** Whether the command uses `$FILE` (or `${FILE}`): such a hook is skipped for a call that names no file. */
const needsFile = (command: string) => /\$\{?FILE\b/.test(command)

/**
 * The command as the permission scan judges it for one file: the variables replaced by their
 * values, quoted, so rules see the real path. The command itself runs with the variables in its
 * environment and the shell expands them (`"$FILE"` works as in any script).
 */
export const expand = (command: string, call: HookCall, file: string | undefined) => {
  if (needsFile(command) && file === undefined) return undefined
  const values = variables(call, file)
  return command.replace(/\$\{(FILE|TOOL|SESSION)\}|\$(FILE|TOOL|SESSION)\b/g, (_, a: string | undefined, b: string | undefined) => quote(values[(a ?? b)!]!))
}

/** How a hook's command ended: its exit code (null when a signal stopped it), what it printed (cut), whether the timeout killed it. */
export interface HookOutcome {
  readonly code: number | null
  readonly signal?: string | null
  readonly output: string
  readonly timedOut: boolean
}

/** Runs `sh -c command` in its own process group; the group is killed at the timeout or on interrupt. */
export const runHookCommand = (
  command: string,
  cwd: string,
  timeoutMs: number,
  vars: Record<string, string> = {},
  launch: Spawn = { file: "/bin/sh", args: ["-c", command], env: { ...process.env, ...vars } }
) =>
  Effect.callback<HookOutcome>((resume) => {
    const child = spawnLaunch(launch, cwd, "ignore")
    let output = ""
    const collect = (b: Buffer) => {
      if (output.length < OUTPUT_LIMIT) output += b.toString("utf8")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code: null, output: `could not start /bin/sh: ${e.message}`, timedOut }))
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, signal, output: output.slice(0, OUTPUT_LIMIT).trim(), timedOut }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      killGroup(child.pid)
    })
  })

/** The tool ids a hook applies to; a `match` that is not a regular expression is the error's message. */
const matcher = (match: string | undefined): ((tool: string) => boolean) | string => {
  if (match === undefined || match === "" || match === "*") return () => true
  // the RegExp constructor is the only validator of a pattern: its throw is the message
  try {
    const re = new RegExp(`^(?:${match})$`)
    return (tool: string) => re.test(tool)
  } catch (e) {
    return `\`match\` is not a regular expression: ${e instanceof Error ? e.message : String(e)}`
  }
}

/** The config's command hooks, named as messages name them (`hooks.tool.after[0]`), each with why it cannot run, if it cannot. */
export const listCommandHooks = (config: HooksConfig | undefined) =>
  (["tool.before", "tool.after"] as const).flatMap((event) =>
    (config?.[event] ?? []).map((hook, index) => {
      const applies = matcher(hook.match)
      return { name: `hooks.${event}[${index}]`, event, hook, ...(typeof applies === "string" ? { problem: applies } : {}) }
    })
  )

/**
 * Config command hooks as tool hooks. A command runs with the permission of the call that
 * triggered it: the bash scan of the command is checked against the session's rules in force, and
 * a command they deny is not run (reported once per hook). `ask` runs it: the config is the consent.
 */
export const commandHooks = (config: HooksConfig | undefined) =>
  Effect.gen(function* () {
    const listed = listCommandHooks(config)
    // a hook whose `match` is no regular expression is left out (the discovery reports it)
    const failed = listed.flatMap((c) => (c.problem === undefined ? [] : [{ path: c.name, error: c.problem }]))
    if (listed.length === failed.length) return { hooks: [] as ReadonlyArray<ToolHook>, failed }
    const permission = yield* Permission
    const home = yield* HomeDir
    // the runtime's OS sandbox, as the layer is built (a hook runs inside the tool pipeline's context, not the runtime's)
    const sandbox = yield* Effect.serviceOption(Sandbox)
    const reported = new Set<string>()
    const denied = (name: string, command: string, call: HookCall) =>
      Effect.gen(function* () {
        const requests = yield* scanBash(command, { cwd: call.cwd, worktree: call.cwd, home })
        const judged = yield* permission.judge(call.sessionID)
        const refused = requests.map((r) => ({ r, c: judged(r) })).find(({ c }) => c.action === "deny")
        if (!refused) return false
        if (!reported.has(name)) {
          reported.add(name)
          yield* Effect.logWarning(
            `The command hook ${name} (${command}) is not run: the permission rules deny ${refused.r.permission} "${refused.c.action === "deny" ? refused.c.pattern : refused.r.patterns[0]}".`
          )
        }
        return true
      })
    const make = (name: string, event: "tool.before" | "tool.after", hook: CommandHookConfig, applies: (tool: string) => boolean): ToolHook => {
      const timeout = hook.timeout ?? DEFAULT_HOOK_TIMEOUT_MS
      // Once per file of the call ($FILE each in turn: an apply_patch that changes three files runs
      // it three times), or once with FILE empty when the call names none.
      const runs = (call: HookCall, phase: "before" | "after") =>
        Effect.gen(function* () {
          if (!applies(call.tool)) return []
          const files = filesOf(call, phase)
          const outcomes: Array<HookOutcome> = []
          for (const file of files.length > 0 ? files : [undefined]) {
            const scanned = expand(hook.command, call, file)
            if (scanned === undefined || (yield* denied(name, scanned, call))) continue
            // in the OS sandbox, as the agent's own commands (the file names it passes come from the model)
            const vars = variables(call, file)
            const launch = Option.isSome(sandbox)
              ? yield* Effect.result(sandbox.value.wrap("/bin/sh", ["-c", hook.command], { cwd: call.cwd, env: { ...process.env, ...vars } }))
              : undefined
            const settleGit =
              launch !== undefined && Result.isSuccess(launch) && launch.success.sandboxed ? sandbox.pipe(Option.map((s) => s.watchGit())) : Option.none()
            const outcome: HookOutcome =
              launch === undefined
                ? yield* runHookCommand(hook.command, call.cwd, timeout, vars)
                : Result.isSuccess(launch)
                  ? yield* runHookCommand(hook.command, call.cwd, timeout, vars, launch.success)
                  : { code: null, output: launch.failure.message, timedOut: false }
            const undone = Option.isSome(settleGit) ? settleGit.value() : undefined
            if (undone !== undefined) yield* Effect.logWarning(`The command hook ${name} (${hook.command}): ${undone}`)
            outcomes.push(outcome)
            // a tool.before hook that refuses one file refuses the call: the rest need not run
            if (phase === "before" && outcome.code !== 0) break
          }
          return outcomes
        })
      const failure = (r: HookOutcome) =>
        r.timedOut
          ? `\`${hook.command}\` did not finish within ${timeout} ms`
          : r.code === null
            ? `\`${hook.command}\` was stopped${r.signal ? ` by ${r.signal}` : ""}${r.output ? `: ${r.output}` : ""}`
            : `\`${hook.command}\` exited with ${r.code}${r.output ? `: ${r.output}` : ""}`
      const made: ToolHook =
        event === "tool.before"
          ? {
              name,
              before: (call) =>
                Effect.flatMap(runs(call, "before"), (outcomes) => {
                  const r = outcomes.find((o) => o.code !== 0)
                  return !r ? Effect.succeed(undefined) : r.timedOut ? Effect.fail({ message: failure(r) }) : Effect.succeed({ deny: r.output || failure(r) })
                })
            }
          : {
              name,
              after: (call) =>
                Effect.flatMap(runs(call, "after"), (outcomes) => {
                  const failed = outcomes.filter((o) => o.code !== 0)
                  return failed.length === 0 ? Effect.succeed(undefined) : Effect.fail({ message: failed.map(failure).join("; ") })
                })
            }
      return made
    }
    const hooks: ReadonlyArray<ToolHook> = listed.flatMap(({ name, event, hook }) => {
      const applies = matcher(hook.match)
      return typeof applies === "string" ? [] : [make(name, event, hook, applies)]
    })
    return { hooks, failed }
  })
