import { describe, expect, test } from "bun:test"
import { otelConfig } from "../src/OtelConfig.ts"

const BASE = "http://collector:4318"

describe("OTEL_* configuration: valid values", () => {
  const cases: ReadonlyArray<{
    name: string
    env: Record<string, string>
    traces?: object | undefined
    metrics?: object | undefined
    serviceName?: string
    resource?: Record<string, string>
  }> = [
    { name: "nothing set: nothing exported", env: {}, traces: undefined, metrics: undefined, serviceName: "reins" },
    {
      name: "the base endpoint: /v1/traces and /v1/metrics, http/protobuf by default",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${BASE}/` },
      traces: { url: `${BASE}/v1/traces`, protocol: "http/protobuf", headers: {} },
      metrics: { url: `${BASE}/v1/metrics`, protocol: "http/protobuf", headers: {} }
    },
    {
      name: "per-signal endpoints are used as given",
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t.example/otlp/traces", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://m.example/m" },
      traces: { url: "https://t.example/otlp/traces" },
      metrics: { url: "https://m.example/m" }
    },
    {
      name: "a per-signal endpoint beats the base",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://other:9000/m" },
      traces: { url: `${BASE}/v1/traces` },
      metrics: { url: "http://other:9000/m" }
    },
    {
      name: "http/json globally, protobuf for metrics",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf" },
      traces: { protocol: "http/json" },
      metrics: { protocol: "http/protobuf" }
    },
    {
      name: "headers: global, percent-decoded, per-signal ones override by key",
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: BASE,
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20abc, x-team = core",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=traces"
      },
      traces: { headers: { Authorization: "Basic abc", "x-team": "traces" } },
      metrics: { headers: { Authorization: "Basic abc", "x-team": "core" } }
    },
    {
      name: "OTEL_TRACES_EXPORTER=none keeps metrics; OTEL_METRICS_EXPORTER=otlp is the default",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "otlp" },
      traces: undefined,
      metrics: { url: `${BASE}/v1/metrics` }
    },
    {
      name: "OTEL_METRICS_EXPORTER=none",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_METRICS_EXPORTER: "none" },
      traces: { url: `${BASE}/v1/traces` },
      metrics: undefined
    },
    {
      name: "OTEL_SDK_DISABLED=true turns everything off",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_SDK_DISABLED: "TRUE" },
      traces: undefined,
      metrics: undefined
    },
    { name: "OTEL_SDK_DISABLED=false", env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_SDK_DISABLED: "false" }, traces: { url: `${BASE}/v1/traces` } },
    {
      name: "an empty value is an unset one",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: " ", OTEL_EXPORTER_OTLP_PROTOCOL: "" },
      traces: undefined,
      metrics: undefined
    },
    {
      name: "service name and resource attributes",
      env: { OTEL_SERVICE_NAME: "my-agent", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=a%2Cb,service.name=ignored" },
      serviceName: "my-agent",
      resource: { "deployment.environment": "prod", team: "a,b" }
    },
    { name: "service.name from the resource attributes", env: { OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attrs" }, serviceName: "from-attrs", resource: {} }
  ]
  for (const c of cases) {
    test(c.name, () => {
      const config = otelConfig(c.env)
      expect(config.warnings).toEqual([])
      if ("traces" in c) c.traces === undefined ? expect(config.traces).toBeUndefined() : expect(config.traces).toMatchObject(c.traces)
      if ("metrics" in c) c.metrics === undefined ? expect(config.metrics).toBeUndefined() : expect(config.metrics).toMatchObject(c.metrics)
      if (c.serviceName) expect(config.serviceName).toBe(c.serviceName)
      if (c.resource) expect(config.resourceAttributes).toEqual(c.resource)
    })
  }
})

describe("OTEL_* configuration: an invalid value is one warning and its default, never a failure", () => {
  const cases: ReadonlyArray<{
    name: string
    env: Record<string, string>
    warning: RegExp
    traces?: object | undefined
    metrics?: object | undefined
    resource?: Record<string, string>
  }> = [
    {
      name: "grpc (global, read by both signals): one warning, http/protobuf",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      warning: /OTEL_EXPORTER_OTLP_PROTOCOL=grpc: reins exports over HTTP only; using http\/protobuf/,
      traces: { protocol: "http/protobuf" },
      metrics: { protocol: "http/protobuf" }
    },
    {
      name: "grpc for traces only",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      warning: /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc/,
      traces: { protocol: "http/protobuf" },
      metrics: { protocol: "http/json" }
    },
    {
      name: "an unknown protocol",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" },
      warning: /"http\/xml" is not http\/protobuf or http\/json/,
      traces: { protocol: "http/protobuf" }
    },
    {
      name: "a base endpoint that is not a URL",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      warning: /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" is not an http\(s\) URL/,
      traces: undefined,
      metrics: undefined
    },
    {
      name: "a base endpoint that is not http",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://c/" },
      warning: /not an http\(s\) URL/,
      traces: undefined,
      metrics: undefined
    },
    {
      name: "a bad per-signal endpoint falls back to the base",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" },
      warning: /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="not a url" is not an http\(s\) URL; ignored/,
      traces: { url: `${BASE}/v1/traces` }
    },
    {
      name: "a header that is not key=value is skipped",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_HEADERS: "good=1,justakey,=novalue" },
      warning: /OTEL_EXPORTER_OTLP_HEADERS: "justakey", "=novalue" are not key=value/,
      traces: { headers: { good: "1" } }
    },
    {
      name: "a malformed percent escape in a header",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_EXPORTER_OTLP_METRICS_HEADERS: "k=%zz,ok=%41" },
      warning: /OTEL_EXPORTER_OTLP_METRICS_HEADERS: "k=%zz" is not key=value/,
      metrics: { headers: { ok: "A" } }
    },
    {
      name: "a bad resource attribute (a cut escape)",
      env: { OTEL_RESOURCE_ATTRIBUTES: "a=1,b=%E0%A4%A" },
      warning: /OTEL_RESOURCE_ATTRIBUTES: "b=%E0%A4%A"/,
      resource: { a: "1" }
    },
    {
      name: "a resource attribute whose bytes are not UTF-8",
      env: { OTEL_RESOURCE_ATTRIBUTES: "a=%C3%A9,b=%E0%A4" },
      warning: /OTEL_RESOURCE_ATTRIBUTES: "b=%E0%A4"/,
      resource: { a: "é" }
    },
    {
      name: "OTEL_SDK_DISABLED that is not a boolean",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_SDK_DISABLED: "yes" },
      warning: /OTEL_SDK_DISABLED="yes" is not true or false; taken as false/,
      traces: { url: `${BASE}/v1/traces` }
    },
    {
      name: "an exporter reins does not have",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_TRACES_EXPORTER: "zipkin" },
      warning: /OTEL_TRACES_EXPORTER="zipkin": reins exports traces over otlp only \(or none\); zipkin ignored/,
      traces: undefined
    },
    {
      name: "otlp with another exporter keeps otlp",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: BASE, OTEL_METRICS_EXPORTER: "otlp,prometheus" },
      warning: /prometheus ignored/,
      metrics: { url: `${BASE}/v1/metrics` }
    }
  ]
  for (const c of cases) {
    test(c.name, () => {
      const config = otelConfig(c.env)
      expect(config.warnings).toHaveLength(1)
      expect(config.warnings[0]).toMatch(c.warning)
      if ("traces" in c) c.traces === undefined ? expect(config.traces).toBeUndefined() : expect(config.traces).toMatchObject(c.traces)
      if ("metrics" in c) c.metrics === undefined ? expect(config.metrics).toBeUndefined() : expect(config.metrics).toMatchObject(c.metrics)
      if (c.resource) expect(config.resourceAttributes).toEqual(c.resource)
    })
  }
})
