import { ConfigProvider, Duration, Effect, Layer, Metric, Tracer } from "effect"
import type { HttpClient } from "effect/http"
import type { OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { makeRecorder, MetricsRecorder, observeSpans } from "./Metrics.ts"
import { otelConfig, type OtelConfig, type OtlpProtocol, type OtlpSignal } from "./OtelConfig.ts"

type Env = Readonly<Record<string, string | undefined>>

/**
 * How long closing the runtime waits for the last export (traces and metrics flush concurrently):
 * a collector that is down or hangs costs a run this, and the teardown after it, within 2 s.
 */
export const EXPORT_SHUTDOWN_TIMEOUT = Duration.millis(1500)
/**
 * How often spans and metrics are sent while a run goes on, in the background (the OpenTelemetry
 * SDK's span batch delay); a short run sends everything once, when it closes.
 */
export const EXPORT_INTERVAL = Duration.seconds(5)

/** The OTLP/HTTP traces URL the environment asks for, if any (standard `OTEL_*` variables). */
export const tracesEndpoint = (env: Env): string | undefined => otelConfig(env).traces?.url

/** True when the environment asks for OTLP export of traces or metrics. */
export const telemetryEnabled = (env: Env) => {
  const config = otelConfig(env)
  return config.traces !== undefined || config.metrics !== undefined
}

type Serialization = OtlpSerialization.OtlpSerialization["Service"]

// Effect's tracer marks every successful span OK; the conventions leave a success UNSET (OK is the user's call)
const unsetOk = (data: OtlpTracer.TraceData): OtlpTracer.TraceData => ({
  resourceSpans: data.resourceSpans.map((rs) => ({
    ...rs,
    scopeSpans: rs.scopeSpans.map((ss) => ({ ...ss, spans: ss.spans.map((s) => (s.status.code === 1 ? { ...s, status: { code: 0 } } : s)) }))
  }))
})

// The metric's unit travelled as its `unit` attribute (how Effect's exporter reads it): drop it from the
// data points; `server.port` is an int in the conventions, metric attributes are strings in Effect.
const fixMetricAttributes = (data: OtlpMetrics.MetricsData): OtlpMetrics.MetricsData => {
  for (const rm of data.resourceMetrics) {
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        for (const dp of [...(m.histogram?.dataPoints ?? []), ...(m.sum?.dataPoints ?? []), ...(m.gauge?.dataPoints ?? [])]) {
          dp.attributes = (dp.attributes ?? [])
            .filter((kv) => kv.key !== "unit")
            .map((kv) =>
              kv.key === "server.port" && typeof kv.value.stringValue === "string" ? { key: kv.key, value: { intValue: Number(kv.value.stringValue) } } : kv
            )
        }
      }
    }
  }
  return data
}

const serializationFor = (base: Serialization): Serialization => ({
  traces: (data) => base.traces(unsetOk(data)),
  metrics: (data) => base.metrics(fixMetricAttributes(data)),
  logs: base.logs
})

/**
 * OTLP/HTTP export of spans and metrics as configured; the exporter modules load only when this
 * layer is built. Spans and metrics are batched and sent in the background; closing the layer
 * sends the rest, bounded by `EXPORT_SHUTDOWN_TIMEOUT`.
 */
export const layerOtlp = (config: OtelConfig, serviceVersion: string) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const [{ OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer }, { FetchHttpClient }] = yield* Effect.promise(() =>
        Promise.all([import("effect/observability"), import("effect/http")])
      )
      const encoding = (layer: Layer.Layer<OtlpSerialization.OtlpSerialization>) =>
        Effect.gen(function* () {
          return serializationFor(yield* OtlpSerialization.OtlpSerialization)
        }).pipe(Effect.provide(layer))
      const encodings: Record<OtlpProtocol, Serialization> = {
        "http/protobuf": yield* encoding(OtlpSerialization.layerProtobuf),
        "http/json": yield* encoding(OtlpSerialization.layerJson)
      }
      const resource = { serviceName: config.serviceName, serviceVersion, attributes: config.resourceAttributes }
      const common = (signal: OtlpSignal) => ({
        url: signal.url,
        headers: signal.headers,
        resource,
        exportInterval: EXPORT_INTERVAL,
        shutdownTimeout: EXPORT_SHUTDOWN_TIMEOUT
      })
      // the resource is ours: Effect's exporters must not read (and die on) the process's OTEL_* variables themselves
      const exporter = <A, R>(signal: OtlpSignal, make: Effect.Effect<A, never, R>) =>
        make.pipe(
          Effect.provideService(OtlpSerialization.OtlpSerialization, encodings[signal.protocol]),
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({}))
        )
      const registry: Metric.MetricRegistry = new Map()
      const recorder = config.metrics ? makeRecorder(registry) : undefined

      const tracer = Layer.effect(
        Tracer.Tracer,
        Effect.gen(function* () {
          const base = config.traces ? yield* exporter(config.traces, OtlpTracer.make(common(config.traces))) : yield* Tracer.Tracer
          return recorder ? observeSpans(base, recorder) : base
        })
      )
      const metrics = config.metrics
        ? Layer.effectDiscard(
            exporter(config.metrics, OtlpMetrics.make({ ...common(config.metrics), temporality: "cumulative" })).pipe(
              Effect.provideService(Metric.MetricRegistry, registry)
            )
          ).pipe(Layer.merge(Layer.succeed(MetricsRecorder, recorder!)))
        : Layer.empty
      const deps: Layer.Layer<OtlpExporter.Flusher | HttpClient.HttpClient> = Layer.merge(OtlpExporter.layerFlusher, FetchHttpClient.layer)
      return Layer.mergeAll(tracer, metrics).pipe(Layer.provide(deps))
    })
  )

/** The warnings of the environment's `OTEL_*` variables, each once on stderr. */
const layerWarnings = (warnings: ReadonlyArray<string>) =>
  warnings.length === 0 ? Layer.empty : Layer.effectDiscard(Effect.forEach(warnings, (w) => Effect.logWarning(w), { discard: true }))

/** Telemetry for an environment: OTLP when configured, nothing (and no cost) otherwise; never a failed run. */
export const layerTelemetry = (env: Env, serviceVersion: string): Layer.Layer<never> => {
  const config = otelConfig(env)
  const warnings = layerWarnings(config.warnings)
  if (config.traces === undefined && config.metrics === undefined) return warnings
  return Layer.merge(warnings, layerOtlp(config, serviceVersion))
}
