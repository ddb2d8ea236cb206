export * from "./Wildcard.ts"
export * from "./Rules.ts"
export * from "./Permission.ts"
