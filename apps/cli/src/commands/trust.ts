// reins trust: the user's decision about a project directory. Trusted, its configuration's hooks, MCP
// servers, providers, plugins, tools, agents and rules apply — until what it would run changes.
import { Clock, Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { defaultDataDir, loadConfigLayers, revokeTrust, trustDirectory, trustedDirectories, trustItemKey, trustKey } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { usage } from "../CliError.ts"
import { itemLines, projectItems } from "../ProjectTrust.ts"

const flags = {
  directory: Argument.String("directory").pipe(Argument.withDescription("The project directory (default: the current one)"), Argument.optional),
  revoke: Flag.Boolean("revoke").pipe(Flag.withDescription("Stop trusting the directory"), Flag.withDefault(false)),
  list: Flag.Boolean("list").pipe(Flag.withDescription("List the trusted directories"), Flag.withDefault(false)),
  format: Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
}

const time = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16)

/** `reins trust [DIR]`, `--revoke`, `--list`. */
export const trust = Command.make("trust", flags, (input) =>
  Effect.gen(function* () {
    const env = process.env
    const home = os.homedir()
    const dataDir = defaultDataDir(env, home)
    const store = <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.mapError((e) => usage(e.message)))
    if (input.list) {
      if (Option.isSome(input.directory) || input.revoke) return yield* usage("--list takes no directory and no --revoke: reins trust --list")
      const all = Object.entries(yield* store(trustedDirectories(dataDir))).sort(([a], [b]) => a.localeCompare(b))
      if (input.format === "json")
        return yield* Console.log(
          JSON.stringify(
            all.map(([directory, e]) => ({ directory, digest: e.digest, time: e.time, items: e.items })),
            null,
            2
          )
        )
      if (all.length === 0) return yield* Console.log("No trusted directories. reins trust [DIR] trusts one.")
      return yield* Console.log(all.map(([dir, e]) => `${dir}  trusted ${time(e.time)}  (${e.items} item${e.items === 1 ? "" : "s"})`).join("\n"))
    }
    const dir = path.resolve(Option.getOrElse(input.directory, () => process.cwd()))
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return yield* usage(`${dir} is not a directory: give a project directory (reins trust [DIR])`)
    if (input.revoke) {
      const was = yield* store(revokeTrust(dataDir, dir))
      if (input.format === "json") return yield* Console.log(JSON.stringify({ directory: trustKey(dir), revoked: was }))
      return yield* Console.log(was ? `No longer trusted: ${trustKey(dir)}` : `${trustKey(dir)} was not trusted.`)
    }
    const layers = yield* loadConfigLayers({ cwd: dir, env, home }).pipe(Effect.mapError((e) => usage(e.message)))
    const { items, digest } = projectItems(dir, layers.project)
    yield* store(trustDirectory(dataDir, dir, { digest, seen: items.map(trustItemKey), time: yield* Clock.currentTimeMillis }))
    if (input.format === "json") {
      return yield* Console.log(
        JSON.stringify({ directory: trustKey(dir), trusted: true, items: items.map((i) => ({ kind: i.kind, name: i.name, detail: i.detail })) }, null, 2)
      )
    }
    yield* Console.log(
      [
        `Trusted: ${trustKey(dir)}`,
        ...(items.length === 0
          ? ["Its configuration runs nothing and loosens no rule."]
          : ["From now on its configuration applies, until what it would run changes:", ...itemLines(items)])
      ].join("\n")
    )
  })
).pipe(
  Command.withDescription(
    "Trust a project directory: its hooks, MCP servers, providers, plugins, tools, agents and allow rules apply (until they change); --revoke, --list"
  )
)
