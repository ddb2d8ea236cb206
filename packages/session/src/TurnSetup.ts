import { Clock, type Context, Effect } from "effect"
import type { ModelRef, Session } from "@reins/domain"
import { estimateText } from "@reins/compaction"
import type { Permission } from "@reins/permission"
import type { ToolSpec } from "@reins/provider"
import type { ToolRegistry } from "@reins/tool"
import { admitOutside, systemPrompt } from "./Prompt.ts"
import { headerFor, type PromptSettings } from "./PromptFamily.ts"
import { type AgentInfo, type AgentsService, MAX_AGENT_DEPTH, offersTool } from "./agent/Agents.ts"

/** What a turn decides once, before its first step: its agent's tools, system prompt and step limit. */
export interface TurnSetup {
  /** The tools offered now (the dynamic ones, MCP servers', may change between steps). */
  readonly offered: () => ReadonlyArray<ToolSpec>
  /** The tools offered when the turn started (its first step's). */
  readonly tools: ReadonlyArray<ToolSpec>
  readonly system: ReadonlyArray<string>
  readonly maxSteps: number | undefined
  /** What every request carries besides its messages (system prompt and tools), for the stalled error's figures. */
  readonly fixedCost: number
}

/** What the setup reads, resolved when the turn service is built. */
export interface SetupDeps {
  readonly registry: ToolRegistry["Service"]
  readonly permission: Permission["Service"]
  readonly agents: AgentsService
  readonly promptSettings: Context.Service.Shape<typeof PromptSettings>
  readonly cwd: string
  /** The skills block of the system prompt (those the rules do not deny), empty when none. */
  readonly skills: string
  /** The step limit from config, when the agent sets none. */
  readonly maxSteps: number | undefined
  /** Loads what the model's first call needs (the AI SDK), while the system prompt waits for git. */
  readonly prepare: (model: ModelRef) => Effect.Effect<void>
  /** The model's context window in tokens. */
  readonly contextOf: (model: ModelRef) => number
}

/** Below this window (tokens) the tools a small model can do without (the plan, web pages) are not offered: their definitions would take room the work needs. */
export const SPARE_TOOLS_MIN_CONTEXT = 16_000
const SPARE_TOOLS = new Set(["todowrite", "todoread", "webfetch"])

/** The agents above a session's (its parent's, and theirs): a sub-agent never has more rights than its parent. */
const agentsAbove = (agents: AgentsService, sessionID: string): ReadonlyArray<AgentInfo> => {
  const above: Array<AgentInfo> = []
  for (let id = agents.of(sessionID)?.parent, hops = 0; id !== undefined && hops <= MAX_AGENT_DEPTH + 1; id = agents.of(id)?.parent, hops++) {
    above.push(agents.of(id)?.agent ?? agents.primary)
  }
  return above
}

/** The setup of a turn of `session` on `model`: the session's agent decides the tools, the prompt header and the step limit (T19). */
export const setupTurn = Effect.fnUntraced(function* (deps: SetupDeps, session: Session, model: ModelRef) {
  const { agents, registry, permission, promptSettings } = deps
  const assigned = agents.of(session.id)
  const agent = assigned?.agent ?? agents.primary
  // `task` only while there are sub-agents to run and the session is not at the deepest level
  const nested = (assigned?.depth ?? 0) >= MAX_AGENT_DEPTH || !agents.catalog.agents.some((a) => a.mode !== "primary")
  // the dynamic tools (MCP servers: started on the first turn that needs them) are asked for again before each step
  yield* registry.refresh(session.id)
  const rights = [agent, ...agentsAbove(agents, session.id)]
  const small = deps.contextOf(model) < SPARE_TOOLS_MIN_CONTEXT
  const offered = () =>
    registry
      .forModel(model.modelID, session.id)
      .filter((t) => rights.every((a) => offersTool(a, t.id, permission.mode)) && !(t.id === "task" && nested) && !(small && SPARE_TOOLS.has(t.id)))
      .map((t) => ({ id: t.id, description: t.description, parameters: t.parameters }))
  // Built once per turn: git status costs a process per step, and a system prompt that
  // changes between steps defeats the provider's prompt cache.
  const extra = [
    // `instructions` from config, read when the runtime started
    ...(promptSettings.instructions ?? []).map((i) => `Instructions from ${i.file}:\n${i.text}`),
    ...(deps.skills ? [deps.skills] : []),
    ...(agent.note !== undefined ? [agent.note] : [])
  ]
  // the SDK's modules load while git status runs in its child process
  const system = yield* systemPrompt(
    deps.cwd,
    new Date(yield* Clock.currentTimeMillis),
    agent.header ?? headerFor(model, promptSettings),
    extra,
    admitOutside(permission, session.id),
    deps.prepare(model)
  )
  const tools = offered()
  const fixedCost = estimateText(system.join("\n")) + estimateText(JSON.stringify(tools))
  return { offered, tools, system, maxSteps: agent.steps ?? deps.maxSteps, fixedCost } satisfies TurnSetup
})
