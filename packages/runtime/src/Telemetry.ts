import { Effect, Layer } from "effect"

type Env = Readonly<Record<string, string | undefined>>

/** The OTLP/HTTP traces URL the environment asks for, if any (standard `OTEL_*` variables). */
export const tracesEndpoint = (env: Env): string | undefined => {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return undefined
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (!base) return undefined
  return `${base.replace(/\/+$/, "")}/v1/traces`
}

/** `OTEL_EXPORTER_OTLP_HEADERS` / `_TRACES_HEADERS`: `k=v,k2=v2`, values URL-encoded. */
export const otlpHeaders = (env: Env): Record<string, string> => {
  const raw = [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS].filter(Boolean).join(",")
  const headers: Record<string, string> = {}
  for (const pair of raw.split(",")) {
    const eq = pair.indexOf("=")
    if (eq <= 0) continue
    headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim())
  }
  return headers
}

/** `OTEL_RESOURCE_ATTRIBUTES`: `k=v,k2=v2`. */
const resourceAttributes = (env: Env): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")) {
    const eq = pair.indexOf("=")
    if (eq > 0) out[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim())
  }
  return out
}

/** True when the environment asks for OTLP export. */
export const telemetryEnabled = (env: Env) => tracesEndpoint(env) !== undefined

/** OTLP/HTTP (JSON) span export; the exporter modules load only when this layer is built. */
export const layerOtlp = (env: Env, serviceVersion: string) =>
  Layer.unwrap(
    Effect.promise(async () => {
      const [{ OtlpTracer, OtlpSerialization }, { FetchHttpClient }] = await Promise.all([
        import("effect/observability"),
        import("effect/http")
      ])
      const attributes = resourceAttributes(env)
      return OtlpTracer.layer({
        url: tracesEndpoint(env) ?? "",
        headers: otlpHeaders(env),
        resource: { serviceName: env.OTEL_SERVICE_NAME ?? attributes["service.name"] ?? "reins", serviceVersion, attributes },
        // a CLI run is short: export often, and the scope's close flushes the rest
        exportInterval: "1 second"
      }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
    })
  )

/** Telemetry for an environment: OTLP when configured, nothing (and no cost) otherwise. */
export const layerTelemetry = (env: Env, serviceVersion: string): Layer.Layer<never> =>
  // The exporter's only typed output is its flusher; the tracer it installs is what matters here.
  telemetryEnabled(env) ? (layerOtlp(env, serviceVersion) as unknown as Layer.Layer<never>) : Layer.empty
