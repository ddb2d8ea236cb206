import type { SessionRun } from "./SessionStore.ts"

/** Whether two runs are the same claim: one process (pid on a host) from one start; a later claim by it is another. */
export const sameClaim = (a: SessionRun, b: SessionRun): boolean => a.pid === b.pid && a.host === b.host && a.time.started === b.time.started
