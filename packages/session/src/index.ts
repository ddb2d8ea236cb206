export * from "./DoomLoop.ts"
export * from "./Prompt.ts"
export * from "./Processor.ts"
export * from "./SessionService.ts"
