export * from "./Runtime.ts"
export * from "./Telemetry.ts"
export * from "./Metrics.ts"
export * from "./OtelConfig.ts"
