import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Bus, Ids, WorkDir, emptyUsage, isOpenTool, type AssistantMessage, type ModelRef, type Part, type Session, type UserMessage } from "@reins/domain"
import { Compaction, continuation, modelView, tokenCount, estimateMessages, type CompactionError, type CompactResult } from "@reins/compaction"
import { Permission } from "@reins/permission"
import type { ProviderError } from "@reins/provider"
import { SessionStore, type MessageWithParts, type StoreError } from "@reins/storage"
import { ToolRegistry } from "@reins/tool"
import { DoomLoopSettings, makeDoomLoopGuard, type DoomLoopGuard } from "./DoomLoop.ts"
import { makeProcessor } from "./Processor.ts"
import { systemPrompt } from "./Prompt.ts"

/** Loop settings: the step limit (T1) is unlimited unless set. */
export const SessionSettings = Context.Reference<{ readonly maxSteps?: number }>("reins/session/Settings", {
  defaultValue: () => ({})
})

export class SessionBusyError extends Schema.TaggedError<SessionBusyError>()("SessionBusyError", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

export interface PromptInput {
  readonly sessionID: string
  readonly text: string
  readonly model: ModelRef
}

export interface TurnResult {
  readonly sessionID: string
  readonly steps: number
  /** The last assistant message of the turn. */
  readonly assistant: AssistantMessage
  /** The text of that message. */
  readonly text: string
}

const MAX_STEPS_NOTE =
  "You have reached the maximum number of steps for this task. Do not call any tools. Answer now: summarise what you did and what remains."

/**
 * T1: the turn ends only when the newest assistant message is newer than the last user message,
 * finished for a reason other than tool calls, and made no tool calls.
 */
export const turnDone = (messages: ReadonlyArray<MessageWithParts>) => {
  const lastUser = messages.findLast((m) => m.info.role === "user")
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (!last || last.info.role !== "assistant") return false
  if (lastUser && last.info.id < lastUser.info.id) return false
  if (last.info.error) return true
  if (last.parts.some((p) => p.type === "tool")) return false
  return last.info.finish !== undefined && last.info.finish !== "tool-calls" && last.info.finish !== "unknown"
}

/** The result of a finished turn: its last assistant message and that message's text. */
const turnResult = (sessionID: string, steps: number, messages: ReadonlyArray<MessageWithParts>): TurnResult | undefined => {
  const last = messages.findLast((m) => m.info.role === "assistant")
  if (!last || last.info.role !== "assistant") return undefined
  const text = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
  return { sessionID, steps, assistant: last.info, text }
}

/** Creates sessions and runs turns of the agent loop on them. */
export class SessionService extends Context.Service<SessionService, {
  create(input: { readonly directory: string; readonly title?: string }): Effect.Effect<Session, StoreError>
  prompt(input: PromptInput): Effect.Effect<TurnResult, ProviderError | StoreError | SessionBusyError | CompactionError>
  /** Closes tool parts left open by a process that died; returns how many were fixed. */
  repair(sessionID: string): Effect.Effect<number, StoreError>
  /** Compacts an idle session on demand (`reins compact`): reason "manual", no continuation message. */
  compact(input: { readonly sessionID: string; readonly model: ModelRef }): Effect.Effect<CompactResult, ProviderError | StoreError | SessionBusyError | CompactionError>
}>()("reins/session/SessionService") {
  static readonly layer = Layer.effect(
    SessionService,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const ids = yield* Ids
      const registry = yield* ToolRegistry
      const processor = yield* makeProcessor
      const settings = yield* SessionSettings
      const cwd = yield* WorkDir
      const permission = yield* Permission
      const compaction = yield* Compaction
      const doomLoopLimits = yield* DoomLoopSettings
      const busy = new Set<string>()

      const create = Effect.fn("SessionService.create")(function* (input: { readonly directory: string; readonly title?: string }) {
        const now = yield* Clock.currentTimeMillis
        const session: Session = { id: yield* ids.next("ses"), title: input.title ?? "New session", directory: input.directory, time: { created: now, updated: now } }
        yield* store.createSession(session)
        yield* bus.publish({ type: "session.created", session })
        return session
      })

      const repair = Effect.fn("SessionService.repair")(function* (sessionID: string) {
        const messages = yield* store.messages(sessionID)
        const now = yield* Clock.currentTimeMillis
        const fixed: Array<Part> = []
        for (const m of messages) {
          for (const part of m.parts) {
            if (!isOpenTool(part)) continue
            const start = part.state.status === "running" ? part.state.time.start : now
            fixed.push({ ...part, state: { status: "error", input: part.state.input, error: "The tool call was interrupted before it finished.", interrupted: true, time: { start, end: now } } })
          }
        }
        if (fixed.length > 0) yield* store.putParts(fixed)
        return fixed.length
      })

      /**
       * T6: after a step, a loop in the turn's calls is a `doom_loop` question. Allowed, the turn
       * goes on; rejected (the non-interactive policy), the turn ends with the reason stored.
       */
      const guardLoop = Effect.fnUntraced(function* (sessionID: string, steps: number, guard: DoomLoopGuard, messages: ReadonlyArray<MessageWithParts>) {
        const found = guard.check(messages)
        if (!found) return undefined
        const asked = yield* Effect.result(permission.ask({ sessionID, permission: "doom_loop", patterns: found.tools, always: found.tools, title: found.message }))
        if (asked._tag === "Success") {
          guard.allow()
          return undefined
        }
        const last = messages.findLast((m) => m.info.role === "assistant")
        if (!last || last.info.role !== "assistant") return undefined
        const error = { reason: "doom_loop", message: `Stopped a doom loop: ${found.message}.` }
        const stopped: AssistantMessage = { ...last.info, error }
        yield* store.putMessage(stopped)
        yield* bus.publish({ type: "message.updated", message: stopped })
        yield* bus.publish({ type: "session.error", sessionID, error })
        return turnResult(sessionID, steps, yield* store.messages(sessionID))
      })

      /**
       * T7–T11: compacts the session, then writes the message the loop goes on with (a replay of
       * the user's request, its attachments as notes, or a synthetic continue), flagged so views hide it.
       */
      const compactAndContinue = Effect.fnUntraced(function* (sessionID: string, model: ModelRef, reason: "overflow" | "provider", tokens: number) {
        const before = yield* store.messages(sessionID)
        yield* compaction.compact({ sessionID, model, reason, tokens })
        const next = continuation(before)
        const now = yield* Clock.currentTimeMillis
        const message: UserMessage = { id: yield* ids.next("msg"), sessionID, role: "user", time: { created: now }, metadata: { compaction_continue: true, continuation: next.kind } }
        yield* store.putMessage(message)
        yield* bus.publish({ type: "message.updated", message })
        const part: Part = { id: yield* ids.next("prt"), sessionID, messageID: message.id, type: "text", text: next.text, synthetic: true }
        yield* store.putPart(part)
        yield* bus.publish({ type: "part.updated", part })
      })

      const loop = Effect.fnUntraced(function* (session: Session, user: UserMessage, model: ModelRef) {
        const tools = registry.forModel(model.modelID).map((t) => ({ id: t.id, description: t.description, parameters: t.parameters }))
        // Built once per turn: git status costs a process per step, and a system prompt that
        // changes between steps defeats the provider's prompt cache.
        const system = systemPrompt(cwd, new Date(yield* Clock.currentTimeMillis))
        const guard = makeDoomLoopGuard(doomLoopLimits)
        let steps = 0
        // The step after a compaction must not overflow again: that would loop forever.
        let compactedAt = -1
        while (true) {
          const messages = yield* store.messages(session.id)
          const done = steps > 0 && turnDone(messages) ? turnResult(session.id, steps, messages) : undefined
          if (done) return done
          const stopped = steps > 0 ? yield* guardLoop(session.id, steps, guard, messages) : undefined
          if (stopped) return stopped
          steps++
          const final = settings.maxSteps !== undefined && steps >= settings.maxSteps
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
          yield* bus.publish({ type: "message.updated", message: assistant })
          // The model sees the summary, pinned messages and tail instead of the compacted head.
          const view = modelView(messages)
          const stepped = yield* processor
            .step({
              assistant,
              cwd,
              request: { model, system: final ? [...system, MAX_STEPS_NOTE] : system, messages: view, tools: final ? [] : tools, ...(final ? { toolChoice: "none" as const } : {}) }
            })
            .pipe(
              Effect.tap((o) =>
                Effect.annotateCurrentSpan({
                  "gen_ai.usage.input_tokens": o.usage.input + o.usage.cacheRead + o.usage.cacheWrite,
                  "gen_ai.usage.output_tokens": o.usage.output,
                  "gen_ai.usage.cache_read.input_tokens": o.usage.cacheRead,
                  "gen_ai.usage.cache_creation.input_tokens": o.usage.cacheWrite,
                  "gen_ai.response.finish_reasons": [o.finish],
                  "reins.cost": o.cost,
                  "reins.tool_calls": o.toolCalls
                })
              ),
              Effect.withSpan("session.step", {
                attributes: {
                  "gen_ai.operation.name": "chat",
                  "gen_ai.provider.name": model.providerID,
                  "gen_ai.request.model": model.modelID,
                  "session.id": session.id,
                  "session.step": steps
                }
              }),
              Effect.result
            )
          if (stepped._tag === "Failure") {
            const error = stepped.failure
            // A provider's "context too long" is compacted, never retried as is (T7, T23).
            if (error._tag === "ProviderError" && error.reason === "overflow" && compaction.settings.auto && compactedAt !== steps - 1) {
              // With nothing to summarise (one huge first message) the provider's own error says it best.
              yield* compactAndContinue(session.id, model, "provider", estimateMessages(view)).pipe(
                Effect.catchIf(
                  (e): e is CompactionError => e._tag === "CompactionError" && e.reason === "nothing-to-summarise",
                  () => Effect.fail(error)
                )
              )
              compactedAt = steps
              continue
            }
            return yield* Effect.fail(error)
          }
          if (final) return turnResult(session.id, steps, yield* store.messages(session.id))!
          if (compaction.overflows(stepped.success.usage, model) && compactedAt !== steps - 1) {
            const after = yield* store.messages(session.id)
            // A finished turn leaves compaction to the next one: nothing is waiting to continue.
            if (!turnDone(after)) {
              yield* compactAndContinue(session.id, model, "overflow", tokenCount(stepped.success.usage))
              compactedAt = steps
            }
          }
        }
      })

      const prompt = Effect.fn("SessionService.prompt")(function* (input: PromptInput) {
        if (busy.has(input.sessionID)) {
          return yield* new SessionBusyError({ sessionID: input.sessionID, message: `Session ${input.sessionID} is already running a turn in this process.` })
        }
        busy.add(input.sessionID)
        yield* Effect.annotateCurrentSpan({ "session.id": input.sessionID })
        return yield* Effect.gen(function* () {
          yield* repair(input.sessionID)
          let session = yield* store.getSession(input.sessionID)
          const now = yield* Clock.currentTimeMillis
          const user: UserMessage = { id: yield* ids.next("msg"), sessionID: session.id, role: "user", time: { created: now } }
          yield* store.putMessage(user)
          yield* bus.publish({ type: "message.updated", message: user })
          const part: Part = { id: yield* ids.next("prt"), sessionID: session.id, messageID: user.id, type: "text", text: input.text }
          yield* store.putPart(part)
          yield* bus.publish({ type: "part.updated", part })
          const isFirst = session.title === "New session"
          session = { ...session, title: isFirst ? input.text.replace(/\s+/g, " ").slice(0, 60) : session.title, time: { ...session.time, updated: now } }
          yield* store.updateSession(session)
          yield* bus.publish({ type: "session.updated", session })
          yield* bus.publish({ type: "session.status", sessionID: session.id, status: "busy" })
          return yield* loop(session, user, input.model)
        }).pipe(
          Effect.withSpan("session.turn", { attributes: { "session.id": input.sessionID } }),
          Effect.ensuring(
            Effect.gen(function* () {
              busy.delete(input.sessionID)
              const now = yield* Clock.currentTimeMillis
              const current = yield* store.getSession(input.sessionID)
              yield* store.updateSession({ ...current, time: { ...current.time, updated: now } })
              yield* bus.publish({ type: "session.status", sessionID: input.sessionID, status: "idle" })
            }).pipe(Effect.ignore)
          ),
          Effect.tapError((error) =>
            bus.publish({
              type: "session.error",
              sessionID: input.sessionID,
              error: { reason: error._tag === "ProviderError" ? error.reason : error._tag, message: error.message }
            })
          )
        )
      })

      const compact = Effect.fn("SessionService.compact")(function* (input: { readonly sessionID: string; readonly model: ModelRef }) {
        if (busy.has(input.sessionID)) {
          return yield* new SessionBusyError({ sessionID: input.sessionID, message: `Session ${input.sessionID} is running a turn; it compacts itself when its context fills up.` })
        }
        busy.add(input.sessionID)
        return yield* Effect.gen(function* () {
          yield* store.getSession(input.sessionID)
          const messages = yield* store.messages(input.sessionID)
          return yield* compaction.compact({ sessionID: input.sessionID, model: input.model, reason: "manual", tokens: estimateMessages(modelView(messages)) })
        }).pipe(Effect.ensuring(Effect.sync(() => busy.delete(input.sessionID))))
      })

      return SessionService.of({ create, prompt, repair, compact })
    })
  )
}
