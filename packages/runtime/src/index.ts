export * from "./Runtime.ts"
export * from "./Telemetry.ts"
