import { Context, Effect, Exit, Layer, Metric, type Tracer } from "effect"
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ERROR_TYPE_VALUE_OTHER,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE
} from "@opentelemetry/semantic-conventions/incubating"
import { Bus, type Event } from "@reins/domain"

/**
 * reins's metrics: the GenAI client metrics of the OpenTelemetry conventions, recorded when a
 * `chat` span ends (its duration and token counts are the span's), and reins's own, recorded from
 * the bus (tool durations, compactions, permission answers). Recording is a map update; the OTLP
 * exporter reads the registry in the background.
 */

// Effect's OTLP exporter takes a metric's unit from its `unit` attribute; the serialization drops that attribute again.
const unit = (u: string) => ({ unit: u })

// the conventions' advised bucket boundaries
const TOKEN_BOUNDARIES = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
const SECONDS_BOUNDARIES = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

export const REINS_TOOL_DURATION = "reins.tool.duration"
export const REINS_COMPACTIONS = "reins.compactions"
export const REINS_PERMISSION_ASKS = "reins.permission.asks"
export const ATTR_REINS_COMPACTION_REASON = "reins.compaction.reason"
export const ATTR_REINS_PERMISSION = "reins.permission"
export const ATTR_REINS_PERMISSION_DECISION = "reins.permission.decision"
export const ATTR_REINS_PERMISSION_BY = "reins.permission.by"

const tokenUsage = Metric.histogram(METRIC_GEN_AI_CLIENT_TOKEN_USAGE, {
  description: "Number of input and output tokens used.",
  boundaries: TOKEN_BOUNDARIES,
  attributes: unit("{token}")
})
const operationDuration = Metric.histogram(METRIC_GEN_AI_CLIENT_OPERATION_DURATION, {
  description: "GenAI operation duration.",
  boundaries: SECONDS_BOUNDARIES,
  attributes: unit("s")
})
const toolDuration = Metric.histogram(REINS_TOOL_DURATION, { description: "Duration of a tool call.", boundaries: SECONDS_BOUNDARIES, attributes: unit("s") })
const compactions = Metric.counter(REINS_COMPACTIONS, { description: "Context compactions, by reason.", incremental: true, attributes: unit("{compaction}") })
const permissionAsks = Metric.counter(REINS_PERMISSION_ASKS, {
  description: "Permission questions answered, by decision.",
  incremental: true,
  attributes: unit("{ask}")
})

/** Where measurements go: a registry the OTLP metrics exporter reads. */
export interface MetricsRecorder {
  readonly chat: (attributes: ReadonlyMap<string, unknown>, seconds: number, failed: boolean) => void
  readonly event: (event: Event) => void
}

const noRecorder: MetricsRecorder = { chat: () => {}, event: () => {} }

/** The recorder of the runtime; the default records nothing (no metrics exporter). */
export const MetricsRecorder = Context.Reference<MetricsRecorder>("reins/runtime/MetricsRecorder", { defaultValue: () => noRecorder })

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined)
const pick = (from: ReadonlyMap<string, unknown>, keys: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const key of keys) {
    const v = str(from.get(key))
    if (v !== undefined) out[key] = v
  }
  return out
}
const CHAT_KEYS = [
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT
]

/** A recorder writing into `registry`. */
export const makeRecorder = (registry: Metric.MetricRegistry): MetricsRecorder => {
  const context = Context.make(Metric.MetricRegistry, registry)
  const record = <I>(metric: Metric.Metric<I, unknown>, attributes: Record<string, string>, value: I) =>
    Metric.withAttributes(metric, attributes).updateUnsafe(value, context)
  // a part is published again after it ends (e.g. when compaction hides its output): count it once
  const toolsSeen = new Set<string>()
  const compactionReason = new Map<string, string>()
  const askedPermission = new Map<string, string>()
  return {
    chat: (attributes, seconds, failed) => {
      const common = pick(attributes, CHAT_KEYS)
      if (failed) common[ATTR_ERROR_TYPE] = str(attributes.get(ATTR_ERROR_TYPE)) ?? ERROR_TYPE_VALUE_OTHER
      record(operationDuration, common, seconds)
      const { [ATTR_SERVER_ADDRESS]: _address, [ATTR_SERVER_PORT]: _port, [ATTR_ERROR_TYPE]: _error, ...tokenAttributes } = common
      const input = attributes.get(ATTR_GEN_AI_USAGE_INPUT_TOKENS)
      const output = attributes.get(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS)
      if (typeof input === "number") record(tokenUsage, { ...tokenAttributes, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT }, input)
      if (typeof output === "number") record(tokenUsage, { ...tokenAttributes, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT }, output)
    },
    event: (event) => {
      switch (event.type) {
        case "part.updated": {
          const part = event.part
          if (part.type !== "tool" || (part.state.status !== "completed" && part.state.status !== "error") || toolsSeen.has(part.id)) return
          toolsSeen.add(part.id)
          const attributes: Record<string, string> = { [ATTR_GEN_AI_TOOL_NAME]: part.tool }
          if (part.state.status === "error") attributes[ATTR_ERROR_TYPE] = "tool_error"
          record(toolDuration, attributes, Math.max(0, part.state.time.end - part.state.time.start) / 1000)
          return
        }
        case "compaction.started":
          compactionReason.set(event.sessionID, event.reason)
          return
        case "compaction.completed": {
          record(compactions, { [ATTR_REINS_COMPACTION_REASON]: compactionReason.get(event.sessionID) ?? "unknown" }, 1)
          compactionReason.delete(event.sessionID)
          return
        }
        case "permission.asked":
          askedPermission.set(event.id, event.permission)
          return
        case "permission.replied": {
          const permission = askedPermission.get(event.id)
          askedPermission.delete(event.id)
          record(
            permissionAsks,
            {
              [ATTR_REINS_PERMISSION_DECISION]: event.reply,
              [ATTR_REINS_PERMISSION_BY]: event.by,
              ...(permission ? { [ATTR_REINS_PERMISSION]: permission } : {})
            },
            1
          )
          return
        }
      }
    }
  }
}

/**
 * A tracer that records the GenAI client metrics when a `chat` span ends, then hands every span
 * on to `tracer` unchanged. The duration is the span's: exactly the provider call.
 */
export const observeSpans = (tracer: Tracer.Tracer, recorder: MetricsRecorder): Tracer.Tracer => ({
  ...tracer,
  span(options) {
    const span = tracer.span(options)
    const end = span.end.bind(span)
    span.end = (endTime, exit) => {
      end(endTime, exit)
      if (span.attributes.get(ATTR_GEN_AI_OPERATION_NAME) !== GEN_AI_OPERATION_NAME_VALUE_CHAT) return
      recorder.chat(span.attributes, Number(endTime - options.startTime) / 1e9, Exit.isFailure(exit))
    }
    return span
  }
})

/** Feeds the bus's events to the runtime's recorder (nothing to do when no metrics are exported). */
export const layerBusMetrics: Layer.Layer<never, never, Bus> = Layer.effectDiscard(
  Effect.gen(function* () {
    const recorder = yield* MetricsRecorder
    if (recorder === noRecorder) return
    const bus = yield* Bus
    yield* bus.listen((event) => Effect.sync(() => recorder.event(event)))
  })
)
