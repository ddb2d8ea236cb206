import type { Reducer } from "../../Reducer.ts"

/** Build-diagnostic reducers (compilers, linters). */
export const buildReducers: ReadonlyArray<Reducer> = []
