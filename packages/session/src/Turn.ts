import { Clock, Context, Effect, Layer, Option, Stream } from "effect"
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
  userFlag,
  type AssistantMessage,
  type ModelRef,
  type Part,
  type Session,
  type Spending,
  type TurnResult,
  type UserMessage
} from "@reins/domain"
import {
  Compaction,
  compacted,
  continuation,
  estimateMessages,
  estimateText,
  isStalled,
  modelView,
  noStall,
  nothingCompacted,
  stallError,
  stepFitted,
  stepOverflowed,
  tokenCount,
  type CompactionError,
  type Stall
} from "@reins/compaction"
import { Permission, check } from "@reins/permission"
import { ProviderSettings, providerConfig } from "@reins/provider"
import { RunClaims, SessionStore, type MessageWithParts, type SessionRun } from "@reins/storage"
import { SessionHooks, Skills, ToolRegistry, chatParamsFor, skillsBlock } from "@reins/tool"
import { DoomLoopSettings, makeDoomLoopGuard, type DoomLoopGuard } from "./DoomLoop.ts"
import type { PromptError } from "./Errors.ts"
import { SessionProcessor, type StepOutcome } from "./Processor.ts"
import { admitOutside, systemPrompt } from "./Prompt.ts"
import { PromptSettings, headerFor } from "./PromptFamily.ts"
import { makeTranscript } from "./Transcript.ts"
import { Agents, type AgentInfo, MAX_AGENT_DEPTH, offersTool } from "./agent/Agents.ts"

/** Loop settings: the step limit (T1) is unlimited unless set. */
export const SessionSettings = Context.Reference<{ readonly maxSteps?: number }>("reins/session/Settings", {
  defaultValue: () => ({})
})

/** The pause before a turn that could not release its session (a message was just queued) reads again. */
const RELEASE_RETRY_MS = 10

const MAX_STEPS_NOTE = "You have reached the maximum number of steps for this task. Do not call any tools. Answer now: summarise what you did and what remains."

/** What the step loop of a turn gives, in order: each step's outcome, a compaction after it, the end. */
export type TurnStep =
  | { readonly _tag: "Stepped"; readonly step: number; readonly outcome: StepOutcome }
  | { readonly _tag: "Compacted"; readonly step: number; readonly reason: "overflow" | "provider" }
  | { readonly _tag: "Finished"; readonly result: TurnResult }

/** What the loop carries from one step to the next. */
interface LoopState {
  steps: number
  /** Whether compaction makes room: compactions in a row after which the next request still overflows end the turn with a clear error instead of looping (and re-billing summaries). */
  stall: Stall
  /** A step of this turn succeeded: a compaction then continues the work instead of replaying the request. */
  worked: boolean
  /** Queued messages this run has read. */
  queuedSeen: number
}

/**
 * T1: the turn ends only when the newest assistant message is newer than the last user message,
 * finished for a reason other than tool calls, and made no tool calls.
 */
export const turnDone = (messages: ReadonlyArray<MessageWithParts>) => {
  const lastUser = messages.findLast((m) => m.info.role === "user")
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant") return false
  if (lastUser && last.info.id < lastUser.info.id) return false
  if (last.info.error) return true
  if (last.parts.some((p) => p.type === "tool")) return false
  return last.info.finish !== undefined && last.info.finish !== "tool-calls" && last.info.finish !== "unknown"
}

/** The result of a finished turn: its last assistant message and that message's text. */
const turnResult = (sessionID: string, steps: number, messages: ReadonlyArray<MessageWithParts>): TurnResult | undefined => {
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant") return undefined
  const text = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
  return { sessionID, steps, assistant: last.info, text }
}

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

      /** Stores a user message (and its text part) and tells the bus. */
      const userMessage = Effect.fnUntraced(function* (sessionID: string, text: string, metadata?: UserMessage["metadata"]) {
        const now = yield* Clock.currentTimeMillis
        const message: UserMessage = { id: yield* ids.next("msg"), sessionID, role: "user", time: { created: now }, ...(metadata ? { metadata } : {}) }
        const part: Part = { id: yield* ids.next("prt"), sessionID, messageID: message.id, type: "text", text }
        return { message, part }
      })

      const announce = Effect.fnUntraced(function* (message: UserMessage, parts: ReadonlyArray<Part>) {
        yield* bus.publish({ type: "message.updated", message })
        for (const part of parts) yield* bus.publish({ type: "part.updated", part })
      })

      /**
       * T6: after a step, a loop in the turn's calls is a `doom_loop` question. Allowed, the turn
       * goes on; rejected (the non-interactive policy), the turn ends with the reason stored.
       */
      const guardLoop = Effect.fnUntraced(function* (sessionID: string, steps: number, guard: DoomLoopGuard, messages: ReadonlyArray<MessageWithParts>) {
        const found = guard.check(messages)
        if (!found) return undefined
        const asked = yield* Effect.result(
          permission.ask({ sessionID, permission: "doom_loop", patterns: found.tools, always: found.tools, title: found.message })
        )
        if (asked._tag === "Success") {
          guard.allow()
          return undefined
        }
        const last = messages.findLast((m) => m.info.role === "assistant")
        if (last?.info.role !== "assistant") return undefined
        const error = { reason: "doom_loop", message: `Stopped a doom loop: ${found.message}.` }
        const stopped: AssistantMessage = { ...last.info, error }
        yield* store.putMessage(stopped)
        yield* bus.publish({ type: "message.updated", message: stopped })
        yield* bus.publish({ type: "session.error", sessionID, error })
        return turnResult(
          sessionID,
          steps,
          messages.map((m) => (m === last ? { info: stopped, parts: m.parts } : m))
        )
      })

      /**
       * T7–T11: compacts the session (the turn's request stays pinned), then writes the message the
       * loop goes on with, flagged so views hide it: a synthetic continue once the turn has made a
       * step (a replayed request makes a model start over and re-run its tool calls), else a replay
       * of the request (its attachments as notes).
       */
      const compactAndContinue = Effect.fnUntraced(function* (
        sessionID: string,
        model: ModelRef,
        reason: "overflow" | "provider",
        tokens: number,
        window: ReadonlyArray<MessageWithParts>,
        turnStart: MessageWithParts,
        progressed: boolean
      ) {
        yield* compaction.compact({ sessionID, model, reason, tokens, turn: turnStart.info.id })
        // Once an earlier compaction summarised the turn's own request, the window starts later:
        // continue from that request, not from an older pinned one.
        const before = window.some((m) => m.info.id === turnStart.info.id) ? window : [turnStart, ...window.filter((m) => m.info.id > turnStart.info.id)]
        const next = continuation(before, { progressed })
        const { message, part } = yield* userMessage(sessionID, next.text, { compaction_continue: true, continuation: next.kind })
        const synthetic: Part = { ...part, synthetic: true }
        yield* store.putMessage(message)
        yield* store.putPart(synthetic)
        yield* announce(message, [synthetic])
        return message.id
      })

      /** The one way the loop compacts: compacted and continued (the message it wrote), or nothing to summarise (undefined). */
      const compactForTurn = (...args: Parameters<typeof compactAndContinue>) =>
        compactAndContinue(...args).pipe(
          // Noted on the span, not logged: a log line would land in the answer on stdout.
          Effect.catchIf(
            (e): e is CompactionError => e._tag === "CompactionError" && e.reason === "nothing-to-summarise",
            (e) => Effect.as(Effect.annotateCurrentSpan("compaction.skipped", e.message), undefined)
          )
        )

      /**
       * T5: user messages that appeared since the last step (queued by another caller), added to
       * `fresh`; how many of them were queued. Reported once; the model sees them after everything
       * else this step, whatever their ids say.
       */
      const freshUsers = (messages: ReadonlyArray<MessageWithParts>, known: Set<string>, fresh: Set<string>) => {
        let queued = 0
        for (const m of messages) {
          if (m.info.role !== "user" || known.has(m.info.id)) continue
          known.add(m.info.id)
          fresh.add(m.info.id)
          if (userFlag(m.info, "queued")) queued++
        }
        return queued
      }

      /**
       * The step loop of a turn, one element per step (T1): its outcome, a compaction after it, and
       * the turn's end with its result. Each element is decided from the session as stored, kept in
       * memory across steps (`Transcript`: read whole at the start and after a compaction).
       */
      const steps = (
        session: Session,
        turnStart: MessageWithParts,
        model: ModelRef,
        run: SessionRun,
        known: Set<string>
      ): Stream.Stream<TurnStep, PromptError> =>
        Stream.unwrap(
          Effect.gen(function* () {
            const user = turnStart.info
            // the session's agent decides the tools, the prompt header and the step limit (T19)
            const assigned = agents.of(session.id)
            const agent = assigned?.agent ?? agents.primary
            // `task` only while there are sub-agents to run and the session is not at the deepest level
            const nested = (assigned?.depth ?? 0) >= MAX_AGENT_DEPTH || !agents.catalog.agents.some((a) => a.mode !== "primary")
            // the dynamic tools (MCP servers: started on the first turn that needs them) are asked for again before each step
            yield* registry.refresh(session.id)
            // a sub-agent is offered no tool an agent above it lacks: it never has more rights than its parent
            const above: Array<AgentInfo> = []
            for (let id = assigned?.parent, hops = 0; id !== undefined && hops <= MAX_AGENT_DEPTH + 1; id = agents.of(id)?.parent, hops++) {
              above.push(agents.of(id)?.agent ?? agents.primary)
            }
            const offeredNow = () =>
              registry
                .forModel(model.modelID)
                .filter((t) => [agent, ...above].every((a) => offersTool(a, t.id, permission.mode)) && !(t.id === "task" && nested))
                .map((t) => ({ id: t.id, description: t.description, parameters: t.parameters }))
            let tools = offeredNow()
            const maxSteps = agent.steps ?? settings.maxSteps
            // Built once per turn: git status costs a process per step, and a system prompt that
            // changes between steps defeats the provider's prompt cache.
            const extra = [
              // `instructions` from config, read when the runtime started
              ...(promptSettings.instructions ?? []).map((i) => `Instructions from ${i.file}:\n${i.text}`),
              ...(skills ? [skills] : []),
              ...(agent.note !== undefined ? [agent.note] : [])
            ]
            const system = yield* systemPrompt(
              cwd,
              new Date(yield* Clock.currentTimeMillis),
              agent.header ?? headerFor(model, promptSettings),
              extra,
              admitOutside(permission, session.id)
            )
            const guard = makeDoomLoopGuard(doomLoopLimits)
            // What every request carries besides its messages, for the stalled error's figures.
            const fixedCost = estimateText(system.join("\n")) + estimateText(JSON.stringify(tools))
            const stalled = (tokens: number) =>
              Effect.fail(
                stallError({ sessionID: session.id, model: `${model.providerID}/${model.modelID}`, ...compaction.window(model), tokens, fixed: fixedCost })
              )
            // `known`: the user messages there before the session was claimed, then those the model was
            // shown or the loop wrote; any other is a message queued for this run.
            known.add(user.id)
            const state: LoopState = { steps: 0, stall: noStall, worked: false, queuedSeen: 0 }
            const transcript = makeTranscript(store, claims, session.id)
            // What a read that only looks (the step's result, an overflow check) reports as seen: nothing new.
            const looked = () => state.queuedSeen
            const again = [[], Option.some(state)] as const
            const finished = (result: TurnResult, last?: TurnStep) =>
              [[...(last ? [last] : []), { _tag: "Finished", result } as const], Option.none<LoopState>()] as const
            const next = (st: LoopState) =>
              Effect.gen(function* (): Effect.fn.Return<readonly [ReadonlyArray<TurnStep>, Option.Option<LoopState>], PromptError> {
                // From the last summary on, and of that only what changed since the last step: a step
                // costs the same at step 300 as at step 10.
                const fresh = new Set<string>()
                const messages = yield* transcript.read((read) => (st.queuedSeen += freshUsers(read, known, fresh)))
                if (fresh.size === 0 && st.steps > 0 && turnDone(messages)) {
                  // Released only if nothing was queued since this read; else the turn goes on to answer it.
                  if (yield* claims.release(run, st.queuedSeen)) return finished(turnResult(session.id, st.steps, messages)!)
                  // Queued but not yet visible to this read: give the writer a moment.
                  yield* Effect.sleep(RELEASE_RETRY_MS)
                  return again
                }
                const stopped = st.steps > 0 ? yield* guardLoop(session.id, st.steps, guard, messages) : undefined
                if (stopped) return finished(stopped)
                st.steps++
                const steps = st.steps
                const final = maxSteps !== undefined && steps >= maxSteps
                const now = yield* Clock.currentTimeMillis
                const assistant: AssistantMessage = {
                  id: yield* ids.next("msg"),
                  sessionID: session.id,
                  role: "assistant",
                  parentID: user.id,
                  model,
                  time: { created: now },
                  usage: emptyUsage,
                  cost: 0
                }
                yield* store.putMessage(assistant)
                transcript.from(assistant.id)
                yield* bus.publish({ type: "message.updated", message: assistant })
                // The model sees the summary, pinned messages and tail instead of the compacted head;
                // messages queued since the last step come last.
                const shown = modelView(messages)
                const view = fresh.size === 0 ? shown : [...shown.filter((m) => !fresh.has(m.info.id)), ...shown.filter((m) => fresh.has(m.info.id))]
                if (steps > 1) {
                  yield* registry.refresh(session.id)
                  tools = offeredNow()
                }
                const stepped = yield* processor
                  .step({
                    assistant,
                    cwd,
                    request: {
                      model,
                      system: final ? [...system, MAX_STEPS_NOTE] : system,
                      messages: view,
                      tools: final ? [] : tools,
                      ...(final ? { toolChoice: "none" as const } : {}),
                      // the answer may fill what the window keeps free for it, not more (a 4k model whose
                      // `output` is 8k would otherwise be asked for more than its whole window)
                      maxOutputTokens: compaction.window(model).maxOutput,
                      ...(yield* chatParamsFor(sessionHooks, { sessionID: session.id, providerID: model.providerID, modelID: model.modelID })),
                      sessionID: session.id
                    }
                  })
                  .pipe(
                    // the step (model call and its tools) is internal: its model call is the `chat` span
                    Effect.tap((o) =>
                      Effect.annotateCurrentSpan({
                        "reins.cache.hit_rate": cacheHitRate(o.usage) ?? 0,
                        "reins.finish_reason": o.finish,
                        "reins.cost": o.cost,
                        "reins.tool_calls": o.toolCalls
                      })
                    ),
                    Effect.withSpan("session.step", { attributes: { "session.id": session.id, "session.step": steps } }),
                    Effect.result
                  )
                if (stepped._tag === "Failure") {
                  const error = stepped.failure
                  // A provider's "context too long" is compacted, never retried as is (T7, T23).
                  if (error._tag === "ProviderError" && error.reason === "overflow" && compaction.settings.auto) {
                    st.stall = stepOverflowed(st.stall)
                    if (isStalled(st.stall)) return yield* stalled(fixedCost + estimateMessages(view))
                    const wrote = yield* compactForTurn(session.id, model, "provider", estimateMessages(view), messages, turnStart, st.worked)
                    transcript.reset()
                    // With nothing to summarise (one huge first message) the provider's own error says it best.
                    if (wrote === undefined) return yield* Effect.fail(error)
                    known.add(wrote)
                    st.stall = compacted(st.stall)
                    return [[{ _tag: "Compacted", step: steps, reason: "provider" }], Option.some(st)] as const
                  }
                  return yield* Effect.fail(error)
                }
                const outcome: TurnStep = { _tag: "Stepped", step: steps, outcome: stepped.success }
                if (final) return finished(turnResult(session.id, steps, yield* transcript.read(looked))!, outcome)
                st.worked = true
                if (!compaction.overflows(stepped.success.usage, model)) st.stall = stepFitted(st.stall)
                else {
                  st.stall = stepOverflowed(st.stall)
                  const after = yield* transcript.read(looked)
                  // A finished turn leaves compaction to the next one: nothing is waiting to continue.
                  if (!turnDone(after)) {
                    const tokens = tokenCount(stepped.success.usage)
                    if (isStalled(st.stall)) return yield* stalled(tokens)
                    // All of it is the verbatim tail already: go on; the stall count stops a context that cannot shrink.
                    const wrote = yield* compactForTurn(session.id, model, "overflow", tokens, after, turnStart, st.worked)
                    transcript.reset()
                    if (wrote !== undefined) known.add(wrote)
                    st.stall = wrote !== undefined ? compacted(st.stall) : nothingCompacted(st.stall)
                    if (wrote !== undefined) return [[outcome, { _tag: "Compacted", step: steps, reason: "overflow" }], Option.some(st)] as const
                  }
                }
                return [[outcome], Option.some(st)] as const
              })
            return Stream.paginate(state, next)
          })
        )

      const run = (session: Session, turnStart: MessageWithParts, model: ModelRef, claim: SessionRun, known: Set<string>) => {
        const agentName = (agents.of(session.id)?.agent ?? agents.primary).name
        // the turn's usage summed over its steps, for its `invoke_agent` span (T10), with what its
        // sub-agents spent (T19) counted in and also shown apart
        let usage = emptyUsage
        let cost = 0
        let delegated: Spending = { usage: emptyUsage, cost: 0 }
        return steps(session, turnStart, model, claim, known).pipe(
          Stream.tap((step) =>
            Effect.sync(() => {
              if (step._tag !== "Stepped") return
              usage = addUsage(usage, step.outcome.usage)
              cost += step.outcome.cost
              const spent = step.outcome.delegated
              if (spent !== undefined) delegated = { usage: addUsage(delegated.usage, spent.usage), cost: delegated.cost + spent.cost }
            })
          ),
          Stream.runLast,
          Effect.flatMap((last) =>
            Option.isSome(last) && last.value._tag === "Finished" ? Effect.succeed(last.value.result) : Effect.die("A turn's steps ended without its result")
          ),
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
