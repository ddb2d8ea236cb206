import { fileURLToPath } from "node:url"
import protobuf from "protobufjs"

/**
 * Decodes OTLP/HTTP export requests — `http/protobuf` with the official definitions in `../proto`
 * (opentelemetry-proto v1.11.0, vendored) and `http/json` — into plain spans and metric data points.
 */

export type SpanKind = "UNSPECIFIED" | "INTERNAL" | "SERVER" | "CLIENT" | "PRODUCER" | "CONSUMER"
export type StatusCode = "UNSET" | "OK" | "ERROR"
export type AttributeValue = string | number | boolean | null | ReadonlyArray<AttributeValue> | { readonly [key: string]: AttributeValue }
export type Attributes = Record<string, AttributeValue>

/** One span as the receiver got it. */
export interface ReceivedSpan {
  readonly name: string
  readonly kind: SpanKind
  readonly traceId: string
  readonly spanId: string
  /** Absent on a root span. */
  readonly parentSpanId?: string
  readonly startTimeUnixNano: bigint
  readonly endTimeUnixNano: bigint
  /** End minus start, in milliseconds. */
  readonly durationMs: number
  readonly attributes: Attributes
  readonly status: { readonly code: StatusCode; readonly message?: string }
  readonly events: ReadonlyArray<{ readonly name: string; readonly timeUnixNano: bigint; readonly attributes: Attributes }>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string; readonly attributes: Attributes }>
  readonly resource: Attributes
  readonly scope: string
}

export type MetricType = "gauge" | "sum" | "histogram" | "exponentialHistogram" | "summary"

/** One metric data point, with its metric's name, unit and type. */
export interface ReceivedDataPoint {
  readonly metric: string
  readonly unit: string
  readonly description: string
  readonly type: MetricType
  readonly attributes: Attributes
  readonly timeUnixNano: bigint
  /** gauge and sum */
  readonly value?: number
  /** histogram */
  readonly count?: number
  readonly sum?: number
  readonly min?: number
  readonly max?: number
  readonly bucketCounts?: ReadonlyArray<number>
  readonly explicitBounds?: ReadonlyArray<number>
  /** sum and histogram: 1 delta, 2 cumulative */
  readonly temporality?: number
  readonly isMonotonic?: boolean
  readonly resource: Attributes
  readonly scope: string
}

const protoRoot = fileURLToPath(new URL("../proto/", import.meta.url))
let types: { traces: protobuf.Type; metrics: protobuf.Type } | undefined
const requestTypes = () => {
  if (types) return types
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => protoRoot + target
  root.loadSync(["opentelemetry/proto/collector/trace/v1/trace_service.proto", "opentelemetry/proto/collector/metrics/v1/metrics_service.proto"])
  types = {
    traces: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    metrics: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest")
  }
  return types
}

// Both encodings are read into protobufjs's object form: camelCase fields, 64-bit integers as strings.
type Obj = Record<string, any>

const fromProtobuf = (type: protobuf.Type, bytes: Uint8Array): Obj =>
  type.toObject(type.decode(bytes), { longs: String, enums: Number, defaults: false, arrays: true })

/** Decodes one request body of either encoding, by its content type. */
const decodeBody = (signal: "traces" | "metrics", contentType: string, body: Uint8Array): Obj =>
  contentType.includes("json") ? (JSON.parse(new TextDecoder().decode(body)) as Obj) : fromProtobuf(requestTypes()[signal], body)

// ids are bytes in protobuf and hex strings in OTLP/JSON
const hex = (id: unknown): string =>
  id === undefined || id === null ? "" : typeof id === "string" ? id.toLowerCase() : Buffer.from(id as Uint8Array).toString("hex")

const nanos = (v: unknown): bigint => (v === undefined || v === null || v === "" ? 0n : BigInt(v as string | number))
const num = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : Number(v))

const anyValue = (v: Obj | undefined): AttributeValue => {
  if (!v) return null
  if ("stringValue" in v) return v.stringValue as string
  if ("boolValue" in v) return Boolean(v.boolValue)
  if ("intValue" in v) return Number(v.intValue)
  if ("doubleValue" in v) return Number(v.doubleValue)
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Array<Obj>).map(anyValue)
  if ("kvlistValue" in v) return attributes(v.kvlistValue?.values)
  if ("bytesValue" in v) return typeof v.bytesValue === "string" ? v.bytesValue : Buffer.from(v.bytesValue as Uint8Array).toString("base64")
  return null
}

const attributes = (kvs: unknown): Attributes => {
  const out: Attributes = {}
  for (const kv of (kvs ?? []) as Array<Obj>) out[kv.key as string] = anyValue(kv.value as Obj | undefined)
  return out
}

const kinds: ReadonlyArray<SpanKind> = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"]
const codes: ReadonlyArray<StatusCode> = ["UNSET", "OK", "ERROR"]
const enumOf = <A extends string>(names: ReadonlyArray<A>, v: unknown): A => {
  if (typeof v === "string") return (names.find((n) => v.endsWith(n)) ?? names[0]) as A
  return (names[Number(v ?? 0)] ?? names[0]) as A
}

/** The spans of an `ExportTraceServiceRequest` body. */
export const decodeTraces = (contentType: string, body: Uint8Array): Array<ReceivedSpan> => {
  const spans: Array<ReceivedSpan> = []
  for (const rs of (decodeBody("traces", contentType, body).resourceSpans ?? []) as Array<Obj>) {
    const resource = attributes(rs.resource?.attributes)
    for (const ss of (rs.scopeSpans ?? []) as Array<Obj>) {
      const scope = (ss.scope?.name as string | undefined) ?? ""
      for (const s of (ss.spans ?? []) as Array<Obj>) {
        const start = nanos(s.startTimeUnixNano)
        const end = nanos(s.endTimeUnixNano)
        const parent = hex(s.parentSpanId)
        spans.push({
          name: s.name as string,
          kind: enumOf(kinds, s.kind),
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          ...(parent ? { parentSpanId: parent } : {}),
          startTimeUnixNano: start,
          endTimeUnixNano: end,
          durationMs: Number(end - start) / 1e6,
          attributes: attributes(s.attributes),
          status: { code: enumOf(codes, s.status?.code), ...(s.status?.message ? { message: s.status.message as string } : {}) },
          events: ((s.events ?? []) as Array<Obj>).map((e) => ({
            name: e.name as string,
            timeUnixNano: nanos(e.timeUnixNano),
            attributes: attributes(e.attributes)
          })),
          links: ((s.links ?? []) as Array<Obj>).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: attributes(l.attributes) })),
          resource,
          scope
        })
      }
    }
  }
  return spans
}

const metricTypes: ReadonlyArray<MetricType> = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"]

/** The data points of an `ExportMetricsServiceRequest` body. */
export const decodeMetrics = (contentType: string, body: Uint8Array): Array<ReceivedDataPoint> => {
  const points: Array<ReceivedDataPoint> = []
  for (const rm of (decodeBody("metrics", contentType, body).resourceMetrics ?? []) as Array<Obj>) {
    const resource = attributes(rm.resource?.attributes)
    for (const sm of (rm.scopeMetrics ?? []) as Array<Obj>) {
      const scope = (sm.scope?.name as string | undefined) ?? ""
      for (const m of (sm.metrics ?? []) as Array<Obj>) {
        const type = metricTypes.find((t) => m[t] !== undefined)
        if (!type) continue
        const data = m[type] as Obj
        for (const p of (data.dataPoints ?? []) as Array<Obj>) {
          const value = p.asDouble !== undefined ? num(p.asDouble) : num(p.asInt)
          points.push({
            metric: m.name as string,
            unit: (m.unit as string | undefined) ?? "",
            description: (m.description as string | undefined) ?? "",
            type,
            attributes: attributes(p.attributes),
            timeUnixNano: nanos(p.timeUnixNano),
            ...(value !== undefined ? { value } : {}),
            ...(p.count !== undefined ? { count: Number(p.count) } : {}),
            ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
            ...(p.min !== undefined ? { min: Number(p.min) } : {}),
            ...(p.max !== undefined ? { max: Number(p.max) } : {}),
            ...(p.bucketCounts ? { bucketCounts: (p.bucketCounts as Array<unknown>).map(Number) } : {}),
            ...(p.explicitBounds ? { explicitBounds: (p.explicitBounds as Array<unknown>).map(Number) } : {}),
            ...(data.aggregationTemporality !== undefined ? { temporality: Number(data.aggregationTemporality) } : {}),
            ...(data.isMonotonic !== undefined ? { isMonotonic: Boolean(data.isMonotonic) } : {}),
            resource,
            scope
          })
        }
      }
    }
  }
  return points
}
