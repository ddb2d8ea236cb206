import { Effect, Option, Result } from "effect"
import * as path from "node:path"
import { HomeDir, type CommandHookConfig, type HooksConfig } from "@reins/domain"
import { Permission, scanBash } from "@reins/permission"
import { Sandbox } from "@reins/sandbox"
import { parsePatch, touchedPaths } from "../builtin/Patch.ts"
import { type Spawn, spawnLaunch } from "../builtin/bash.ts"
import { groupEnded, groupStarted, killGroup } from "../builtin/ProcessGroup.ts"
import type { HookCall, ToolHook } from "./Hooks.ts"
import { isRecord } from "./Values.ts"

/** A command hook's time limit when the config gives none. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000

const OUTPUT_LIMIT = 4_000

// tools whose target is a directory, the project directory when the call names none
const DIRECTORY_TOOLS = new Set(["grep", "glob", "list"])

/**
 * The files a call is about, absolute: the `filePath` of edit, write or read, the `path` of grep,
 * glob or list (the project directory when it gives none); for a patch (`patchText`,
 * apply_patch), each file it changes — before the call every path it names (move destinations
 * too), after it the files as they now are (a moved file under its new name, a deleted one left
 * out). Empty when the call names no file; undefined when it names files nobody can tell (a patch
 * that cannot be read): a guard cannot run for them.
 */
export const filesOf = (call: HookCall, phase: "before" | "after"): ReadonlyArray<string> | undefined => {
  const args = isRecord(call.args) ? call.args : {}
  const file = [args.filePath, args.file_path, args.path].find((v): v is string => typeof v === "string" && v.length > 0)
  if (file !== undefined) return [path.resolve(call.cwd, file)]
  if (DIRECTORY_TOOLS.has(call.tool)) return [call.cwd]
  if (args.patchText === undefined) return []
  if (typeof args.patchText !== "string") return undefined
  const parsed = parsePatch(args.patchText)
  if (Result.isFailure(parsed)) return undefined
  const paths =
    phase === "before"
      ? touchedPaths(parsed.success)
      : parsed.success.flatMap((op) => (op.type === "delete" ? [] : [op.type === "update" && op.movePath !== undefined ? op.movePath : op.path]))
  return [...new Set(paths.map((p) => path.resolve(call.cwd, p)))]
}

/** What a hook's command sees: `FILE` (absolute; empty when the call names none), `TOOL`, `SESSION`. */
export const variables = (call: HookCall, file: string | undefined): Record<string, string> => ({ FILE: file ?? "", TOOL: call.tool, SESSION: call.sessionID })

/** Whether the command uses `$FILE` (or `${FILE}`): such a hook is skipped for a call that names no file. */
export const needsFile = (command: string) => /\$\{?FILE\b/.test(command)

/** How a hook's command ended: its exit code (null when a signal stopped it), what it printed (cut), whether the timeout killed it. */
export interface HookOutcome {
  readonly code: number | null
  readonly signal?: string | null
  readonly output: string
  readonly timedOut: boolean
  /** Why the command did not run at all (the rules deny it, no sandbox, no shell). */
  readonly problem?: string
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
    const pgid = child.pid
    if (pgid !== undefined) groupStarted(pgid)
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
      if (pgid !== undefined) groupEnded(pgid)
      resume(Effect.succeed({ code: null, output: "", problem: `/bin/sh could not start: ${e.message}`, timedOut }))
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      if (pgid !== undefined) groupEnded(pgid)
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
 * triggered it: the bash scan of the command as it runs (the file names reach it in environment
 * variables, never pasted into its text) is checked against the session's rules in force. `ask`
 * runs it: the config is the consent. A command that cannot run (the rules deny it, the sandbox
 * cannot wrap it, the shell does not start) fails closed: a `tool.before` guard denies the call,
 * saying which hook and why; a `tool.after` one is reported with the call's result.
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
    /** Why the rules refuse `command` (as written: what `sh -c` runs) in this call's session, if they do. */
    const refusal = (name: string, command: string, call: HookCall) =>
      Effect.gen(function* () {
        const requests = yield* scanBash(command, { cwd: call.cwd, worktree: call.cwd, home })
        const judged = yield* permission.judge(call.sessionID)
        const refused = requests.map((r) => ({ r, c: judged(r) })).find(({ c }) => c.action === "deny")
        if (!refused) return undefined
        const why = `the permission rules deny ${refused.r.permission} "${refused.c.action === "deny" ? refused.c.pattern : refused.r.patterns[0]}"`
        if (!reported.has(name)) {
          reported.add(name)
          yield* Effect.logWarning(`The command hook ${name} (${command}) cannot run: ${why}.`)
        }
        return why
      })
    const make = (name: string, event: "tool.before" | "tool.after", hook: CommandHookConfig, applies: (tool: string) => boolean): ToolHook => {
      const timeout = hook.timeout ?? DEFAULT_HOOK_TIMEOUT_MS
      // Once per file of the call ($FILE each in turn: an apply_patch that changes three files runs
      // it three times), or once with FILE empty when the call names none.
      const runs = (call: HookCall, phase: "before" | "after") =>
        Effect.gen(function* () {
          if (!applies(call.tool)) return []
          const files = filesOf(call, phase)
          if (files === undefined) {
            return needsFile(hook.command)
              ? [{ code: null, output: "", timedOut: false, problem: "the files the call touches cannot be told (its patch cannot be read)" }]
              : []
          }
          if (files.length === 0 && needsFile(hook.command)) return []
          // the command is judged as it runs, the same for every file: once per call
          const refused = yield* refusal(name, hook.command, call)
          if (refused !== undefined) return [{ code: null, output: "", timedOut: false, problem: refused }]
          const outcomes: Array<HookOutcome> = []
          for (const file of files.length > 0 ? files : [undefined]) {
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
                  : { code: null, output: "", timedOut: false, problem: `the sandbox cannot run it: ${launch.failure.message}` }
            const undone = Option.isSome(settleGit) ? settleGit.value() : undefined
            if (undone !== undefined) yield* Effect.logWarning(`The command hook ${name} (${hook.command}): ${undone}`)
            outcomes.push(outcome)
            // a tool.before hook that refuses one file refuses the call: the rest need not run
            if (phase === "before" && outcome.code !== 0) break
          }
          return outcomes
        })
      const failure = (r: HookOutcome) =>
        r.problem !== undefined
          ? `\`${hook.command}\` could not run: ${r.problem}`
          : r.timedOut
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
                  // a guard that could not run denies the call (fail closed), saying why
                  if (!r) return Effect.succeed(undefined)
                  if (r.timedOut) return Effect.fail({ message: failure(r) })
                  return Effect.succeed({ deny: r.problem === undefined && r.output ? r.output : failure(r) })
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
