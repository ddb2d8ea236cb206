export * from "./Keys.ts"
export * from "./ProcessTree.ts"
export * from "./Pty.ts"
