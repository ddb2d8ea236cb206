import type { Reducer } from "../../Reducer.ts"

/** git status / diff / log reducers. */
export const gitReducers: ReadonlyArray<Reducer> = []
