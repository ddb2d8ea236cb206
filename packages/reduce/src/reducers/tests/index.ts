import type { Reducer } from "../../Reducer.ts"

/** Test-runner reducers, most specific first. */
export const testReducers: ReadonlyArray<Reducer> = []
