import { Duration } from "effect"

/**
 * The cluster's timings as reins tunes them. The library's defaults (a 1-minute health check, 35-second shard
 * locks) made a killed runner's sessions wait ~37 s for a new owner; these bring it to a few seconds, and each
 * has a price:
 * - `healthCheckMs`: how often the health-check singleton pings every runner. A dead runner is noticed within one
 *   interval (plus the ping's timeout). Costs one small RPC per runner per interval from the singleton's host.
 * - `lockRefreshMs` / `lockExpiryMs`: each runner refreshes its shards' locks every `lockRefreshMs` (the library
 *   uses at most a third of the expiry), and that interval is also each refresh's deadline: a runner whose database
 *   or event loop stalls longer than it gives all its shards up (its running turns are stopped and move). A runner
 *   that stops refreshing (frozen, cut off) loses its shards after `lockExpiryMs`: this bounds failover when the
 *   health check died with its host, and when a runner is frozen; the fence then refuses everything the paused
 *   runner writes when it wakes. A killed runner's locks go at once (PostgreSQL frees a closed connection's advisory
 *   locks), so a kill is bounded by the health check, not the expiry. Costs one PostgreSQL round trip per refresh.
 * - `pollMs`: how often a runner reads persisted messages it has not yet processed (a prompt stored while its owner
 *   was moving). Costs one query per runner per interval.
 * - `assignmentsMs`: how often a runner re-reads which runner holds which shard. Costs one query per interval.
 * - `handOffMs`: how long a session's running turn may go on when its runner stops (SIGTERM) or gives its shard up
 *   (a runner joined) before it is stopped and its prompt handed to the next owner, which resumes it. A turn that ends
 *   within it is not moved; a longer one waits this long more before it goes on elsewhere (the library's default is
 *   15 s, Kubernetes' grace period).
 */
export interface ClusterTiming {
  readonly healthCheckMs: number
  readonly lockRefreshMs: number
  readonly lockExpiryMs: number
  readonly pollMs: number
  readonly assignmentsMs: number
  readonly handOffMs: number
}

/**
 * reins's defaults: a killed runner's sessions move in under 2 s (the health check, or any runner's sweep when the
 * runner killed ran the health check, sees its connections gone: Health.ts); a frozen runner's within
 * `lockExpiryMs` + 2 s (about 11 s); a
 * stall of the database or the event loop under 3 s moves nothing. (The library's own: a 1-minute health check, 10 s
 * refresh and 35 s expiry: ~37 s after a kill.) A shorter expiry moves sessions sooner after a freeze and turns
 * shorter stalls into handoffs.
 */
export const defaultTiming: ClusterTiming = {
  healthCheckMs: 1_000,
  lockRefreshMs: 3_000,
  lockExpiryMs: 9_000,
  pollMs: 1_000,
  assignmentsMs: 1_000,
  handOffMs: 5_000
}

/** A timing a user gave is refused when it cannot work: every value positive, and the locks refreshed well before they expire. */
export const checkTiming = (timing: ClusterTiming): string | undefined => {
  for (const [name, value] of Object.entries(timing)) {
    if (!Number.isFinite(value) || value <= 0) return `cluster timing ${name} must be a positive number of milliseconds, got ${value}`
  }
  if (timing.lockRefreshMs * 3 > timing.lockExpiryMs)
    return `cluster timing lockExpiryMs (${timing.lockExpiryMs}) must be at least 3 times lockRefreshMs (${timing.lockRefreshMs}): the locks are refreshed at most every third of their expiry, so a longer refresh is not used and a runner would be timed against a shorter deadline than you set`
  return undefined
}

/** The sharding settings for a timing. */
export const shardingTimings = (timing: ClusterTiming) => ({
  runnerHealthCheckInterval: Duration.millis(timing.healthCheckMs),
  shardLockRefreshInterval: Duration.millis(timing.lockRefreshMs),
  shardLockExpiration: Duration.millis(timing.lockExpiryMs),
  entityMessagePollInterval: Duration.millis(timing.pollMs),
  refreshAssignmentsInterval: Duration.millis(timing.assignmentsMs),
  entityTerminationTimeout: Duration.millis(timing.handOffMs)
})
