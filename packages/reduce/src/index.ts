export * from "./Reducer.ts"
export * from "./Registry.ts"
export * as Text from "./Text.ts"
export { headTail } from "./reducers/headTail.ts"
