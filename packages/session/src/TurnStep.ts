import { Clock, type Context, Effect, type Result } from "effect"
import { type Bus, type Ids, cacheHitRate, emptyUsage, type AssistantMessage, type ModelRef, type Session } from "@reins/domain"
import { estimateMessages, modelView, type Compaction } from "@reins/compaction"
import type { MessageWithParts, SessionStore } from "@reins/storage"
import { chatParamsFor, type SessionHooks, type ToolRegistry } from "@reins/tool"
import type { PromptError } from "./Errors.ts"
import type { SessionProcessor, StepOutcome } from "./Processor.ts"
import type { Transcript } from "./Transcript.ts"
import type { TurnSetup } from "./TurnSetup.ts"

const MAX_STEPS_NOTE = "You have reached the maximum number of steps for this task. Do not call any tools. Answer now: summarise what you did and what remains."

/** What a step needs, resolved when the turn service is built. */
export interface StepDeps {
  readonly store: SessionStore["Service"]
  readonly bus: Bus["Service"]
  readonly ids: Ids["Service"]
  readonly registry: ToolRegistry["Service"]
  readonly processor: SessionProcessor["Service"]
  readonly compaction: Compaction["Service"]
  readonly sessionHooks: Context.Service.Shape<typeof SessionHooks>
  readonly cwd: string
}

/** One step of a turn. */
export interface StepInput {
  readonly session: Session
  /** The turn's request: the step's assistant message answers it. */
  readonly parentID: string
  readonly model: ModelRef
  readonly setup: TurnSetup
  readonly transcript: Transcript
  /** The window as read before the step. */
  readonly messages: ReadonlyArray<MessageWithParts>
  /** User messages that appeared since the last step: the model sees them after everything else. */
  readonly fresh: ReadonlySet<string>
  /** The step's number in the turn, from 1. */
  readonly step: number
  /** The last step the limit allows: no tools, and a note asking for an answer. */
  readonly final: boolean
  /** Told the model call's cost once its answer is complete (the turn's budget counts it before its tools end). */
  readonly onCost?: ((cost: number) => void) | undefined
}

/** What a step gave: its outcome or its error, and the estimate of the messages it sent (for an overflow). */
export interface StepRan {
  readonly result: Result.Result<StepOutcome, PromptError>
  readonly tokens: number
}

/**
 * Runs one step (T2–T4): stores its assistant message, sends the window as the model sees it (the
 * summary, pinned messages and tail instead of the compacted head; messages queued since the last
 * step last), and lets the processor stream the answer and run its tools.
 */
export const runStep = Effect.fnUntraced(function* (deps: StepDeps, input: StepInput) {
  const { session, model, setup, step, final } = input
  const assistant: AssistantMessage = {
    id: yield* deps.ids.next("msg"),
    sessionID: session.id,
    role: "assistant",
    parentID: input.parentID,
    model,
    time: { created: yield* Clock.currentTimeMillis },
    usage: emptyUsage,
    cost: 0
  }
  yield* deps.store.putMessage(assistant)
  input.transcript.from(assistant.id)
  yield* deps.bus.publish({ type: "message.updated", message: assistant })
  const shown = modelView(input.messages)
  const fresh = input.fresh
  const view = fresh.size === 0 ? shown : [...shown.filter((m) => !fresh.has(m.info.id)), ...shown.filter((m) => fresh.has(m.info.id))]
  if (step > 1) yield* deps.registry.refresh(session.id)
  const tools = step > 1 ? setup.offered() : setup.tools
  const result = yield* deps.processor
    .step({
      assistant,
      cwd: deps.cwd,
      onCost: input.onCost,
      request: {
        model,
        system: final ? [...setup.system, MAX_STEPS_NOTE] : setup.system,
        messages: view,
        tools: final ? [] : tools,
        ...(final ? { toolChoice: "none" as const } : {}),
        // the answer may fill what the window keeps free for it, not more (a 4k model whose
        // `output` is 8k would otherwise be asked for more than its whole window)
        maxOutputTokens: deps.compaction.window(model).maxOutput,
        ...(yield* chatParamsFor(deps.sessionHooks, { sessionID: session.id, providerID: model.providerID, modelID: model.modelID })),
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
      Effect.withSpan("session.step", { attributes: { "session.id": session.id, "session.step": step } }),
      Effect.result
    )
  // estimated only when needed: a provider's overflow is compacted by that estimate
  return { result, tokens: result._tag === "Failure" ? estimateMessages(view) : 0 } satisfies StepRan
})
