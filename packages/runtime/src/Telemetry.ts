import { Effect, Layer } from "effect"

/** True when the environment asks for OTLP export. */
export const telemetryEnabled = (env: Record<string, string | undefined>) =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)

/**
 * OTLP/HTTP span export configured from the standard `OTEL_*` variables (endpoint, headers,
 * service name, resource attributes). The exporter modules load only when it is enabled.
 */
export const layerOtlp = (serviceVersion: string) =>
  Layer.unwrap(
    Effect.promise(async () => {
      const [{ OtlpTracer, OtlpSerialization }, { FetchHttpClient }] = await Promise.all([
        import("effect/observability"),
        import("effect/http")
      ])
      return OtlpTracer.layerFromConfig({ resource: { serviceName: "reins", serviceVersion } }).pipe(
        Layer.provide(OtlpSerialization.layerJson),
        Layer.provide(FetchHttpClient.layer)
      )
    })
  )

/** Telemetry for an environment: OTLP when configured, nothing (and no cost) otherwise. */
export const layerTelemetry = (env: Record<string, string | undefined>, serviceVersion: string): Layer.Layer<never> =>
  // The exporter's only typed output is its flusher; the tracer it installs is what matters here.
  telemetryEnabled(env) ? (layerOtlp(serviceVersion) as unknown as Layer.Layer<never>) : Layer.empty
