import { Effect, Layer } from "effect"

/**
 * reins's spans through the process's own OpenTelemetry SDK (its global tracer provider, as
 * `NodeSDK` or `trace.setGlobalTracerProvider` installs it), via `@effect/opentelemetry`: a span
 * reins starts with no parent of its own is a child of the span active in OpenTelemetry's context
 * (the caller's), and the SDK's processors and exporters take it from there. Loaded only when used.
 */
export const layerHostTracer: Layer.Layer<never> = Layer.unwrap(
  Effect.promise(async () => {
    const OtelTracer = await import("@effect/opentelemetry/OtelTracer")
    // its only typed output is the OpenTelemetry tracer; the Effect tracer it installs is what matters
    return OtelTracer.layerGlobal as unknown as Layer.Layer<never>
  })
)
