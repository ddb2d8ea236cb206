import { Clock, Effect, Option, type Tracer } from "effect"
import type { ModelMessage } from "ai"
import {
  GenAiAttr,
  GenAiOperation,
  cacheHitRate,
  type GenAiTracing,
  chatSpanName,
  jsonAttribute,
  providerName,
  serverAttributes,
  usageAttributes,
  type ModelRef,
  type ProviderType,
  type Usage
} from "@reins/domain"
import type { ProviderError } from "./ProviderError.ts"

/**
 * The `chat {model}` span (CLIENT) of one provider call attempt, per the OpenTelemetry GenAI
 * conventions: it covers exactly the HTTP call and its streamed answer, not the tools the answer
 * starts (those run in the step, beside it). A retried call is one span per attempt, each failed
 * one with `error.type`; `reins.attempt` numbers them.
 */
export const chatSpan = (model: ModelRef, type: ProviderType | undefined, attempt: number) =>
  [
    chatSpanName(model.modelID),
    {
      kind: "client",
      attributes: {
        [GenAiAttr.operation]: GenAiOperation.chat,
        [GenAiAttr.provider]: providerName(type),
        [GenAiAttr.requestModel]: model.modelID,
        "reins.provider.id": model.providerID,
        "reins.attempt": attempt
      }
    }
  ] as const satisfies readonly [string, Tracer.SpanOptions]

/** The parts of the AI SDK's stream the span reads. */
type Observed =
  | { readonly type: "text-delta" | "reasoning-delta"; readonly text: string }
  | { readonly type: "tool-call"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: "finish-step"; readonly finishReason: string; readonly response?: { readonly id?: string; readonly modelId?: string } | undefined }
  | { readonly type: string }

interface OutputPart {
  type: "text" | "reasoning" | "tool_call"
  content?: string
  id?: string
  name?: string
  arguments?: unknown
}

/**
 * Records one attempt on the current (`chat`) span: request figures at once, the server from the
 * first request URL, time to first chunk, and the response, usage and finish reason at its end.
 * Prompt and answer content only when capture is on (`GenAiTracing.captureContent`).
 */
export const chatRecorder = (settings: GenAiTracing) =>
  Effect.gen(function* () {
    const span = Option.getOrUndefined(yield* Effect.option(Effect.currentSpan))
    const clock = yield* Clock.Clock
    const started = clock.currentTimeNanosUnsafe()
    const set = (attributes: Record<string, unknown>) => {
      if (span) for (const key in attributes) span.attribute(key, attributes[key])
    }
    let served = false
    let first = false
    const output: Array<OutputPart> = []
    const text = (type: "text" | "reasoning", delta: string) => {
      const last = output[output.length - 1]
      if (last && last.type === type) last.content = (last.content ?? "") + delta
      else output.push({ type, content: delta })
    }
    return {
      captureContent: settings.captureContent,
      aiSdkSpans: settings.aiSdkSpans,
      request(input: { readonly maxTokens: number; readonly system: ReadonlyArray<unknown>; readonly messages: ReadonlyArray<ModelMessage> }) {
        set({ [GenAiAttr.requestMaxTokens]: input.maxTokens })
        if (!settings.captureContent) return
        set({
          [GenAiAttr.systemInstructions]: jsonAttribute(systemInstructions(input.system)),
          [GenAiAttr.inputMessages]: jsonAttribute(input.messages.map(inputMessage))
        })
      },
      /** Each request URL the call fetches: the first names the server. */
      fetched(url: string) {
        if (served) return
        served = true
        set(serverAttributes(url))
      },
      observe(part: Observed) {
        if (!first && (part.type === "text-delta" || part.type === "reasoning-delta" || part.type === "tool-call" || part.type === "tool-input-start")) {
          first = true
          set({ [GenAiAttr.timeToFirstChunk]: Number(clock.currentTimeNanosUnsafe() - started) / 1e9 })
        }
        if (!settings.captureContent) return
        if ((part.type === "text-delta" || part.type === "reasoning-delta") && "text" in part)
          text(part.type === "text-delta" ? "text" : "reasoning", part.text)
        if (part.type === "tool-call" && "toolCallId" in part)
          output.push({ type: "tool_call", id: part.toolCallId, name: part.toolName, arguments: part.input })
      },
      finished(
        part: { readonly finishReason: string; readonly response?: { readonly id?: string; readonly modelId?: string } | undefined },
        usage: Usage,
        cost: number
      ) {
        set({
          [GenAiAttr.finishReasons]: [finishReason(part.finishReason)],
          ...(part.response?.id ? { [GenAiAttr.responseId]: part.response.id } : {}),
          ...(part.response?.modelId ? { [GenAiAttr.responseModel]: part.response.modelId } : {}),
          ...usageAttributes(usage),
          "reins.cache.hit_rate": cacheHitRate(usage) ?? 0,
          "reins.cost": cost
        })
        if (settings.captureContent) {
          set({ [GenAiAttr.outputMessages]: jsonAttribute([{ role: "assistant", parts: output, finish_reason: finishReason(part.finishReason) }]) })
        }
      }
    }
  })

/** `error.type` of a failed call: the HTTP status the provider answered with, else reins's reason (`timeout`, `network`, …). */
export const chatErrorType = (error: ProviderError): Record<string, string> => ({
  [GenAiAttr.errorType]: error.status !== undefined ? String(error.status) : error.reason
})

/** The AI SDK's finish reasons in the conventions' words (`tool-calls` → `tool_call`, `length`, `stop`, `content_filter`, `error`). */
const finishReason = (reason: string) => (reason === "tool-calls" ? "tool_call" : reason === "content-filter" ? "content_filter" : reason)

const systemInstructions = (system: ReadonlyArray<unknown>) =>
  system.map((block) => ({
    type: "text",
    content: typeof block === "string" ? block : isRecord(block) && typeof block.content === "string" ? block.content : jsonAttribute(block)
  }))

/** A model message in the conventions' input shape: `{ role, parts: [{ type: "text" | "tool_call" | "tool_call_response" | … }] }`. */
const inputMessage = (message: ModelMessage) => {
  const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
  return {
    role: message.role,
    parts: (content as ReadonlyArray<Record<string, unknown>>).map((part) => {
      switch (part.type) {
        case "text":
          return { type: "text", content: part.text }
        case "reasoning":
          return { type: "reasoning", content: part.text }
        case "tool-call":
          return { type: "tool_call", id: part.toolCallId, name: part.toolName, arguments: part.input }
        case "tool-result": {
          const out = part.output as { type?: string; value?: unknown } | undefined
          return { type: "tool_call_response", id: part.toolCallId, response: out && "value" in out ? out.value : out }
        }
        case "image":
        case "file":
          return { type: "blob", modality: part.type === "image" ? "image" : "file", mime_type: part.mediaType ?? part.mimeType }
        default:
          return { type: String(part.type) }
      }
    })
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null
