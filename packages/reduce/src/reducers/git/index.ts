import type { Reducer } from "../../Reducer.ts"
import { gitDiff } from "./diff.ts"
import { gitLog } from "./log.ts"
import { gitStatus } from "./status.ts"

export { gitDiff } from "./diff.ts"
export { gitLog } from "./log.ts"
export { gitStatus } from "./status.ts"

/** git status / diff / log reducers; diff before log so `git log -p` is read as patches. */
export const gitReducers: ReadonlyArray<Reducer> = [gitStatus, gitDiff, gitLog]
