import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { readConfigFile, userConfigDir } from "@reins/domain"
import { check, checkLimit, checkProtected, defaultRules, fromConfig, requestsFor, strictest } from "@reins/permission"
import { protectedPaths } from "@reins/runtime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { usage } from "../CliError.ts"
import { setupAt } from "../Setup.ts"

/** `reins debug permission`: what the rules decide for one tool call (or several, as an array), as JSON. */
export const permission = Command.make(
  "permission",
  {
    // not --config: that one is reins's global flag (the user's own config, over the others), taken off the line first
    rules: Flag.String("rules").pipe(Flag.withDescription("Judge with this reins.json alone, instead of the project's and your config"), Flag.optional),
    cwd: Flag.String("cwd").pipe(Flag.withDescription("The project directory (default: the current one)"), Flag.optional),
    tool: Flag.String("tool").pipe(Flag.withDescription("The tool: bash, read, edit, write, list, glob, grep, webfetch, …"), Flag.withDefault("bash")),
    subjects: Argument.String("subject").pipe(
      Argument.withDescription("The command (bash) or path (file tools) to judge; several give a JSON array, one result per subject"),
      Argument.variadic({ min: 1 })
    )
  },
  (opts) =>
    Effect.gen(function* () {
      const cwd = path.resolve(Option.getOrElse(opts.cwd, () => process.cwd()))
      if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) return yield* usage(`--cwd ${cwd} is not a directory`)
      // the project's config as trust lets it apply: untrusted, its allows are not counted and its asks and denies tighten
      const setup = Option.isSome(opts.rules) ? undefined : yield* setupAt(cwd, { notice: false })
      const config = Option.isSome(opts.rules)
        ? yield* readConfigFile(path.resolve(opts.rules.value)).pipe(Effect.mapError((e) => usage(e.message)))
        : setup!.config
      const home = os.homedir()
      const rules = [...defaultRules, ...fromConfig(config.permission, home)]
      const restrict = setup?.project.restrict !== undefined ? fromConfig(setup.project.restrict, home) : []
      const protect = protectedPaths({ cwd, home, configDir: userConfigDir(process.env, home) })
      const mode = config.permission_mode ?? "last-match"
      const judge = Effect.fn(function* (subject: string) {
        const requests = (yield* requestsFor(opts.tool, subject, { cwd })).map((request) => {
          const result = strictest([check(rules, request, mode), checkLimit(restrict, request, mode), checkProtected(protect, request, false)])
          return {
            permission: request.permission,
            patterns: request.patterns,
            always: request.always,
            action: result.action,
            rule: result.rule ?? null,
            ...(request.opaque ? { opaque: request.opaque } : {}),
            ...(request.directory ? { directory: request.directory } : {})
          }
        })
        const decision = requests.some((r) => r.action === "deny") ? "deny" : requests.some((r) => r.action === "ask") ? "ask" : "allow"
        return { decision, requests }
      })
      const [only, ...more] = opts.subjects
      if (only !== undefined && more.length === 0) return yield* Console.log(JSON.stringify(yield* judge(only), null, 2))
      const results = yield* Effect.forEach(opts.subjects, (subject) => Effect.map(judge(subject), (result) => ({ subject, ...result })))
      yield* Console.log(JSON.stringify(results, null, 2))
    })
).pipe(Command.withDescription("Show what the permission rules decide for a command or path, as JSON"))
