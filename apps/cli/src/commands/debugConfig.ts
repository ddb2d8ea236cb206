import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import * as os from "node:os"
import { configFiles, readConfigFile, type Config } from "@reins/domain"
import { loadAgents } from "@reins/session"
import { discoverExtensions } from "@reins/tool"
import { usage } from "../CliError.ts"
import { itemLines } from "../ProjectTrust.ts"
import { loadSetup } from "../Setup.ts"

/** One value of the merged config: its dotted path, the value, and the file it came from (the last that set it). */
export interface Sourced {
  readonly path: string
  readonly value: unknown
  readonly file: string
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Keys whose values are secrets: shown as `***`. */
const SECRET = /^(apiKey|headers|env)$/

const redact = (key: string, value: unknown): unknown =>
  SECRET.test(key) ? (isPlainObject(value) ? Object.fromEntries(Object.keys(value).map((k) => [k, "***"])) : "***") : value

/** The leaves of one file's config (objects walked, arrays and scalars whole), as `mergeConfig` merges them. */
const leaves = (value: Record<string, unknown>, prefix: ReadonlyArray<string> = []): Array<{ path: ReadonlyArray<string>; value: unknown }> =>
  Object.entries(value).flatMap(([key, v]) =>
    isPlainObject(v) && !SECRET.test(key) && Object.keys(v).length > 0 ? leaves(v, [...prefix, key]) : [{ path: [...prefix, key], value: redact(key, v) }]
  )

const dotted = (path: ReadonlyArray<string>) => path.map((k) => (/^[\w$-]+$/.test(k) ? k : JSON.stringify(k))).join(".")

/** Every value of the merged config with the file that set it, in the files' order (lowest precedence first). */
export const sourcedConfig = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const byPath = new Map<string, Sourced>()
    for (const file of files) {
      const config: Config = yield* readConfigFile(file)
      for (const leaf of leaves(config as Record<string, unknown>)) {
        const key = dotted(leaf.path)
        // a later file's object replaces nothing above it, but a scalar or array replaces what was under its path
        for (const old of [...byPath.keys()]) if (old.startsWith(`${key}.`)) byPath.delete(old)
        byPath.set(key, { path: key, value: leaf.value, file })
      }
    }
    return [...byPath.values()]
  })

/** The built-in tools (each model is offered its family's editing tools; an agent's `tools` and rules narrow them); `skill` when there are skills. */
const builtinTools = ["bash", "read", "glob", "grep", "list", "write", "edit", "apply_patch", "task"]

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))

/** `reins debug config`: the merged config with where each value came from, and what was discovered (and skipped, and why). */
export const configCommand = Command.make("config", { format }, ({ format }) =>
  Effect.gen(function* () {
    // inspecting a repository runs none of it: an untrusted project's plugins are listed, not loaded
    const setup = yield* loadSetup({ notice: false })
    const home = os.homedir()
    const files = configFiles({ cwd: setup.cwd, env: setup.env, home })
    const values = yield* sourcedConfig(files).pipe(Effect.mapError((e) => usage(e.message)))
    const trusted = setup.project.trusted
    const agents = yield* loadAgents({ config: setup.config.agent, cwd: setup.cwd, home, trusted }).pipe(Effect.mapError((e) => usage(e.message)))
    const extensions = (yield* discoverExtensions({ cwd: setup.cwd, home, trusted, ...(setup.config.hooks ? { hooks: setup.config.hooks } : {}) })).report
    // MCP servers as configured; their status and tools: `reins mcp list` (it starts them)
    const mcp = Object.entries(setup.config.mcp ?? {}).map(([name, server]) => ({
      name,
      type: server.type,
      enabled: server.enabled !== false,
      target: server.type === "local" ? server.command.join(" ") : server.url
    }))
    const tools = [...builtinTools, ...(extensions.skills.found.length > 0 ? ["skill"] : [])]
    const trust = {
      directory: setup.cwd,
      trusted,
      // what trust switches on (shown whether or not it is on)
      items: setup.project.items.map((i) => ({ kind: i.kind, name: i.name, detail: i.detail }))
    }
    const report = {
      trust,
      files,
      config: values,
      agents: agents.agents.map((a) => ({ name: a.name, mode: a.mode, description: a.description, source: a.source, ...(a.model ? { model: a.model } : {}) })),
      agentsSkipped: agents.skipped,
      tools,
      skills: extensions.skills,
      customTools: extensions.tools,
      plugins: extensions.plugins,
      hooks: extensions.hooks,
      mcp
    }
    if (format === "json") return yield* Console.log(JSON.stringify(report, null, 2))
    const lines: Array<string> = []
    const skipped = (list: ReadonlyArray<{ readonly path?: string; readonly source?: string; readonly error?: string; readonly reason?: string }>) =>
      list.map((s) => `  skipped ${s.path ?? s.source}: ${s.error ?? s.reason}`)
    lines.push(
      trust.items.length === 0
        ? "Trust: nothing in this project's configuration runs code or loosens rules."
        : trusted
          ? `Trust: ${setup.cwd} is trusted; its configuration runs:`
          : `Trust: ${setup.cwd} is not trusted, so these are off (reins trust switches them on):`,
      ...itemLines(setup.project.items),
      ""
    )
    lines.push("Config files (lowest precedence first):", ...(files.length === 0 ? ["  (none: defaults only)"] : files.map((f) => `  ${f}`)), "")
    lines.push(
      "Merged config (value ← file):",
      ...(values.length === 0 ? ["  (empty)"] : values.map((v) => `  ${v.path} = ${JSON.stringify(v.value)}  ← ${v.file}`)),
      ""
    )
    lines.push(
      "Agents:",
      ...report.agents.map((a) => `  ${a.name} (${a.mode}${a.model ? `, ${a.model}` : ""}) ← ${a.source}${a.description ? `: ${a.description}` : ""}`),
      ...skipped(agents.skipped),
      ""
    )
    lines.push(`Built-in tools: ${tools.join(", ")}`, "")
    lines.push(
      "Skills:",
      ...(extensions.skills.found.length === 0
        ? ["  (none)"]
        : extensions.skills.found.map((s) => `  ${s.name} ← ${s.path}${s.description ? `: ${s.description}` : ""}`)),
      ...skipped(extensions.skills.skipped),
      ""
    )
    lines.push(
      "Custom tools:",
      ...(extensions.tools.found.length === 0 ? ["  (none)"] : extensions.tools.found.map((t) => `  ${t.id} ← ${t.path}`)),
      ...skipped(extensions.tools.failed),
      ""
    )
    lines.push(
      "Plugins:",
      ...(extensions.plugins.found.length === 0 ? ["  (none)"] : extensions.plugins.found.map((p) => `  ${p.name}: ${p.hooks.join(", ") || "(no hooks)"}`)),
      ...skipped(extensions.plugins.failed),
      ""
    )
    lines.push(
      "Command hooks:",
      ...(extensions.hooks.found.length === 0 ? ["  (none)"] : extensions.hooks.found.map((h) => `  ${h.name}: ${h.command}`)),
      ...skipped(extensions.hooks.failed),
      ""
    )
    // configured, not started here: connecting is what `reins mcp list` does (status, tools, errors)
    lines.push(
      "MCP servers (connection status and tools: reins mcp list):",
      ...(mcp.length === 0 ? ["  (none)"] : mcp.filter((m) => m.enabled).map((m) => `  ${m.name} (${m.type}): ${m.target}`)),
      ...mcp.filter((m) => !m.enabled).map((m) => `  skipped ${m.name}: "enabled": false`)
    )
    yield* Console.log(lines.join("\n"))
  })
).pipe(
  Command.withDescription(
    "Print the merged config with the file each value came from, and the agents, skills, tools, plugins, hooks and MCP servers found (and what was skipped, and why)"
  )
)
