import { Context, Effect, type Exit, Layer, Option, Tracer } from "effect"
import { GenAiOperation, RUN_SPAN } from "@reins/domain"

/**
 * How much of reins a trace shows. `default`: what a GenAI-aware backend reads — the run, the
 * agent's turns, its model calls, tool calls and permission questions, compactions. `debug`
 * (`REINS_TRACE_LEVEL=debug`): every span, storage and services included.
 */
export type TraceLevel = "default" | "debug"

export const traceLevelFromEnv = (env: Readonly<Record<string, string | undefined>>): TraceLevel =>
  (env.REINS_TRACE_LEVEL ?? "").trim().toLowerCase() === "debug" ? "debug" : "default"

const KEPT_PREFIXES = [`${GenAiOperation.invokeAgent} `, `${GenAiOperation.chat} `, `${GenAiOperation.executeTool} `]
const KEPT = new Set([RUN_SPAN, "Permission.ask", "Compaction.compact"])

/** Whether a span is exported at the default level. */
export const keptByDefault = (name: string) => KEPT.has(name) || KEPT_PREFIXES.some((prefix) => name.startsWith(prefix))

/**
 * A span that is not exported: it carries `DisablePropagation`, so Effect makes its children the
 * children of its nearest exported ancestor (and OpenTelemetry context skips it too), and its
 * ids are that ancestor's, so anything that reads the current span's ids sees the exported one.
 */
class HiddenSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId: string
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink> = []
  readonly sampled: boolean
  readonly annotations: Context.Context<never>
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly name: string
  readonly kind: Tracer.SpanKind
  status: Tracer.SpanStatus
  constructor(options: Parameters<Tracer.Tracer["span"]>[0]) {
    this.name = options.name
    this.kind = options.kind
    this.parent = options.parent
    this.sampled = options.sampled
    this.annotations = Context.add(options.annotations, Tracer.DisablePropagation, true)
    const ancestor = Option.getOrUndefined(options.parent)
    this.spanId = ancestor?.spanId ?? "hidden"
    this.traceId = ancestor?.traceId ?? "hidden"
    this.status = { _tag: "Started", startTime: options.startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    if (this.status._tag === "Started") this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks() {}
}

/**
 * The OpenTelemetry API span an `@effect/opentelemetry` span wraps, if it is one: its success
 * status is left unset, as the GenAI conventions ask (the package sets OK).
 */
interface OtelBacked {
  readonly span: { setStatus(status: { code: number; message?: string }): unknown }
}
const isOtelBacked = (span: Tracer.Span): span is Tracer.Span & OtelBacked =>
  "span" in span && typeof (span as { span?: { setStatus?: unknown } }).span?.setStatus === "function"

const unsetOnSuccess = (span: Tracer.Span): Tracer.Span => {
  if (!isOtelBacked(span)) return span
  const otel = span.span
  const setStatus = otel.setStatus.bind(otel)
  // 1 = SpanStatusCode.OK: a success leaves the status unset; an error still sets ERROR
  otel.setStatus = (status) => (status.code === 1 ? otel : setStatus(status))
  return span
}

/** A tracer that exports only what `keep` accepts; the others vanish from the tree without breaking it. */
export const filterTracer = (inner: Tracer.Tracer, keep: (name: string) => boolean): Tracer.Tracer =>
  Tracer.make({
    span: (options) => (keep(options.name) ? unsetOnSuccess(inner.span(options)) : new HiddenSpan(options)),
    ...(inner.context ? { context: inner.context } : {})
  })

/** Wraps the tracer `telemetry` installs (OTLP, the host's, or Effect's own) with the level's filter. */
export const layerTraceFilter = (level: TraceLevel) =>
  level === "debug"
    ? Layer.empty
    : Layer.effect(
        Tracer.Tracer,
        Effect.map(Effect.tracer, (inner) => filterTracer(inner, keptByDefault))
      )
