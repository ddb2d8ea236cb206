// Whether this run trusts the project directory: the store (`reins trust`), `--trust` for one run,
// or — on a terminal, the first time, or when what the project would run changed — one question.
// Untrusted, the project's config is data and rules that only tighten; nothing of it runs.
import { Clock, Effect } from "effect"
import {
  type Config,
  changedItems,
  type ConfigLayers,
  type PermissionConfig,
  projectFileItems,
  splitProjectConfig,
  type TrustItem,
  trustDigest,
  trustDirectory,
  trustItemKey,
  trustOf
} from "@reins/domain"
import { usage } from "./CliError.ts"
import { visible } from "./present/Terminal.ts"

/** How a command settles trust: the store alone, `--trust` (this run), or the store and else a question on a terminal. */
export type TrustChoice = "stored" | "flag" | "ask"

/** What trust decided for a project, and what it covers. */
export interface ProjectState {
  readonly trusted: boolean
  /** What trust switches on (empty: the project has nothing to trust, and nothing is asked). */
  readonly items: ReadonlyArray<TrustItem>
  readonly digest: string
  /** The project's config as written (what would apply once trusted). */
  readonly config: Config
  /** The part of it that applies untrusted. */
  readonly inert: Config
  /** Untrusted: its ask and deny rules, which tighten. */
  readonly restrict: PermissionConfig | undefined
  /** Whether it was trusted before this run (false: by `--trust` or the question now). */
  readonly stored: boolean
  /**
   * Whether the user trusted the directory themselves (a stored trust for it, `--trust`, a yes now), not merely
   * "nothing to trust": only then do a cloned repo's own programs run (its node_modules/.bin language servers).
   */
  readonly explicit: boolean
}

const KIND: Record<TrustItem["kind"], string> = {
  hook: "hook",
  mcp: "MCP server",
  provider: "provider",
  plugin: "plugin",
  tool: "tool file",
  agent: "agent",
  command: "command",
  skill: "skill",
  prompt: "prompt",
  permission: "rule",
  sandbox: "sandbox setting",
  cluster: "cluster setting",
  lsp: "language server"
}

/** `2 hooks, 1 MCP server, 1 plugin`. */
export const itemSummary = (items: ReadonlyArray<TrustItem>) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(KIND[item.kind], (counts.get(KIND[item.kind]) ?? 0) + 1)
  return [...counts].map(([kind, n]) => `${n} ${kind}${n === 1 ? "" : kind.endsWith("s") ? "" : "s"}`).join(", ")
}

/** The items as lines: `  hook      hooks.tool.before[0]: ./check.sh`. */
export const itemLines = (items: ReadonlyArray<TrustItem>, limit = 30) => {
  const lines = items.slice(0, limit).map((i) => {
    const detail = i.detail && i.detail !== i.name ? `: ${shown(i.detail.replace(/[ \t\r\n]+/g, " "))}` : ""
    return `  ${KIND[i.kind].padEnd(10)} ${shown(i.name)}${detail}`
  })
  return items.length > limit ? [...lines, `  … and ${items.length - limit} more (reins debug config lists them all)`] : lines
}

const SHOWN_MAX = 400

/**
 * A project's text as the trust question shows it: control and bidirectional characters escaped (they
 * could redraw or reorder what the user reads), and a long text cut with a mark saying so.
 */
export const shown = (text: string) => {
  const safe = visible(text)
  return safe.length > SHOWN_MAX ? `${safe.slice(0, SHOWN_MAX)}… (${safe.length - SHOWN_MAX} more characters: reins debug config shows it whole)` : safe
}

/** What the project in `cwd` would switch on once trusted, and its digest. */
export const projectItems = (cwd: string, project: Config) => {
  const split = splitProjectConfig(project)
  const items = [...split.items, ...projectFileItems(cwd)]
  return { split, items, digest: trustDigest(items) }
}

/** Asks on the terminal whether to trust `cwd`; true for trust. `changed`: the items new or changed since an older trust. */
const askOnTerminal = (cwd: string, items: ReadonlyArray<TrustItem>, changed: ReadonlyArray<TrustItem> | undefined) =>
  Effect.callback<boolean>((resume) => {
    const out = process.stderr
    out.write(
      [
        ...(changed
          ? [
              `What the configuration of ${cwd} would run has changed since you trusted it; new or changed:`,
              ...itemLines(changed),
              ...(items.length > changed.length ? [`  (and ${items.length - changed.length} unchanged)`] : [])
            ]
          : [`The configuration of ${cwd} would run code on this machine, send requests elsewhere or loosen reins's rules:`, ...itemLines(items)]),
        `Trust this directory? Trusted, these apply from now on, until they change. [t]rust / [n]ot now: `
      ].join("\n")
    )
    // node:readline loads here, on the one run that asks, not at every command's startup
    const rl = process.getBuiltinModule("node:readline").createInterface({ input: process.stdin, output: out, terminal: false })
    let done = false
    const finish = (yes: boolean) => {
      if (done) return
      done = true
      rl.close()
      resume(Effect.succeed(yes))
    }
    rl.once("line", (line) => finish(/^\s*(t|trust|y|yes)\s*$/i.test(line)))
    rl.once("close", () => finish(false))
    return Effect.sync(() => rl.close())
  })

/**
 * Settles trust for the project in `cwd`: nothing to trust, trusted in the store (for this digest),
 * `--trust`, or asked on a terminal (a yes is stored). Untrusted, a line on stderr says what is off and how to trust it.
 */
export const settleTrust = (options: {
  readonly cwd: string
  readonly dataDir: string
  readonly layers: ConfigLayers
  readonly choice: TrustChoice
  /** Whether a person can answer on this terminal. */
  readonly terminal: boolean
  /** Whether to say on stderr that the project is not trusted (commands that only show things do not). */
  readonly notice: boolean
}) =>
  Effect.gen(function* () {
    const { split, items, digest } = projectItems(options.cwd, options.layers.project)
    const base = { items, digest, config: options.layers.project, inert: split.inert }
    const untrusted: ProjectState = { ...base, trusted: false, restrict: split.tighten, stored: false, explicit: false }
    const known = yield* trustOf(options.dataDir, options.cwd).pipe(Effect.mapError((e) => usage(e.message)))
    // nothing to trust applies the config, but is no trust in the repo's own programs: that takes the user's word
    if (items.length === 0)
      return { ...base, trusted: true, restrict: undefined, stored: true, explicit: known !== undefined || options.choice === "flag" } satisfies ProjectState
    if (known?.digest === digest) return { ...base, trusted: true, restrict: undefined, stored: true, explicit: true } satisfies ProjectState
    // what is new or changed since an older trust; with nothing new (only something removed) the trust holds
    const changed = known === undefined ? undefined : changedItems(items, known.seen ?? [])
    if (changed !== undefined && changed.length === 0)
      return { ...base, trusted: true, restrict: undefined, stored: true, explicit: true } satisfies ProjectState
    if (options.choice === "flag") return { ...base, trusted: true, restrict: undefined, stored: false, explicit: true } satisfies ProjectState
    if (options.choice === "ask" && options.terminal) {
      if (yield* askOnTerminal(options.cwd, items, changed)) {
        const trusted = { digest, seen: items.map(trustItemKey), time: yield* Clock.currentTimeMillis }
        yield* trustDirectory(options.dataDir, options.cwd, trusted).pipe(Effect.mapError((e) => usage(e.message)))
        return { ...base, trusted: true, restrict: undefined, stored: true, explicit: true } satisfies ProjectState
      }
    }
    if (options.notice) {
      const names = (changed ?? []).map((i) => i.name)
      const why =
        changed === undefined
          ? "it is not trusted"
          : `what its configuration would run changed since you trusted it (new or changed: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""})`
      process.stderr.write(`reins: ${options.cwd}: ${why}, so its ${itemSummary(items)} are off. Trust it with \`reins trust\` (or --trust for this run).\n`)
    }
    return untrusted
  })
