import { Context } from "effect"
import type { Reducer } from "./Reducer.ts"
import { buildReducers } from "./reducers/build/index.ts"
import { gitReducers } from "./reducers/git/index.ts"
import { headTail } from "./reducers/headTail.ts"
import { testReducers } from "./reducers/tests/index.ts"

/** The built-in reducers in the order they are tried; head_tail is the fallback. */
export const builtinReducers: ReadonlyArray<Reducer> = [...testReducers, ...gitReducers, ...buildReducers, headTail]

/**
 * The reducers in use, tried in order. The runtime puts user reducers (its `reducers` option)
 * before the built-ins so theirs win.
 */
export const Reducers = Context.Reference<ReadonlyArray<Reducer>>("reins/reduce/Reducers", {
  defaultValue: () => builtinReducers
})
