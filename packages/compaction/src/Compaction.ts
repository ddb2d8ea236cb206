import { Clock, Context, Effect, Layer, Stream } from "effect"
import { Bus, Ids, emptyUsage, type AssistantMessage, type ModelRef, type Part, type Usage } from "@reins/domain"
import { Provider, type ProviderError } from "@reins/provider"
import { SessionStore, type MessageWithParts, type StoreError } from "@reins/storage"
import { CompactionError } from "./CompactionError.ts"
import { estimateMessages } from "./Estimate.ts"
import { inputLimit, isOverflow, maxOutputTokens, reserveProblem, usableTokens } from "./Overflow.ts"
import { pinnedIds } from "./Pinned.ts"
import { applyParts, dropOldestOutputs, planPrune, visibleOutputs } from "./Prune.ts"
import { CompactionSettings } from "./Settings.ts"
import { selectTail, tailBudget } from "./Tail.ts"
import { summaryRequest } from "./Template.ts"
import { isSummaryMessage, latestSummary, modelView, withoutUndone } from "./View.ts"
import { readWindow } from "./Window.ts"

/** User turns whose tool outputs are never pruned (T9). */
export const PRUNE_PROTECT_TURNS = 2
/** Times the summary call is retried with fewer tool outputs after the summariser's own context overflowed. */
export const MAX_SUMMARY_RETRIES = 4

/** The share of the usable context a summary should stay within on a small window. */
export const SUMMARY_SHARE = 0.2
/** The share of the usable context the tail may hold at most, even for its newest 2 messages. */
export const TAIL_LIMIT_SHARE = 0.5

/** What started a compaction: the overflow check (T7), a provider's context error (T23), or the user. */
export type CompactionReason = "overflow" | "provider" | "manual"

export interface CompactInput {
  readonly sessionID: string
  /** The model that writes the summary (the session's model). */
  readonly model: ModelRef
  readonly reason: CompactionReason
  /** Tokens the context held when compaction started. */
  readonly tokens: number
  /**
   * The request of the turn that is running, if any: it stays verbatim (pinned) so the model keeps
   * seeing what it was asked while its older steps are summarised.
   */
  readonly turn?: string | undefined
}

export interface CompactResult {
  readonly summaryMessageID: string
  /** Estimate of the model view after compaction (without the system prompt). */
  /** Tokens the context held when compaction started (the caller's figure). */
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** Tool parts pruned by this compaction. */
  readonly pruned: ReadonlyArray<string>
  /** Messages summarised by this compaction (the stored summary also lists those of the summary it updates). */
  readonly summarised: ReadonlyArray<string>
  /** The summary's text. */
  readonly summary: string
  /** What the summary's model calls cost (a turn's budget counts it). */
  readonly cost: number
}

interface SummaryOutput {
  readonly text: string
  readonly finish: string
  readonly usage: Usage
  readonly cost: number
}

/** What a summary is made of: the head to summarise, the pinned messages and summary beside it, its size and a part's. */
interface SummariseInput {
  readonly head: ReadonlyArray<MessageWithParts>
  readonly pinned: ReadonlyArray<MessageWithParts>
  readonly previous: string | undefined
  readonly maxTokens: number
  readonly budget: number
}

/** The share of the usable window one part of a head summarised in parts may take. */
const PART_SHARE = 0.5

const sumUsage = (a: Usage, b: Usage): Usage => ({
  input: a.input + b.input,
  output: a.output + b.output,
  reasoning: a.reasoning + b.reasoning,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheWrite: a.cacheWrite + b.cacheWrite
})

const tooLarge = (sessionID: string) =>
  new CompactionError({
    reason: "too-large",
    message:
      `The conversation is too large to summarise even after dropping old tool outputs and in parts (one message alone is too large for this model); start a new session with \`reins run\` ` +
      `(the history of ${sessionID} is kept and can be read with \`reins sessions show ${sessionID}\`).`
  })

/** Compacts a session's context (T7–T12): prunes old outputs, summarises the head, keeps a verbatim tail. */
export class Compaction extends Context.Service<
  Compaction,
  {
    compact(input: CompactInput): Effect.Effect<CompactResult, CompactionError | ProviderError | StoreError>
    /** T7 with these settings and the model's limits: whether a step's usage calls for compaction. */
    overflows(usage: Usage, model: ModelRef): boolean
    /** The model's input limit, what the conversation may fill of it, and the most output a request asks for. */
    window(model: ModelRef): { readonly limit: number; readonly usable: number; readonly maxOutput: number }
    /** Fails with a `config` error when the settings cannot work with this model (a reserve as large as its input limit). */
    check(model: ModelRef): Effect.Effect<void, CompactionError>
    readonly settings: CompactionSettings
  }
>()("reins/compaction/Compaction") {
  static readonly layer = Layer.effect(
    Compaction,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const provider = yield* Provider
      const bus = yield* Bus
      const ids = yield* Ids
      const settings = yield* CompactionSettings

      const callModel = (model: ModelRef, request: ReturnType<typeof summaryRequest>) =>
        provider
          .stream({
            model,
            system: request.system,
            messages: request.messages,
            tools: [],
            toolChoice: "none",
            maxOutputTokens: maxOutputTokens(provider.info(model), settings)
          })
          .pipe(
            Stream.runFold(
              (): SummaryOutput => ({ text: "", finish: "unknown", usage: emptyUsage, cost: 0 }),
              (acc, event): SummaryOutput => {
                if (event.type === "text-delta") return { ...acc, text: acc.text + event.text }
                if (event.type === "finish-step") return { ...acc, finish: event.finishReason, usage: event.usage, cost: acc.cost + event.cost }
                return acc
              }
            )
          )

      /**
       * The head summarised in parts, oldest first, each part's summary updating the one before (a session continued
       * on a model with a smaller context: even without tool outputs its head does not fit one request). A part the
       * summariser still finds too large is halved; a single message too large for it gives up.
       */
      const summariseInParts = Effect.fnUntraced(function* (sessionID: string, model: ModelRef, input: SummariseInput) {
        // what goes with every part (the pinned messages, the summary so far) leaves the rest of the budget to the part
        const beside = estimateMessages(input.pinned) + Math.ceil((input.previous?.length ?? 0) / 4) + input.maxTokens
        const budget = Math.max(500, input.budget - beside)
        const queue: Array<ReadonlyArray<MessageWithParts>> = []
        let part: Array<MessageWithParts> = []
        let size = 0
        for (const m of input.head) {
          const tokens = estimateMessages([m])
          if (part.length > 0 && size + tokens > budget) {
            queue.push(part)
            part = []
            size = 0
          }
          part.push(m)
          size += tokens
        }
        if (part.length > 0) queue.push(part)
        let rolling = input.previous
        let summarisedParts = 0
        let out: SummaryOutput = { text: "", finish: "unknown", usage: emptyUsage, cost: 0 }
        while (queue.length > 0) {
          const next = queue.shift()!
          const request = summaryRequest({ head: next, pinned: input.pinned, previous: rolling, template: settings.template, maxTokens: input.maxTokens })
          const result = yield* Effect.result(callModel(model, request))
          if (result._tag === "Failure") {
            if (result.failure.reason !== "overflow") return yield* result.failure
            if (next.length === 1) return yield* tooLarge(sessionID)
            queue.unshift(next.slice(0, Math.ceil(next.length / 2)), next.slice(Math.ceil(next.length / 2)))
            continue
          }
          const done = result.success
          rolling = done.text
          out = { text: done.text, finish: done.finish, usage: sumUsage(out.usage, done.usage), cost: out.cost + done.cost }
          summarisedParts++
        }
        yield* Effect.annotateCurrentSpan({ "compaction.parts": summarisedParts })
        return out
      })

      // On the summariser's own overflow, retry with the head's oldest tool outputs dropped:
      // half of them, then a quarter, … down to none; then in parts.
      const summarise = Effect.fnUntraced(function* (sessionID: string, model: ModelRef, input: SummariseInput) {
        const { head, pinned, previous, maxTokens } = input
        const outputs = visibleOutputs(head)
        const now = yield* Clock.currentTimeMillis
        for (let attempt = 0; ; attempt++) {
          const keep = Math.floor(outputs / 2 ** attempt)
          const shrunk = attempt === 0 ? head : dropOldestOutputs(head, keep, now)
          const result = yield* Effect.result(callModel(model, summaryRequest({ head: shrunk, pinned, previous, template: settings.template, maxTokens })))
          if (result._tag === "Success") return result.success
          if (result.failure.reason !== "overflow") return yield* result.failure
          if (attempt >= MAX_SUMMARY_RETRIES || keep === 0)
            return yield* summariseInParts(sessionID, model, { ...input, head: dropOldestOutputs(head, 0, now) })
          yield* Effect.annotateCurrentSpan({ "compaction.retry": attempt + 1, "compaction.outputs_kept": Math.floor(outputs / 2 ** (attempt + 1)) })
        }
      })

      const compact = Effect.fn("Compaction.compact")(function* (input: CompactInput) {
        const { sessionID, model } = input
        yield* Effect.annotateCurrentSpan({ "session.id": sessionID, "compaction.reason": input.reason, "compaction.tokens_before": input.tokens })
        // The summary's id is taken before reading: a message queued while the summary is written
        // sorts after it, so the next window (from the summary when no tail is kept) still has it.
        const summaryID = yield* ids.next("msg")
        // what an undo took back is neither summarised nor kept: the summary stands for what the model sees
        const stored = withoutUndone(yield* readWindow(store, sessionID))
        const start = yield* Clock.currentTimeMillis

        const pruned = planPrune(stored, {
          protectedTools: settings.protectedTools,
          keepLines: settings.pruneKeepLines,
          protectTurns: PRUNE_PROTECT_TURNS,
          now: start
        })
        const messages = applyParts(stored, pruned)

        // Only what the model still sees verbatim is summarised: the previous summary stands for
        // everything before its tail and is passed in to be updated. Pinned: the session's first
        // request, messages marked pinned, and the running turn's request. A request pinned only
        // while its turn ran is summarised now, so pinned messages do not pile up turn after turn.
        const previous = latestSummary(messages)
        const pinned = new Set([...pinnedIds(messages), ...(input.turn !== undefined ? [input.turn] : [])])
        const released = messages.slice(0, previous?.tailIndex ?? 0).filter((m) => previous?.pinned.has(m.info.id) && !pinned.has(m.info.id))
        const region = messages.slice(previous?.tailIndex ?? 0).filter((m) => !isSummaryMessage(m))
        const usable = usableTokens(provider.info(model), settings)
        const tailIndex = selectTail(region, { tailTurns: settings.tailTurns, budget: tailBudget(usable), limit: Math.floor(usable * TAIL_LIMIT_SHARE) })
        const tailStart = region[tailIndex]?.info.id
        const head = [...released, ...region.slice(0, tailIndex).filter((m) => !pinned.has(m.info.id))]
        if (head.length === 0) {
          return yield* new CompactionError({
            reason: "nothing-to-summarise",
            message: "Nothing to summarise: the conversation since the last summary is already only the recent turns that are kept verbatim."
          })
        }

        // Started once there is something to summarise: a compaction that had nothing to do did not happen.
        yield* bus.publish({ type: "compaction.started", sessionID, reason: input.reason, tokens: input.tokens })
        // Pinned messages before the tail are shown verbatim before the summary: the summariser gets them as context.
        const tailPosition = tailStart === undefined ? messages.length : messages.findIndex((m) => m.info.id === tailStart)
        const pinnedBefore = messages.slice(0, tailPosition).filter((m) => pinned.has(m.info.id))
        const summary = yield* summarise(sessionID, model, {
          head,
          pinned: pinnedBefore,
          previous: previous?.text,
          maxTokens: Math.floor(usable * SUMMARY_SHARE),
          // a part of the head summarised on its own: what the model's window leaves beside the summary it writes
          budget: Math.max(1_000, Math.floor(usable * PART_SHARE))
        })
        const text = summary.text.trim()
        if (text === "")
          return yield* new CompactionError({ reason: "empty-summary", message: "The model returned an empty summary; the conversation was left as it was." })

        const summarised = head.map((m) => m.info.id)
        const end = yield* Clock.currentTimeMillis
        const lastUser = messages.findLast((m) => m.info.role === "user")
        const info: AssistantMessage = {
          id: summaryID,
          sessionID,
          role: "assistant",
          parentID: lastUser?.info.id ?? "",
          model,
          time: { created: start, completed: end },
          finish: summary.finish,
          usage: summary.usage,
          cost: summary.cost,
          summary: {
            ...(tailStart !== undefined ? { tailStart } : {}),
            summarised: [...(previous?.info.summary.summarised ?? []), ...summarised],
            pinned: pinnedBefore.map((m) => m.info.id),
            auto: input.reason !== "manual"
          }
        }
        const part: Part = { id: yield* ids.next("prt"), sessionID, messageID: info.id, type: "text", text, time: { start, end } }
        // Only a compaction that succeeded changes the session: pruned outputs are stored with the summary.
        if (pruned.length > 0) yield* store.putParts(pruned)
        yield* store.putMessage(info)
        yield* store.putPart(part)
        yield* bus.publish({ type: "message.updated", message: info })
        yield* bus.publish({ type: "part.updated", part })

        const tokensAfter = estimateMessages(modelView([...messages, { info, parts: [part] }]))
        const prunedIds = pruned.map((p) => p.id)
        yield* Effect.annotateCurrentSpan({
          "compaction.tokens_after": tokensAfter,
          "compaction.pruned": prunedIds.length,
          "compaction.summarised": summarised.length
        })
        yield* bus.publish({
          type: "compaction.completed",
          sessionID,
          messageID: info.id,
          tokensBefore: input.tokens,
          tokensAfter,
          pruned: prunedIds,
          summarised,
          summary: text
        })
        return {
          summaryMessageID: info.id,
          tokensBefore: input.tokens,
          tokensAfter,
          pruned: prunedIds,
          summarised,
          summary: text,
          cost: info.cost
        } satisfies CompactResult
      })

      const check = (model: ModelRef) => {
        const problem = reserveProblem(provider.info(model), settings, `${model.providerID}/${model.modelID}`)
        return problem === undefined ? Effect.void : Effect.fail(new CompactionError({ reason: "config", message: problem }))
      }

      return Compaction.of({
        compact,
        overflows: (usage, model) => isOverflow(usage, provider.info(model), settings),
        window: (model) => ({
          limit: inputLimit(provider.info(model)),
          usable: usableTokens(provider.info(model), settings),
          maxOutput: maxOutputTokens(provider.info(model), settings)
        }),
        check,
        settings
      })
    })
  )
}
