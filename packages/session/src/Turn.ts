import { Context, Effect, Layer, Queue, Stream } from "effect"
import {
  Bus,
  GenAiAttr,
  GenAiOperation,
  Ids,
  WorkDir,
  addUsage,
  agentSpanName,
  cacheHitRate,
  emptyUsage,
  providerName,
  usageAttributes,
  type ModelRef,
  type Part,
  type Session,
  type Spending,
  type TurnResult,
  type UserMessage
} from "@reins/domain"
import { Compaction } from "@reins/compaction"
import { Permission, check } from "@reins/permission"
import { Provider, ProviderSettings, providerConfig } from "@reins/provider"
import { RunClaims, SessionStore, type MessageWithParts, type SessionRun } from "@reins/storage"
import { SessionHooks, Skills, ToolRegistry, skillsBlock } from "@reins/tool"
import { BudgetSettings, hasBudget, openLedger, type Ledger } from "./Budget.ts"
import { DoomLoopSettings } from "./DoomLoop.ts"
import type { PromptError } from "./Errors.ts"
import { SessionProcessor } from "./Processor.ts"
import { PromptSettings } from "./PromptFamily.ts"
import { runTurnLoop, type LoopDeps, type TurnInput, type TurnStep } from "./TurnLoop.ts"
import { announceUser, newUserMessage } from "./TurnMessages.ts"
import { setupTurn, type SetupDeps } from "./TurnSetup.ts"
import { Agents } from "./agent/Agents.ts"

export { turnDone } from "./TurnDecision.ts"
export type { TurnStep } from "./TurnLoop.ts"
// what a turn's `task` calls run on, provided to each turn by the session service
export { TurnSubAgents, subAgentsFor } from "./agent/SubAgentRunner.ts"

/** Loop settings: the step limit (T1) is unlimited unless set. */
export const SessionSettings = Context.Reference<{ readonly maxSteps?: number }>("reins/session/Settings", {
  defaultValue: () => ({})
})

/** The step loop of a turn, as a stream of its steps, and the user messages it writes. */
export class Turn extends Context.Service<
  Turn,
  {
    /** A user message (and its text part), not stored yet. */
    userMessage(sessionID: string, text: string, metadata?: UserMessage["metadata"]): Effect.Effect<{ readonly message: UserMessage; readonly part: Part }>
    /** Tells the bus about a stored user message. */
    announce(message: UserMessage, parts: ReadonlyArray<Part>): Effect.Effect<void>
    /** The steps of a turn whose request `turnStart` is stored, holding the session as `run`; `known`: the user messages it need not answer. */
    steps(session: Session, turnStart: MessageWithParts, model: ModelRef, run: SessionRun, known: Set<string>): Stream.Stream<TurnStep, PromptError>
    /** The steps run to the turn's result. */
    run(session: Session, turnStart: MessageWithParts, model: ModelRef, run: SessionRun, known: Set<string>): Effect.Effect<TurnResult, PromptError>
  }
>()("reins/session/Turn") {
  static readonly layer = Layer.effect(
    Turn,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const claims = yield* RunClaims
      const bus = yield* Bus
      const ids = yield* Ids
      const registry = yield* ToolRegistry
      const processor = yield* SessionProcessor
      const settings = yield* SessionSettings
      const cwd = yield* WorkDir
      const permission = yield* Permission
      const compaction = yield* Compaction
      const doomLoopLimits = yield* DoomLoopSettings
      const promptSettings = yield* PromptSettings
      // the skills found when the runtime started, listed in the dynamic part of the system prompt
      // a skill the config's rules deny (`"skill": {"secret-*": "deny"}`) is not listed
      const skills = skillsBlock(
        (yield* Skills).filter((s) => check(permission.rules, { permission: "skill", patterns: [s.name] }, permission.mode).action !== "deny")
      )
      // plugins' `chat.params`: temperature and provider options of each model call
      const sessionHooks = yield* SessionHooks
      const providerSettings = yield* ProviderSettings
      const agents = yield* Agents

      const userMessage = (sessionID: string, text: string, metadata?: UserMessage["metadata"]) => newUserMessage(ids, sessionID, text, metadata)
      const announce = (message: UserMessage, parts: ReadonlyArray<Part>) => announceUser(bus, message, parts)
      const deps: LoopDeps = { store, claims, bus, ids, registry, processor, compaction, sessionHooks, cwd, permission, doomLoopLimits }
      const provider = yield* Provider
      const setupDeps: SetupDeps = {
        registry,
        permission,
        agents,
        promptSettings,
        cwd,
        skills,
        maxSteps: settings.maxSteps,
        prepare: provider.prepare,
        contextOf: (model: ModelRef) => compaction.window(model).limit
      }

      const budget = yield* BudgetSettings
      // the ledgers of the turns running now, by session: a sub-agent's turn answers to its parent's
      const ledgers = new Map<string, Ledger>()
      /** The turn's ledger when a cap is set (a session's own turn reads what the session spent before). */
      const ledgerFor = Effect.fnUntraced(function* (session: Session) {
        // a sub-agent's turn runs inside its parent's; a child session prompted on its own has the session's caps
        const parentID = agents.of(session.id)?.parent
        const parent = parentID === undefined ? undefined : ledgers.get(parentID)
        const subAgent = parent !== undefined
        const totals = !subAgent && budget.session !== undefined ? (yield* store.totals([session.id])).get(session.id) : undefined
        return openLedger(budget, {
          parent,
          subAgent,
          sessionSpent: (totals?.cost ?? 0) + (totals?.subAgents?.cost ?? 0)
        })
      })

      /** The turn: set up once (agent, tools, system prompt), then its loop, each step given to `emit`. */
      const loop = (input: TurnInput, emit: (step: TurnStep) => Effect.Effect<void>) =>
        Effect.flatMap(setupTurn(setupDeps, input.session, input.model), (setup) => {
          if (!hasBudget(budget)) return runTurnLoop(deps, setup, input, emit)
          const id = input.session.id
          return Effect.flatMap(ledgerFor(input.session), (ledger) =>
            Effect.suspend(() => {
              ledgers.set(id, ledger)
              return runTurnLoop(deps, setup, { ...input, ledger }, emit)
            }).pipe(Effect.ensuring(Effect.sync(() => ledgers.get(id) === ledger && ledgers.delete(id))))
          )
        })

      const steps = (
        session: Session,
        turnStart: MessageWithParts,
        model: ModelRef,
        run: SessionRun,
        known: Set<string>
      ): Stream.Stream<TurnStep, PromptError> =>
        Stream.callback<TurnStep, PromptError>(
          (queue) =>
            loop({ session, turnStart, model, run, known }, (step) => Effect.asVoid(Queue.offer(queue, step))).pipe(
              Effect.andThen(Queue.end(queue)),
              Effect.catchCause((cause) => Queue.failCause(queue, cause))
            ),
          // the loop waits for its consumer: a step is not taken before the one before it was taken in
          { bufferSize: 1, strategy: "suspend" }
        )

      const run = (session: Session, turnStart: MessageWithParts, model: ModelRef, claim: SessionRun, known: Set<string>) => {
        const agentName = (agents.of(session.id)?.agent ?? agents.primary).name
        // the turn's usage summed over its steps, for its `invoke_agent` span (T10), with what its
        // sub-agents spent (T19) counted in and also shown apart
        let usage = emptyUsage
        let cost = 0
        let delegated: Spending = { usage: emptyUsage, cost: 0 }
        const tally = (step: TurnStep) =>
          Effect.sync(() => {
            if (step._tag !== "Stepped") return
            usage = addUsage(usage, step.outcome.usage)
            cost += step.outcome.cost
            const spent = step.outcome.delegated
            if (spent !== undefined) delegated = { usage: addUsage(delegated.usage, spent.usage), cost: delegated.cost + spent.cost }
          })
        return loop({ session, turnStart, model, run: claim, known }, tally).pipe(
          Effect.onExit(() => {
            const all = addUsage(usage, delegated.usage)
            return Effect.annotateCurrentSpan({
              ...usageAttributes(all),
              "reins.cache.hit_rate": cacheHitRate(all) ?? 0,
              "reins.cost": cost + delegated.cost,
              ...(delegated.cost > 0 || delegated.usage.input + delegated.usage.output + delegated.usage.cacheRead + delegated.usage.cacheWrite > 0
                ? {
                    "reins.subagents.usage.input_tokens": delegated.usage.input + delegated.usage.cacheRead + delegated.usage.cacheWrite,
                    "reins.subagents.usage.output_tokens": delegated.usage.output,
                    "reins.subagents.cost": delegated.cost
                  }
                : {})
            })
          }),
          Effect.tapError((error) => Effect.annotateCurrentSpan(GenAiAttr.errorType, "reason" in error ? String(error.reason) : error._tag)),
          // one span per turn, the conventions' agent invocation: its model calls and tools are its children
          Effect.withSpan(agentSpanName(agentName), {
            attributes: {
              [GenAiAttr.operation]: GenAiOperation.invokeAgent,
              [GenAiAttr.agentName]: agentName,
              [GenAiAttr.conversationId]: session.id,
              [GenAiAttr.provider]: providerName(providerConfig(providerSettings, model.providerID)?.type),
              [GenAiAttr.requestModel]: model.modelID,
              "reins.provider.id": model.providerID
            }
          })
        )
      }

      return Turn.of({ userMessage, announce, steps, run })
    })
  )
}
