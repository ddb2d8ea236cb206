import { Context, Effect, Schema } from "effect"
import { define, render, ToolError, type ToolContext } from "../Tool.ts"
import template from "./task.txt" with { type: "text" }

/** One sub-agent the `task` tool offers. */
export interface SubAgentInfo {
  readonly name: string
  readonly description: string
}

/** What the `task` tool asks for. */
export interface SubAgentRequest {
  readonly description: string
  readonly prompt: string
  readonly agent: string
}

/** A sub-agent's finished work: its session, its final answer and what it cost. */
export interface SubAgentResult {
  readonly sessionID: string
  readonly agent: string
  readonly text: string
  readonly steps: number
  readonly usage: { readonly input: number; readonly output: number; readonly reasoning: number; readonly cacheRead: number; readonly cacheWrite: number }
  readonly cost: number
}

/**
 * The port through which `task` runs sub-agents: implemented by the session package (a child
 * session and its turn), wired by the runtime. The default has no sub-agents.
 */
export const SubAgents = Context.Reference<{
  /** The sub-agents offered to sessions (listed in the tool's description). */
  readonly agents: ReadonlyArray<SubAgentInfo>
  /** Runs one in a child session of `ctx.sessionID`; its failure is the tool's. */
  run(request: SubAgentRequest, ctx: ToolContext): Effect.Effect<SubAgentResult, ToolError>
}>("reins/tool/SubAgents", {
  defaultValue: () => ({
    agents: [],
    run: () => Effect.fail(new ToolError({ reason: "failed", message: "This runtime has no sub-agents: do the task yourself." }))
  })
})

const Parameters = Schema.Struct({
  description: Schema.String.annotate({ description: "A short (3-5 words) description of the task" }),
  prompt: Schema.String.annotate({ description: "The task for the agent to perform: everything it needs to know" }),
  subagent_type: Schema.String.annotate({ description: "The type of specialized agent to use for this task" })
})

/** The list of sub-agents for the description: `- name: description`. */
export const agentList = (agents: ReadonlyArray<SubAgentInfo>) =>
  agents.length === 0 ? "(none)" : agents.map((a) => `- ${a.name}: ${a.description || "(no description)"}`).join("\n")

/** The `task` tool (T19): runs a sub-agent in a child session and returns its final answer and session id. */
export const task = Effect.gen(function* () {
  const subAgents = yield* SubAgents
  return yield* define("task", {
    description: render(template, { agents: agentList(subAgents.agents) }),
    parameters: Parameters,
    // the answer is the sub-agent's whole summary, bounded by its own model's output
    truncate: false,
    permissions: (args) => [
      { permission: "task", patterns: [args.subagent_type], always: [args.subagent_type], title: `Run the ${args.subagent_type} agent: ${args.description}` }
    ],
    execute: (args, ctx) =>
      subAgents.run({ description: args.description, prompt: args.prompt, agent: args.subagent_type }, ctx).pipe(
        Effect.map((result) => ({
          title: args.description,
          output: [`task_id: ${result.sessionID} (the ${result.agent} agent's session)`, "", "<task_result>", result.text, "</task_result>"].join("\n"),
          metadata: { sessionID: result.sessionID, agent: result.agent, steps: result.steps, usage: result.usage, cost: result.cost }
        }))
      )
  })
})
