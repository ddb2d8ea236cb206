export * from "./Hooks.ts"
export * from "./Skills.ts"
