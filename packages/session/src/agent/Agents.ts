import { Context, Effect } from "effect"
import * as path from "node:path"
import {
  ConfigError,
  DEFAULT_AGENT,
  outsidePromptRoots,
  type AgentConfig,
  type AgentMode,
  type AgentTools,
  type AgentsConfig,
  type ModelRef
} from "@reins/domain"
import { fromConfig, isDisabled, match, type Mode, type Rule } from "@reins/permission"
import { isPromptPath } from "../PromptFamily.ts"
import { readAgentDir, type Skipped } from "./AgentFiles.ts"
import { builtinAgents } from "./Builtins.ts"
import * as fs from "node:fs"

/** An agent ready to run: its config resolved (prompt read, permission as rules). */
export interface AgentInfo {
  readonly name: string
  readonly description: string
  readonly mode: AgentMode
  /** `"<provider>/<model>"`: default the run's (or the parent's) model. */
  readonly model?: string
  readonly variant?: string
  /** Replaces the model family's system prompt header. */
  readonly header?: string
  /** Appended to the system prompt (the built-ins' instructions). */
  readonly note?: string
  readonly tools?: AgentTools
  /** Its permission rules, over the config's. */
  readonly rules: ReadonlyArray<Rule>
  readonly steps?: number
  /** `built-in`, `reins.json`, or the Markdown file it was read from. */
  readonly source: string
}

/** The agents known to a runtime, and what was skipped. */
export interface AgentCatalog {
  readonly agents: ReadonlyArray<AgentInfo>
  readonly skipped: ReadonlyArray<Skipped>
}

/** How deep sub-agents nest: a session at this depth is not offered `task`. */
export const MAX_AGENT_DEPTH = 2

/** Whether the agent offers a tool (its `tools` list or map; wildcards; the last matching entry of a map wins). */
export const offersTool = (agent: Pick<AgentInfo, "tools" | "rules">, tool: string, mode: Mode = "last-match") => {
  if (isDisabled(agent.rules, tool, mode)) return false
  const tools = agent.tools
  if (tools === undefined) return true
  if (Array.isArray(tools)) return tools.some((p) => match(tool, p))
  let offered = true
  for (const [pattern, on] of Object.entries(tools as Record<string, boolean>)) if (match(tool, pattern)) offered = on
  return offered
}

/** The `"provider/model"` of an agent as a model reference. */
export const agentModel = (agent: AgentInfo, fallback: ModelRef): ModelRef => {
  if (agent.model === undefined) return agent.variant !== undefined ? { ...fallback, variant: agent.variant } : fallback
  const at = agent.model.indexOf("/")
  return { providerID: agent.model.slice(0, at), modelID: agent.model.slice(at + 1), ...(agent.variant !== undefined ? { variant: agent.variant } : {}) }
}

const readPrompt = (value: string | undefined, source: string, field: string, directory: string, home: string) =>
  Effect.gen(function* () {
    if (value === undefined || !isPromptPath(value)) return value?.trim() || undefined
    const given = value.trim()
    const resolved = given.startsWith("~/") ? path.join(home, given.slice(2)) : path.resolve(directory, given)
    // a prompt file goes to the provider: only from the project or the user's config dir
    const outside = outsidePromptRoots(resolved, directory, path.join(home, ".config", "reins"))
    if (outside !== undefined) return yield* new ConfigError({ file: source, field, problem: `the prompt file ${outside}` })
    return yield* Effect.tryPromise({
      try: () => fs.promises.readFile(resolved, "utf8").then((t) => t.trim()),
      catch: () =>
        new ConfigError({
          file: source,
          field,
          problem: `cannot read the prompt file ${resolved}; fix the path (relative to ${directory}) or give the text inline`
        })
    })
  })

const resolveInfo = (name: string, config: AgentConfig, source: string, note?: string, header?: string, home?: string): AgentInfo => ({
  name,
  description: config.description ?? "",
  mode: config.mode ?? "all",
  rules: fromConfig(config.permission, home),
  source,
  ...(config.model !== undefined ? { model: config.model } : {}),
  ...(config.variant !== undefined ? { variant: config.variant } : {}),
  ...(header !== undefined ? { header } : {}),
  ...(note !== undefined ? { note } : {}),
  ...(config.tools !== undefined ? { tools: config.tools } : {}),
  ...(config.steps !== undefined ? { steps: config.steps } : {})
})

/** Named agents from `agent` in reins.json (its `steps` and `prompt` are the default agent's). */
const configAgents = (config: AgentsConfig | undefined): Array<[string, AgentConfig]> =>
  Object.entries(config ?? {}).flatMap(([name, value]) =>
    name === "steps" || name === "prompt" || typeof value !== "object" ? [] : [[name, value as AgentConfig]]
  )

/**
 * Every agent: the built-ins, then `~/.config/reins/agents/*.md`, `.reins/agents/*.md` and
 * `agent.<name>` in reins.json, each later one's fields over the earlier's; `disable: true` removes one.
 */
export const loadAgents = Effect.fn("Agents.load")(function* (options: {
  readonly config?: AgentsConfig
  readonly cwd: string
  readonly home: string
  readonly globalDir?: string
  /** Whether the project's `.reins/agents` count (default true; not for an untrusted directory). */
  readonly trusted?: boolean
}) {
  const layers: Array<{ name: string; config: AgentConfig; source: string; note?: string }> = []
  for (const [name, builtin] of Object.entries(builtinAgents))
    layers.push({ name, config: builtin.config, source: "built-in", ...(builtin.note ? { note: builtin.note } : {}) })
  const globalDir = options.globalDir ?? path.join(options.home, ".config", "reins", "agents")
  const skipped: Array<Skipped> = []
  for (const dir of options.trusted === false ? [globalDir] : [globalDir, path.join(options.cwd, ".reins", "agents")]) {
    const found = yield* readAgentDir(dir)
    skipped.push(...found.skipped)
    for (const agent of found.agents) layers.push({ name: agent.name, config: agent.config, source: agent.file })
  }
  for (const [name, config] of configAgents(options.config)) layers.push({ name, config, source: "reins.json" })
  const merged = new Map<string, { config: AgentConfig; source: string; note?: string }>()
  for (const layer of layers) {
    const before = merged.get(layer.name)
    // a prompt of its own replaces the built-in's note
    const note = layer.config.prompt !== undefined ? undefined : (layer.note ?? before?.note)
    merged.set(layer.name, { config: { ...before?.config, ...layer.config }, source: layer.source, ...(note ? { note } : {}) })
  }
  const agents: Array<AgentInfo> = []
  for (const [name, { config, source, note }] of merged) {
    if (config.disable) {
      skipped.push({ source: `${name} (${source})`, reason: "disabled (disable: true)" })
      continue
    }
    const header = yield* readPrompt(
      config.prompt,
      source === "reins.json" ? "reins.json" : source,
      source === "reins.json" ? `agent.${name}.prompt` : "prompt",
      options.cwd,
      options.home
    )
    agents.push(resolveInfo(name, config, source, note, header, options.home))
  }
  return { agents, skipped } satisfies AgentCatalog
})

/** What a session runs as: its agent, the session it was started from, its depth (0 for a top-level session) and model. */
export interface SessionAgent {
  readonly agent: AgentInfo
  readonly parent?: string
  readonly depth: number
  readonly model?: ModelRef
}

/** The agents of a runtime, and which agent each session of this process runs. */
export interface AgentsService {
  readonly catalog: AgentCatalog
  get(name: string): AgentInfo | undefined
  /** The agent a session runs when none was chosen: `build`. */
  readonly primary: AgentInfo
  /** Sets the agent a session runs (its parent and depth for a child of `task`). */
  assign(sessionID: string, entry: SessionAgent): void
  of(sessionID: string): SessionAgent | undefined
  /** Forgets a session's agent once its turn has ended (the session record keeps the agent's name). */
  release(sessionID: string): void
  /** Whether `sessionID` is `root` or one of its sub-agent sessions. */
  within(root: string): (sessionID: string) => boolean
}

/** The service over a catalog (`loadAgents`). */
export const makeAgents = (catalog: AgentCatalog): AgentsService => {
  const byName = new Map(catalog.agents.map((a) => [a.name, a]))
  const sessions = new Map<string, SessionAgent>()
  return {
    catalog,
    get: (name) => byName.get(name),
    primary: byName.get(DEFAULT_AGENT) ?? resolveInfo(DEFAULT_AGENT, { mode: "primary" }, "built-in"),
    assign: (sessionID, entry) => void sessions.set(sessionID, entry),
    of: (sessionID) => sessions.get(sessionID),
    release: (sessionID) => void sessions.delete(sessionID),
    within: (root) => (sessionID) => {
      for (let id: string | undefined = sessionID, hops = 0; id !== undefined && hops <= MAX_AGENT_DEPTH + 1; id = sessions.get(id)?.parent, hops++) {
        if (id === root) return true
      }
      return false
    }
  }
}

/** The built-in agents only, without reading any file. */
export const builtinCatalog = (): AgentCatalog => ({
  agents: Object.entries(builtinAgents).map(([name, b]) => resolveInfo(name, b.config, "built-in", b.note)),
  skipped: []
})

/** The agents (default: the built-ins); the runtime provides those of its config and folders. */
export const Agents = Context.Reference<AgentsService>("reins/session/Agents", { defaultValue: () => makeAgents(builtinCatalog()) })
