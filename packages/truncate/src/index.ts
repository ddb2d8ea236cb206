export * from "./Truncate.ts"
