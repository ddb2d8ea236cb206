// The trace level's filter over whatever tracer is installed (the OTLP exporter, the host's, a library user's), and no
// spans at all when none is: Effect's own tracer keeps them nowhere.
import { describe, expect, test } from "bun:test"
import { Effect, References, Tracer } from "effect"
import { layerTraceFilter } from "../src/TraceFilter.ts"

/** A tracer that keeps the names of the spans it was asked for. */
const capturing = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span(options) {
      names.push(options.name)
      return new Tracer.NativeSpan(options)
    }
  })
  return { names, tracer }
}

/** Two spans, one the default level exports and one it hides; the ids the inner one sees. */
const program = Effect.gen(function* () {
  const enabled = yield* References.TracerEnabled
  const inner = yield* Effect.currentSpan.pipe(Effect.withSpan("Storage.read"), Effect.withSpan("invoke_agent build"))
  return { enabled, spanId: inner.spanId }
})

describe("trace filter", () => {
  test("with no tracer installed, spans are off: no span is made (each would cost a clock read and the filter)", async () => {
    const result = await Effect.runPromise(program.pipe(Effect.provide(layerTraceFilter("default"))))
    expect(result).toEqual({ enabled: false, spanId: "noop" })
    const debug = await Effect.runPromise(program.pipe(Effect.provide(layerTraceFilter("debug"))))
    expect(debug.enabled).toBe(false)
  })

  test("a tracer the caller installed gets the spans of the level: the GenAI ones by default, every one at debug", async () => {
    const byDefault = capturing()
    const result = await Effect.runPromise(program.pipe(Effect.provide(layerTraceFilter("default")), Effect.withTracer(byDefault.tracer)))
    expect(result.enabled).toBe(true)
    expect(byDefault.names).toEqual(["invoke_agent build"])
    // the hidden span carries its exported ancestor's ids
    expect(result.spanId).not.toBe("noop")
    const debug = capturing()
    await Effect.runPromise(program.pipe(Effect.provide(layerTraceFilter("debug")), Effect.withTracer(debug.tracer)))
    expect(debug.names).toEqual(["invoke_agent build", "Storage.read"])
  })
})
