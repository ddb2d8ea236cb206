import { Context, Effect, Layer, Semaphore } from "effect"
import { addUsage, emptyUsage, type Session, type TurnResult } from "@reins/domain"
import { SessionStore, type SessionTotals, type StoreError } from "@reins/storage"
import { SubAgents, ToolError, type SubAgentRequest, type SubAgentResult, type ToolContext } from "@reins/tool"
import type { PromptError } from "../Errors.ts"
import type { PromptInput } from "../SessionService.ts"
import { Agents, MAX_AGENT_DEPTH, agentModel } from "./Agents.ts"

/** Sub-agents running at once per level of nesting, over all sessions of the process (a bound per level: a child waiting for a slot never holds one its parent needs). */
export const SUBAGENT_CONCURRENCY = 4

/** Runs one sub-agent in a child session of `ctx.sessionID`. */
export type RunSubAgent = (request: SubAgentRequest, ctx: ToolContext) => Effect.Effect<SubAgentResult, ToolError>

/**
 * The sub-agent runner of the turn running now: provided to each turn by what runs it (the
 * session service, which can run the child's turn too), read by the `task` tool when it is called.
 * Outside a turn there is none.
 */
export const TurnSubAgents = Context.Reference<{ readonly run: RunSubAgent }>("reins/session/TurnSubAgents", {
  defaultValue: () => ({
    run: () => Effect.fail(new ToolError({ reason: "failed", message: "Sub-agents run only inside a turn: do this task yourself." }))
  })
})

/** The `SubAgents` port: the sub-agents of `Agents`, run by the runner of the turn that calls `task`. */
export const layerSubAgents = Layer.effect(
  SubAgents,
  Effect.gen(function* () {
    const agents = yield* Agents
    return {
      agents: agents.catalog.agents.filter((a) => a.mode !== "primary").map((a) => ({ name: a.name, description: a.description })),
      run: (request: SubAgentRequest, ctx: ToolContext) => Effect.flatMap(TurnSubAgents, (runner) => runner.run(request, ctx))
    }
  })
)

/** What a sub-agent's child session and turn are made with: the session service's own `create` and `prompt`. */
export interface ChildSessions {
  create(input: { readonly directory: string; readonly title?: string; readonly parentID?: string }): Effect.Effect<Session, StoreError>
  prompt(input: PromptInput): Effect.Effect<TurnResult, PromptError>
}

/**
 * The runner the session service provides to its turns: a child session per `task` call, its turn
 * run inside the call (abort, spans and events follow). Made once per service, so the bound on
 * sub-agents running at once holds over all its sessions.
 */
export const makeSubAgentRunner = Effect.fnUntraced(function* (sessions: ChildSessions) {
  const store = yield* SessionStore
  const agents = yield* Agents
  const levels = yield* Effect.forEach(Array.from({ length: MAX_AGENT_DEPTH }), () => Semaphore.make(SUBAGENT_CONCURRENCY))

  const names = () =>
    agents.catalog.agents
      .filter((a) => a.mode !== "primary")
      .map((a) => a.name)
      .join(", ")
  const failed = (message: string) => new ToolError({ reason: "failed", message })

  const run: RunSubAgent = Effect.fnUntraced(function* (request: SubAgentRequest, ctx: ToolContext) {
    const agent = agents.get(request.agent)
    if (agent === undefined || agent.mode === "primary") {
      return yield* failed(`There is no sub-agent named "${request.agent}". Available sub-agents: ${names() || "(none)"}.`)
    }
    const parent = agents.of(ctx.sessionID)
    const depth = (parent?.depth ?? 0) + 1
    if (depth > MAX_AGENT_DEPTH) return yield* failed(`Sub-agents cannot start sub-agents more than ${MAX_AGENT_DEPTH} levels deep: do this task yourself.`)
    if (parent?.model === undefined) return yield* failed("The session's model is not known: the task tool runs only inside a turn.")
    const model = agentModel(agent, parent.model)
    const child = yield* sessions
      .create({ directory: ctx.cwd, title: `${request.description} (@${agent.name} sub-agent)`, parentID: ctx.sessionID })
      .pipe(Effect.mapError((e) => failed(e.message)))
    agents.assign(child.id, { agent, parent: ctx.sessionID, depth, model })
    if (ctx.progress) yield* ctx.progress({ sessionID: child.id, agent: agent.name })
    const result = yield* sessions.prompt({ sessionID: child.id, text: request.prompt, model }).pipe(
      Effect.mapError((e) => failed(`The ${agent.name} sub-agent (session ${child.id}) failed: ${e.message}`)),
      Semaphore.withPermits(levels[depth - 1]!, 1),
      // held only while it runs, also when its turn never started
      Effect.ensuring(Effect.sync(() => agents.release(child.id)))
    )
    if (result.assistant.error) {
      return yield* failed(`The ${agent.name} sub-agent (session ${child.id}) stopped: ${result.assistant.error.message}`)
    }
    // the child's tokens and cost with its own sub-agents', for the parent's turn
    const totals = (yield* store.totals([child.id]).pipe(Effect.orElseSucceed(() => new Map<string, SessionTotals>()))).get(child.id)
    const usage = addUsage(totals?.usage ?? emptyUsage, totals?.subAgents?.usage ?? emptyUsage)
    const cost = (totals?.cost ?? 0) + (totals?.subAgents?.cost ?? 0)
    return { sessionID: child.id, agent: agent.name, text: result.text, steps: result.steps, usage, cost } satisfies SubAgentResult
  })
  return { run }
})

/** Gives each turn it is applied to the runner for its `task` calls (made once, by `makeSubAgentRunner`). */
export const subAgentsFor = (sessions: ChildSessions) =>
  Effect.map(
    makeSubAgentRunner(sessions),
    (runner) =>
      <A, E, R>(turn: Effect.Effect<A, E, R>) =>
        Effect.provideService(turn, TurnSubAgents, runner)
  )
