export * from "./Bwrap.ts"
export * from "./Env.ts"
export * from "./Profile.ts"
export * from "./Sandbox.ts"
