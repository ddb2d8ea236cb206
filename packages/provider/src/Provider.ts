import { Clock, Context, Effect, Layer, Random, Stream } from "effect"
import type { LanguageModel } from "ai"
import type { ModelRef, ProviderConfig, ProviderTimeoutConfig, Usage } from "@reins/domain"
import { forModel } from "./Attachments.ts"
import { cacheCallOptions, cacheStyle, withCacheMarkers } from "./Cache.ts"
import { chatErrorType, chatRecorder, chatSpan } from "./ChatSpan.ts"
import { GenAiTracing } from "@reins/domain"
import { cost, lookupModel, unknownModelWarning, type ModelInfo } from "./Models.ts"
import type { ModelEvent, ToolSpec } from "./ModelEvent.ts"
import { classify, ProviderError, unfinishedStreamError } from "./ProviderError.ts"
import { RetryPolicy, retryDelay } from "./Retry.ts"
import { resolveTimeouts, watchedFetch } from "./Timeouts.ts"
import { toModelMessages, type MessageWithParts } from "./Transform.ts"
import { answerTokens, callOptions, mergeProviderOptions, thinkingOn, type ProviderOptions } from "./Variants.ts"
import { BUILT_IN_PROVIDERS, credentials, loadSdk } from "./Sdks.ts"
import type { StoredKeys } from "./AuthStore.ts"

/** One model call: reins runs the tools itself, so this is always a single step. */
export interface ProviderRequest {
  readonly model: ModelRef
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<MessageWithParts>
  readonly tools: ReadonlyArray<ToolSpec>
  readonly toolChoice?: "auto" | "none"
  /** At most this many output tokens (never more than the model's own limit): the reserve the window keeps for the answer. */
  readonly maxOutputTokens?: number
  /** The session the call is for: OpenAI's prompt cache key (T10). */
  readonly sessionID?: string
  /** Sampling settings of the call (plugins' `chat.params`); default the provider's. */
  readonly temperature?: number
  readonly topP?: number
  /** AI SDK `providerOptions` over the model's and the cache's, provider key by provider key (plugins' `chat.params`). */
  readonly providerOptions?: Record<string, Record<string, unknown>>
  /**
   * Called when the server took the request (its answer's headers came, 2xx; at every attempt): work that can wait for
   * the model starts then, and not for a call that never reached it (refused, unreachable, a 401).
   */
  readonly sent?: () => void
}

/** Configured providers (from `reins.json`) and the environment their keys come from (the runtime passes its `env` option; nothing is read from `process.env`). */
export interface ProviderSettings {
  readonly providers: Readonly<Record<string, ProviderConfig>>
  readonly env: Readonly<Record<string, string | undefined>>
  /** Timeouts for every provider (`provider_timeout`); a provider's own `timeout` wins field by field. */
  readonly timeout?: ProviderTimeoutConfig
  /** The variant of a call that names none and whose model has none of its own (config `variant`; T22). */
  readonly variant?: string
  /** Keys stored by `reins auth login` (the data dir's auth.json), used when neither reins.json nor the environment has one. */
  readonly stored?: StoredKeys
}

export const ProviderSettings = Context.Reference<ProviderSettings>("reins/provider/Settings", {
  defaultValue: () => ({ providers: {}, env: {} })
})

export { BUILT_IN_PROVIDERS, ENV_KEYS, missingCredentials, SDK_PACKAGES } from "./Sdks.ts"

/** Parses `provider/model`. */
export const parseModel = (text: string): ModelRef | undefined => {
  const slash = text.indexOf("/")
  if (slash <= 0 || slash === text.length - 1) return undefined
  return { providerID: text.slice(0, slash), modelID: text.slice(slash + 1) }
}

/** The provider config for an id: configured, or built in (anthropic, openai, google, amazon-bedrock, azure, openrouter, mistral, groq, deepseek, xai). */
export const providerConfig = (settings: ProviderSettings, providerID: string): ProviderConfig | undefined =>
  settings.providers[providerID] ?? builtIn(providerID)

const builtIn = (providerID: string): ProviderConfig | undefined => {
  const type = BUILT_IN_PROVIDERS.find((t) => t === providerID)
  return type === undefined ? undefined : { type }
}

const loadModel = (settings: ProviderSettings, ref: ModelRef) =>
  Effect.gen(function* () {
    const config = providerConfig(settings, ref.providerID)
    if (!config) {
      return yield* new ProviderError({
        reason: "invalid",
        message: `Unknown provider "${ref.providerID}". Add it under "provider" in reins.json, or use one reins knows: ${BUILT_IN_PROVIDERS.join(", ")}.`
      })
    }
    const creds = credentials(ref.providerID, config, settings.env, settings.stored)
    if (typeof creds === "string") return yield* new ProviderError({ reason: config.type === "openai-compatible" ? "invalid" : "auth", message: creds })
    // T21: each SDK module is imported only when its provider is used. Models are made around a
    // fetch that each call routes to its own watched fetch (see `borrow`).
    return yield* Effect.tryPromise({
      try: () => loadSdk(ref, config, creds),
      catch: (e) => new ProviderError({ reason: "invalid", message: (e as Error).message })
    }).pipe(Effect.map((model) => ({ model, config })))
  })

/** A model whose fetch is set per call: one call at a time uses it. */
interface Routed {
  readonly model: LanguageModel
  route(fetch: typeof globalThis.fetch | undefined): void
}

const routedModel = (make: (fetch: typeof globalThis.fetch) => LanguageModel): Routed => {
  let current: typeof globalThis.fetch | undefined
  const routedFetch = (input: Parameters<typeof globalThis.fetch>[0], init?: Parameters<typeof globalThis.fetch>[1]) =>
    current === undefined ? Promise.reject(new Error("A provider call fetched after it ended")) : current(input, init)
  return {
    model: make(Object.assign(routedFetch, { preconnect: globalThis.fetch.preconnect })),
    route: (fetch) => {
      current = fetch
    }
  }
}

interface SdkUsage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly inputTokenDetails?: { noCacheTokens?: number | undefined; cacheReadTokens?: number | undefined; cacheWriteTokens?: number | undefined }
  readonly outputTokenDetails?: { reasoningTokens?: number | undefined }
}

/** AI SDK usage → reins usage, where `input` excludes cached tokens so the four counts add up. */
export const toUsage = (u: SdkUsage | undefined): Usage => {
  const cacheRead = u?.inputTokenDetails?.cacheReadTokens ?? 0
  const cacheWrite = u?.inputTokenDetails?.cacheWriteTokens ?? 0
  const input = u?.inputTokenDetails?.noCacheTokens ?? Math.max(0, (u?.inputTokens ?? 0) - cacheRead - cacheWrite)
  return {
    input,
    output: u?.outputTokens ?? 0,
    reasoning: u?.outputTokenDetails?.reasoningTokens ?? 0,
    cacheRead,
    cacheWrite,
    ...(u?.totalTokens !== undefined ? { total: u.totalTokens } : {})
  }
}

const gaveUp = (error: ProviderError, attempts: number) =>
  new ProviderError({
    reason: error.reason,
    message: `gave up after ${attempts} attempts: ${error.message}`,
    ...(error.status !== undefined ? { status: error.status } : {})
  })

/** Streams model calls over the AI SDK, with classified errors and retries. */
export class Provider extends Context.Service<
  Provider,
  {
    stream(request: ProviderRequest): Stream.Stream<ModelEvent, ProviderError>
    info(model: ModelRef): ModelInfo
    /**
     * Loads the AI SDK and the model's provider package ahead of the first call (about a tenth of a second of
     * module loading), so a turn can do it while it waits for something else; a failure is left for the call.
     */
    prepare(model: ModelRef): Effect.Effect<void>
  }
>()("reins/provider/Provider") {
  static readonly layer = Layer.effect(
    Provider,
    Effect.gen(function* () {
      const settings = yield* ProviderSettings
      const policy = yield* RetryPolicy
      // Jitter comes from Effect's Random service (seedable in tests), not Math.random.
      const random = yield* Random.Random
      // read once: content capture and the AI SDK's own spans are the runtime's settings
      const tracing = yield* GenAiTracing
      const clock = yield* Clock.Clock
      const models = new Map<string, { model: (fetch: typeof globalThis.fetch) => LanguageModel; config: ProviderConfig; idle: Array<Routed> }>()
      const lookup = (ref: ModelRef) => lookupModel(providerConfig(settings, ref.providerID), ref.modelID, ref.providerID)
      const info = (ref: ModelRef) => lookup(ref).info
      // a model neither the catalogue nor the config knows is told once (the CLI prints warnings on stderr)
      const warned = new Set<string>()
      const warnUnknown = (ref: ModelRef) =>
        Effect.suspend(() => {
          const found = lookup(ref)
          const key = `${ref.providerID}/${ref.modelID}`
          if (found.source.from !== "default" || warned.has(key)) return Effect.void
          warned.add(key)
          return Effect.logWarning(unknownModelWarning(ref, found.info))
        })

      const resolve = (ref: ModelRef) => {
        const key = `${ref.providerID}/${ref.modelID}`
        const cached = models.get(key)
        if (cached) return Effect.succeed(cached)
        return Effect.map(loadModel(settings, ref), (loaded) => {
          const entry = { ...loaded, idle: [] }
          models.set(key, entry)
          return entry
        })
      }

      /**
       * A model for one call, its fetch routed to the call's own watched fetch: an idle one made for an
       * earlier call, else a new one (making a model builds the SDK's response schemas, about a
       * millisecond a call). It goes back idle, unrouted, when the call's scope closes.
       */
      const borrow = (
        entry: { readonly model: (fetch: typeof globalThis.fetch) => LanguageModel; readonly idle: Array<Routed> },
        fetch: typeof globalThis.fetch
      ) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const routed = entry.idle.pop() ?? routedModel(entry.model)
            routed.route(fetch)
            return routed
          }),
          (routed) =>
            Effect.sync(() => {
              routed.route(undefined)
              entry.idle.push(routed)
            })
        )

      const attempt = (request: ProviderRequest): Stream.Stream<ModelEvent, ProviderError> =>
        Stream.unwrap(
          Effect.gen(function* () {
            const entry = yield* resolve(request.model)
            const config = entry.config
            // the low-memory variant has one consumer: plain streamText tees its stream and the unread
            // branch keeps every chunk of the answer (about 1 KB per delta)
            const { experimental_streamTextLowMemory: streamText, tool, jsonSchema } = yield* Effect.promise(() => import("./AiSdk.ts"))
            const controller = new AbortController()
            yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
            const limits = resolveTimeouts(settings.timeout, config.timeout)
            const watched = yield* watchedFetch(limits, request.model.providerID, config.baseURL)
            // the `chat` span's figures: server from the first request URL, response and usage at the finish
            const trace = yield* chatRecorder(tracing)
            const fetch = Object.assign(
              (input: Parameters<typeof globalThis.fetch>[0], init?: Parameters<typeof globalThis.fetch>[1]) => {
                trace.fetched(input instanceof Request ? input.url : String(input))
                const response = watched(input, init)
                // the caller handles the response's failure; this only learns of its success
                response.then(
                  (answer) => (answer.ok ? request.sent?.() : undefined),
                  () => undefined
                )
                return response
              },
              { preconnect: watched.preconnect }
            )
            // released before the abort above (finalizers run last first): the call is over by then
            const { model } = yield* borrow(entry, fetch)
            const price = info(request.model)
            yield* warnUnknown(request.model)
            // start-step is held until the provider sends something: a call that fails before
            // that has emitted nothing and can still be retried.
            let held = false
            const release = (events: ReadonlyArray<ModelEvent>): ReadonlyArray<ModelEvent> => {
              if (!held || events.length === 0) return events
              held = false
              return [{ type: "start-step" }, ...events]
            }
            // T10: cache markers (or the cache key) where the provider takes them
            const caching = cacheStyle(config.type, request.model.modelID)
            // T22: the model's options and variant, merged with the cache's (neither clobbers the other)
            const options = callOptions(request.model, config, settings.variant)
            if (options._tag === "UnknownVariant") return yield* new ProviderError({ reason: "invalid", message: options.message })
            const prompt = withCacheMarkers(
              request.system,
              toModelMessages(forModel(request.messages, price.images === true), config.type, request.model, { thinking: thinkingOn(options.options) }),
              caching
            )
            const providerOptions = mergeProviderOptions(
              mergeProviderOptions(cacheCallOptions(caching, request.sessionID), options.options),
              request.providerOptions as ProviderOptions | undefined
            )
            const maxOutputTokens = answerTokens(
              request.maxOutputTokens !== undefined && request.maxOutputTokens > 0 ? Math.min(price.output, request.maxOutputTokens) : price.output,
              options.options
            )
            trace.request({ maxTokens: maxOutputTokens, system: request.system, messages: prompt.messages })
            const result = streamText({
              model,
              system: prompt.system,
              messages: prompt.messages,
              ...(providerOptions ? { providerOptions } : {}),
              tools: Object.fromEntries(request.tools.map((t) => [t.id, tool({ description: t.description, inputSchema: jsonSchema(t.parameters) })])),
              ...(request.toolChoice ? { toolChoice: request.toolChoice } : {}),
              ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
              ...(request.topP !== undefined ? { topP: request.topP } : {}),
              maxOutputTokens,
              maxRetries: 0,
              // the AI SDK's own spans (a registered telemetry integration), nested under `chat`: only when asked for
              experimental_telemetry: { isEnabled: trace.aiSdkSpans, recordInputs: trace.captureContent, recordOutputs: trace.captureContent },
              abortSignal: controller.signal,
              onError: () => {}
            })
            const events: Stream.Stream<ModelEvent, ProviderError> = Stream.fromAsyncIterable(result.fullStream, (e) =>
              classify(e, clock.currentTimeMillisUnsafe())
            ).pipe(
              Stream.mapEffect((part): Effect.Effect<ReadonlyArray<ModelEvent>, ProviderError> => {
                trace.observe(part)
                switch (part.type) {
                  case "start-step":
                    held = true
                    return Effect.succeed([])
                  case "text-start":
                  case "text-end":
                    return Effect.succeed([{ type: part.type, id: part.id }])
                  case "reasoning-start":
                  case "reasoning-end":
                    return Effect.succeed([{ type: part.type, id: part.id, ...(part.providerMetadata ? { metadata: part.providerMetadata } : {}) }])
                  case "text-delta":
                    return Effect.succeed([{ type: part.type, id: part.id, text: part.text }])
                  case "reasoning-delta":
                    return Effect.succeed([
                      { type: part.type, id: part.id, text: part.text, ...(part.providerMetadata ? { metadata: part.providerMetadata } : {}) }
                    ])
                  case "tool-input-start":
                    return Effect.succeed([{ type: "tool-input-start", callID: part.id, name: part.toolName }])
                  case "tool-input-delta":
                    return Effect.succeed([{ type: "tool-input-delta", callID: part.id, delta: part.delta }])
                  case "tool-input-end":
                    return Effect.succeed([{ type: "tool-input-end", callID: part.id }])
                  case "tool-call": {
                    const invalid = "invalid" in part && part.invalid ? String((part as { error?: unknown }).error ?? "invalid tool call") : undefined
                    return Effect.succeed([
                      {
                        type: "tool-call",
                        callID: part.toolCallId,
                        name: part.toolName,
                        input: part.input,
                        ...(invalid ? { invalid } : {}),
                        ...(part.providerMetadata ? { metadata: part.providerMetadata } : {})
                      }
                    ])
                  }
                  case "finish-step": {
                    // The SDK's word for a stream that ended before the provider's finish reason.
                    if (part.finishReason === "interrupted") return Effect.fail(unfinishedStreamError())
                    const usage = toUsage(part.usage)
                    const spent = cost(price, usage)
                    trace.finished(part, usage, spent)
                    return Effect.succeed([{ type: "finish-step", finishReason: part.finishReason, usage, cost: spent }])
                  }
                  case "error":
                    return Clock.currentTimeMillis.pipe(Effect.flatMap((now) => Effect.fail(classify(part.error, now))))
                  default:
                    return Effect.succeed([])
                }
              }),
              Stream.map(release),
              Stream.flattenIterable
            )
            return events
          })
        )

      // Retries only while nothing has been emitted: a half-streamed step is never replayed.
      const withRetry = (request: ProviderRequest, n: number): Stream.Stream<ModelEvent, ProviderError> =>
        Stream.suspend(() => {
          let emitted = false
          // one `chat` span per attempt, around exactly the provider's call and answer (the SDK's modules load before it)
          const call = Stream.unwrap(
            Effect.as(
              Effect.andThen(
                resolve(request.model),
                Effect.promise(() => import("./AiSdk.ts"))
              ),
              attempt(request).pipe(
                Stream.tapError((error) => Effect.annotateCurrentSpan(chatErrorType(error))),
                Stream.withSpan(...chatSpan(request.model, providerConfig(settings, request.model.providerID)?.type, n))
              )
            )
          )
          return call.pipe(
            Stream.tap(() => Effect.sync(() => void (emitted = true))),
            Stream.catchTag("ProviderError", (error) => {
              if (emitted || !error.retryable) return Stream.fail(error)
              if (n >= policy.attempts) return Stream.fail(n > 1 ? gaveUp(error, n) : error)
              const delayMs = retryDelay(error, n, policy, () => random.nextDoubleUnsafe())
              return Stream.concat(
                Stream.succeed<ModelEvent>({ type: "retry", attempt: n, delayMs, message: error.message }),
                Stream.concat(Stream.fromEffectDrain(Effect.sleep(delayMs)), withRetry(request, n + 1))
              )
            })
          )
        })

      return Provider.of({
        stream: (request) => withRetry(request, 1).pipe(Stream.withSpan("Provider.stream")),
        info,
        prepare: (model) => Effect.all([resolve(model), Effect.promise(() => import("./AiSdk.ts"))], { concurrency: 2, discard: true }).pipe(Effect.ignore)
      })
    })
  )
}
