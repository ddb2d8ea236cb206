import { Clock, Effect } from "effect"
import { emptyUsage, type AssistantMessage, type ModelRef, type Session, type TurnResult } from "@reins/domain"
import { stallError, tokenCount } from "@reins/compaction"
import type { Permission } from "@reins/permission"
import type { MessageWithParts, RunClaims, SessionRun } from "@reins/storage"
import { type BudgetStop, type Ledger, budgetMessage, overBudget, spend } from "./Budget.ts"
import { type DoomLoop, type DoomLoopLimits, makeDoomLoopGuard } from "./DoomLoop.ts"
import type { PromptError } from "./Errors.ts"
import { releasedByTurn } from "./Runs.ts"
import type { StepOutcome } from "./Processor.ts"
import { makeTranscript } from "./Transcript.ts"
import { decide, foldTurn, freshUsers, startTurn, turnResult, type Move, type StopReason, type TurnFact, type TurnState } from "./TurnDecision.ts"
import { compactForTurn, type MessageDeps } from "./TurnMessages.ts"
import { runStep, type StepDeps } from "./TurnStep.ts"
import type { TurnSetup } from "./TurnSetup.ts"

/** What the loop of a turn gives, in order: each step's outcome, a compaction after it, the end. */
export type TurnStep =
  | { readonly _tag: "Stepped"; readonly step: number; readonly outcome: StepOutcome }
  | { readonly _tag: "Compacted"; readonly step: number; readonly reason: "overflow" | "provider" }
  | { readonly _tag: "Finished"; readonly result: TurnResult }

/** The pause before a turn that could not release its session (a message was just queued) reads again. */
const RELEASE_RETRY_MS = 10

/** What the loop needs, resolved when the turn service is built. */
export interface LoopDeps extends StepDeps, MessageDeps {
  readonly claims: RunClaims["Service"]
  readonly permission: Permission["Service"]
  readonly doomLoopLimits: DoomLoopLimits
}

/** A turn to run: its session, its stored request, the model, the hold on the session, and the user messages it need not answer. */
export interface TurnInput {
  readonly session: Session
  readonly turnStart: MessageWithParts
  readonly model: ModelRef
  readonly run: SessionRun
  /** The user messages there before the session was claimed, then those the model was shown or the loop wrote; any other is a message queued for this run. */
  readonly known: Set<string>
  /** What the turn spends, when a cap is set. */
  readonly ledger?: Ledger | undefined
}

/**
 * T6: the turn may not go on with a loop in its calls: the reason is stored on its last message,
 * and that message is the turn's result.
 */
const stopForLoop = Effect.fnUntraced(function* (deps: LoopDeps, sessionID: string, steps: number, loop: DoomLoop, messages: ReadonlyArray<MessageWithParts>) {
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant") return yield* Effect.die("A doom loop was found in a turn without an assistant message")
  const error = { reason: "doom_loop", message: `Stopped a doom loop: ${loop.message}.` }
  const stopped: AssistantMessage = { ...last.info, error }
  yield* deps.store.putMessage(stopped)
  yield* deps.bus.publish({ type: "message.updated", message: stopped })
  yield* deps.bus.publish({ type: "session.error", sessionID, error })
  return turnResult(
    sessionID,
    steps,
    messages.map((m) => (m === last ? { info: stopped, parts: m.parts } : m))
  )!
})

/**
 * A cap reached: the turn's last message says what was spent (a message of its own when the turn
 * stops before its first step), and that message is the turn's result.
 */
const stopForBudget = Effect.fnUntraced(function* (
  deps: LoopDeps,
  input: TurnInput,
  steps: number,
  stop: BudgetStop,
  messages: ReadonlyArray<MessageWithParts>
) {
  const error = { reason: "budget", message: budgetMessage(stop) }
  // the turn's last answer, never a summary (a compaction's), and only if no user message (a continue) came after it
  const last = messages.findLast((m) => m.info.role === "assistant" && m.info.summary === undefined)
  const lastUser = messages.findLast((m) => m.info.role === "user")
  const own =
    last?.info.role === "assistant" && last.info.id > input.turnStart.info.id && (lastUser === undefined || last.info.id > lastUser.info.id) ? last : undefined
  const now = yield* Clock.currentTimeMillis
  const stopped: AssistantMessage =
    own?.info.role === "assistant"
      ? { ...own.info, error }
      : {
          id: yield* deps.ids.next("msg"),
          sessionID: input.session.id,
          role: "assistant",
          parentID: input.turnStart.info.id,
          model: input.model,
          time: { created: now, completed: now },
          usage: emptyUsage,
          cost: 0,
          error
        }
  yield* deps.store.putMessage(stopped)
  yield* deps.bus.publish({ type: "message.updated", message: stopped })
  yield* deps.bus.publish({ type: "session.error", sessionID: input.session.id, error })
  const window = own !== undefined ? messages.map((m) => (m === own ? { info: stopped, parts: m.parts } : m)) : [...messages, { info: stopped, parts: [] }]
  return turnResult(input.session.id, steps, window)!
})

/**
 * The loop of a turn (T1): read the window, decide the next move (`decide`, pure), do it, fold
 * what happened into the state (`foldTurn`), until the turn finishes or stops. Each step's outcome,
 * each compaction and the end are given to `emit` as they happen. The window is kept in memory
 * across steps (`Transcript`: read whole at the start and after a compaction, then only what
 * changed since the last step), so a step costs the same at step 300 as at step 10.
 */
export const runTurnLoop = Effect.fnUntraced(function* (
  deps: LoopDeps,
  setup: TurnSetup,
  input: TurnInput,
  emit: (step: TurnStep) => Effect.Effect<void>
): Effect.fn.Return<TurnResult, PromptError> {
  const { session, turnStart, model, run, known, ledger } = input
  known.add(turnStart.info.id)
  const guard = makeDoomLoopGuard(deps.doomLoopLimits)
  const transcript = makeTranscript(deps.store, deps.claims, session.id)
  let state: TurnState = startTurn({ maxSteps: setup.maxSteps, autoCompact: deps.compaction.settings.auto })
  const fold = (fact: TurnFact) => {
    state = foldTurn(state, fact)
  }
  // every read takes in the user messages queued since the last one (T5)
  const read = transcript.read((messages) => {
    fold({ _tag: "Read", ...freshUsers(messages, known) })
    return state.queuedSeen
  })
  const finished = (result: TurnResult) => Effect.as(emit({ _tag: "Finished", result }), result)

  /** The move for the window; the doom-loop guard is asked only before a step that is not the first (it keeps what it has judged). */
  const nextMove = (messages: ReadonlyArray<MessageWithParts>): Move => {
    const budget = ledger === undefined ? undefined : overBudget(ledger)
    const move = decide(state, { messages, budget })
    if (move._tag !== "Step" || state.steps === 0 || state.last._tag === "LoopAllowed") return move
    const loop = guard.check(messages)
    return loop === undefined ? move : decide(state, { messages, loop, budget })
  }

  const stop = (why: StopReason, messages: ReadonlyArray<MessageWithParts>): Effect.Effect<TurnResult, PromptError> => {
    switch (why._tag) {
      case "MaxSteps":
        return finished(turnResult(session.id, state.steps, messages)!)
      case "DoomLoop":
        return Effect.flatMap(stopForLoop(deps, session.id, state.steps, why.loop, messages), finished)
      case "Stalled":
        return Effect.fail(
          stallError({
            sessionID: session.id,
            model: `${model.providerID}/${model.modelID}`,
            ...deps.compaction.window(model),
            tokens: why.tokens,
            fixed: setup.fixedCost
          })
        )
      case "Failed":
        return Effect.fail(why.error)
      case "Budget":
        return Effect.flatMap(stopForBudget(deps, input, state.steps, why.stop, messages), finished)
    }
  }

  let messages = yield* read
  for (;;) {
    const move = nextMove(messages)
    switch (move._tag) {
      case "Step": {
        const step = state.steps + 1
        const ran = yield* runStep(deps, {
          session,
          parentID: turnStart.info.id,
          model,
          setup,
          transcript,
          messages,
          fresh: state.fresh,
          step,
          final: move.final,
          // counted as soon as the answer is complete: a sub-agent its tools start sees it
          ...(ledger !== undefined ? { onCost: (cost: number) => spend(ledger, cost) } : {})
        })
        if (ran.result._tag === "Failure") {
          fold({ _tag: "StepFailed", error: ran.result.failure, tokens: ran.tokens, request: setup.fixedCost + ran.tokens })
          break
        }
        const outcome = ran.result.success
        yield* emit({ _tag: "Stepped", step, outcome })
        const overflowed = !move.final && deps.compaction.overflows(outcome.usage, model)
        fold({ _tag: "Stepped", final: move.final, overflowed, tokens: tokenCount(outcome.usage) })
        messages = yield* read
        break
      }
      case "Compact": {
        const wrote = yield* compactForTurn(deps, {
          sessionID: session.id,
          model,
          reason: move.reason,
          tokens: move.tokens,
          window: messages,
          turnStart,
          progressed: move.progressed
        })
        transcript.reset()
        if (wrote !== undefined) {
          known.add(wrote.wrote)
          if (ledger !== undefined) spend(ledger, wrote.cost)
          yield* emit({ _tag: "Compacted", step: state.steps, reason: move.reason })
        }
        fold({ _tag: "Compacted", wrote: wrote !== undefined })
        messages = yield* read
        break
      }
      case "AskLoop": {
        const tools = move.loop.tools
        const asked = yield* Effect.result(
          deps.permission.ask({ sessionID: session.id, permission: "doom_loop", patterns: tools, always: tools, title: move.loop.message })
        )
        if (asked._tag === "Success") guard.allow()
        fold(asked._tag === "Success" ? { _tag: "LoopAllowed" } : { _tag: "LoopRejected", loop: move.loop })
        break
      }
      case "Finish": {
        // Released only if nothing was queued since the last read; else the turn goes on to answer it.
        // said before the release: a heartbeat that finds the lease gone from then on knows why
        releasedByTurn(run, true)
        if (yield* deps.claims.release(run, state.queuedSeen).pipe(Effect.onError(() => Effect.sync(() => releasedByTurn(run, false)))))
          return yield* finished(turnResult(session.id, state.steps, messages)!)
        releasedByTurn(run, false)
        // Queued but not yet visible to the last read: give the writer a moment.
        yield* Effect.sleep(RELEASE_RETRY_MS)
        fold({ _tag: "ReleaseRefused" })
        messages = yield* read
        break
      }
      case "Stop":
        return yield* stop(move.why, messages)
    }
  }
})
