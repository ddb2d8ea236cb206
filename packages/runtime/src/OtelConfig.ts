/**
 * The standard OpenTelemetry SDK environment variables, as reins reads them for OTLP/HTTP export
 * of traces and metrics. Pure: the same environment gives the same configuration and the same
 * warnings. An invalid value is never fatal: it gives one warning and its default.
 */

type Env = Readonly<Record<string, string | undefined>>

export type OtlpProtocol = "http/protobuf" | "http/json"
export type Signal = "traces" | "metrics"

/** Where and how one signal is exported. */
export interface OtlpSignal {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: OtlpProtocol
}

export interface OtelConfig {
  /** Undefined: traces are not exported (no endpoint, `OTEL_TRACES_EXPORTER=none`, `OTEL_SDK_DISABLED=true`). */
  readonly traces: OtlpSignal | undefined
  readonly metrics: OtlpSignal | undefined
  readonly serviceName: string
  /** `OTEL_RESOURCE_ATTRIBUTES`, less `service.name` (which is `serviceName`). */
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** One line per invalid or unsupported value, to print once on stderr. */
  readonly warnings: ReadonlyArray<string>
}

// the spec: an empty value is the same as an unset one
const read = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim()
  return v ? v : undefined
}

const upper = { traces: "TRACES", metrics: "METRICS" } as const

/** `k=v,k2=v2` with percent-encoded keys and values (headers, resource attributes); bad entries are skipped with one warning. */
const keyValues = (env: Env, name: string, warnings: Array<string>): Record<string, string> => {
  const raw = read(env, name)
  const out: Record<string, string> = {}
  if (!raw) return out
  const bad: Array<string> = []
  for (const entry of raw.split(",")) {
    if (!entry.trim()) continue
    const eq = entry.indexOf("=")
    const key = eq > 0 ? decode(entry.slice(0, eq).trim()) : undefined
    const value = eq > 0 ? decode(entry.slice(eq + 1).trim()) : undefined
    if (!key || value === undefined) bad.push(entry.trim())
    else out[key] = value
  }
  if (bad.length > 0)
    warnings.push(`${name}: ${bad.map((b) => JSON.stringify(b)).join(", ")} ${bad.length === 1 ? "is" : "are"} not key=value (percent-encoded); skipped.`)
  return out
}

// percent-decoding that says "not valid" (a malformed escape, or bytes that are not UTF-8) instead of throwing
const utf8 = new TextDecoder("utf-8", { fatal: false })
const decode = (s: string): string | undefined => {
  if (!s || /%(?![0-9a-fA-F]{2})/.test(s)) return undefined
  const bytes: Array<number> = []
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "%") {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(...new TextEncoder().encode(s[i]!))
  }
  const text = utf8.decode(new Uint8Array(bytes))
  return text.includes("\uFFFD") && !s.includes("\uFFFD") ? undefined : text
}

const isHttpUrl = (s: string) => {
  const url = URL.parse(s)
  return url !== null && (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
}

const protocol = (env: Env, signal: Signal, warnings: Array<string>): OtlpProtocol => {
  const specific = `OTEL_EXPORTER_OTLP_${upper[signal]}_PROTOCOL`
  const name = read(env, specific) ? specific : "OTEL_EXPORTER_OTLP_PROTOCOL"
  const value = read(env, name)
  if (value === undefined || value === "http/protobuf" || value === "http/json") return value ?? "http/protobuf"
  warnings.push(
    value === "grpc"
      ? `${name}=grpc: reins exports over HTTP only; using http/protobuf (point the endpoint at the collector's HTTP port, usually 4318).`
      : `${name}=${JSON.stringify(value)} is not http/protobuf or http/json; using http/protobuf.`
  )
  return "http/protobuf"
}

/** The signal's URL: its own endpoint as given, or the base endpoint with `/v1/{signal}` appended. */
const endpoint = (env: Env, signal: Signal, warnings: Array<string>): string | undefined => {
  const specific = `OTEL_EXPORTER_OTLP_${upper[signal]}_ENDPOINT`
  const own = read(env, specific)
  if (own !== undefined) {
    if (isHttpUrl(own)) return own
    warnings.push(`${specific}=${JSON.stringify(own)} is not an http(s) URL; ignored.`)
  }
  const base = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  if (base === undefined) return undefined
  if (isHttpUrl(base)) return `${base.replace(/\/+$/, "")}/v1/${signal}`
  warnings.push(`OTEL_EXPORTER_OTLP_ENDPOINT=${JSON.stringify(base)} is not an http(s) URL (e.g. http://localhost:4318); nothing is exported.`)
  return undefined
}

/** `OTEL_{TRACES,METRICS}_EXPORTER`: `otlp` (the default) or `none`; anything else is not supported here. */
const exporterWanted = (env: Env, signal: Signal, warnings: Array<string>): boolean => {
  const name = `OTEL_${upper[signal]}_EXPORTER`
  const raw = read(env, name)
  if (raw === undefined) return true
  const values = raw
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean)
  if (values.includes("none")) return false
  const unsupported = values.filter((v) => v !== "otlp")
  if (unsupported.length > 0)
    warnings.push(`${name}=${JSON.stringify(raw)}: reins exports ${signal} over otlp only (or none); ${unsupported.join(", ")} ignored.`)
  return values.includes("otlp")
}

const sdkDisabled = (env: Env, warnings: Array<string>): boolean => {
  const raw = read(env, "OTEL_SDK_DISABLED")
  if (raw === undefined) return false
  const v = raw.toLowerCase()
  if (v === "true") return true
  if (v !== "false") warnings.push(`OTEL_SDK_DISABLED=${JSON.stringify(raw)} is not true or false; taken as false.`)
  return false
}

const signalConfig = (env: Env, signal: Signal, global: Record<string, string>, warnings: Array<string>): OtlpSignal | undefined => {
  if (!exporterWanted(env, signal, warnings)) return undefined
  const url = endpoint(env, signal, warnings)
  if (url === undefined) return undefined
  const headers = { ...global, ...keyValues(env, `OTEL_EXPORTER_OTLP_${upper[signal]}_HEADERS`, warnings) }
  return { url, headers, protocol: protocol(env, signal, warnings) }
}

/** The OTLP export an environment asks for, with a warning for each value that was not understood. */
export const otelConfig = (env: Env): OtelConfig => {
  const warnings: Array<string> = []
  const disabled = sdkDisabled(env, warnings)
  const attributes = keyValues(env, "OTEL_RESOURCE_ATTRIBUTES", warnings)
  const serviceName = read(env, "OTEL_SERVICE_NAME") ?? attributes["service.name"] ?? "reins"
  delete attributes["service.name"]
  if (disabled) return { traces: undefined, metrics: undefined, serviceName, resourceAttributes: attributes, warnings: [...new Set(warnings)] }
  const globalHeaders = keyValues(env, "OTEL_EXPORTER_OTLP_HEADERS", warnings)
  const traces = signalConfig(env, "traces", globalHeaders, warnings)
  const metrics = signalConfig(env, "metrics", globalHeaders, warnings)
  // a global value read for both signals (e.g. OTEL_EXPORTER_OTLP_PROTOCOL=grpc) is warned about once
  return { traces, metrics, serviceName, resourceAttributes: attributes, warnings: [...new Set(warnings)] }
}
