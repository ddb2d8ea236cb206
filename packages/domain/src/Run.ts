/**
 * A lease on a session (T5, issue 27): which process runs a turn of it, until when, and under which
 * epoch. Another process that wants to talk to the session queues its message for this run instead
 * of starting a second loop. Liveness is `time.expires` in database time, never the pid.
 */
export interface SessionRun {
  readonly sessionID: string
  /** Who holds the lease: unique per process start ("<host>/<pid>/<random hex>"); "" once released. */
  readonly holder: string
  /** The machine's hostname, for messages. */
  readonly host: string
  /** The holder's pid, for messages only (never for liveness: it may be another machine's, or reused). */
  readonly pid: number
  /** Grows by one with every claim of the session: a write under an older epoch was taken over. */
  readonly epoch: number
  /** Database time, ms: when this claim was made, and when it lapses unless renewed. */
  readonly time: { readonly started: number; readonly expires: number }
  /** Messages queued for this run since it claimed the session; -1: a claim that takes none (a compaction). */
  readonly queued: number
  /** Whether an abort of the running turn was requested (by any process); the holder interrupts it. */
  readonly abort: boolean
}
