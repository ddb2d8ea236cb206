import { Context, Effect, Layer, Semaphore } from "effect"
import { addUsage, emptyUsage } from "@reins/domain"
import { SessionStore, type SessionTotals } from "@reins/storage"
import { SubAgents, ToolError, type SubAgentRequest, type SubAgentResult, type ToolContext } from "@reins/tool"
import { SessionService } from "../SessionService.ts"
import { Agents, MAX_AGENT_DEPTH, agentModel } from "./Agents.ts"

/** Sub-agents running at once per level of nesting, over all sessions of the process (a bound per level: a child waiting for a slot never holds one its parent needs). */
export const SUBAGENT_CONCURRENCY = 4

type Run = (request: SubAgentRequest, ctx: ToolContext) => Effect.Effect<SubAgentResult, ToolError>

/**
 * Where the runner is bound once the session service exists: the `task` tool is built before it
 * (the tool registry is part of what the service needs), so the port reaches it through here.
 */
export class SubAgentSlot extends Context.Service<SubAgentSlot, { run: Run | undefined }>()("reins/session/SubAgentSlot") {
  static readonly layer = Layer.sync(SubAgentSlot, () => ({ run: undefined }))
}

/** The `SubAgents` port: the sub-agents of `Agents`, run through the slot. */
export const layerSubAgents = Layer.effect(
  SubAgents,
  Effect.gen(function* () {
    const agents = yield* Agents
    const slot = yield* SubAgentSlot
    return {
      agents: agents.catalog.agents.filter((a) => a.mode !== "primary").map((a) => ({ name: a.name, description: a.description })),
      run: (request: SubAgentRequest, ctx: ToolContext) =>
        Effect.suspend(() =>
          slot.run ? slot.run(request, ctx) : Effect.fail(new ToolError({ reason: "failed", message: "Sub-agents are not available in this runtime." }))
        )
    }
  })
)

/** Binds the runner: a child session per `task` call, its turn run inside the call (abort, spans and events follow). */
export const layerSubAgentRunner = Layer.effectDiscard(
  Effect.gen(function* () {
    const sessions = yield* SessionService
    const store = yield* SessionStore
    const agents = yield* Agents
    const slot = yield* SubAgentSlot
    const levels = yield* Effect.forEach(Array.from({ length: MAX_AGENT_DEPTH }), () => Semaphore.make(SUBAGENT_CONCURRENCY))

    const names = () =>
      agents.catalog.agents
        .filter((a) => a.mode !== "primary")
        .map((a) => a.name)
        .join(", ")
    const failed = (message: string) => new ToolError({ reason: "failed", message })

    slot.run = Effect.fnUntraced(function* (request: SubAgentRequest, ctx: ToolContext) {
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
  })
)
