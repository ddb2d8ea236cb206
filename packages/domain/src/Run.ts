/**
 * The process running a turn of a session (T5). Another process that wants to talk to the session
 * queues its message for this run instead of starting a second loop.
 */
export interface SessionRun {
  readonly sessionID: string
  readonly pid: number
  /** The machine's hostname: a pid means something only there. */
  readonly host: string
  readonly time: { readonly started: number; readonly heartbeat: number }
  /** Messages queued for this run since it claimed the session; -1: a claim that takes none (a compaction). */
  readonly queued: number
}

/** Whether a stored run still holds its session (its process is alive, its heartbeat recent). */
export type RunIsLive = (run: SessionRun) => boolean
