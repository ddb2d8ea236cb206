import { Duration } from "effect"

/**
 * The cluster's timings as reins tunes them. The library's defaults (a 1-minute health check, 35-second shard
 * locks) made a killed runner's sessions wait ~37 s for a new owner; these bring it to a few seconds, and each
 * has a price:
 * - `healthCheckMs`: how often the health-check singleton pings every runner. A dead runner is noticed within one
 *   interval (plus the ping's timeout). Costs one small RPC per runner per interval from the singleton's host.
 * - `lockRefreshMs` / `lockExpiryMs`: each runner refreshes its shards' locks every `lockRefreshMs`; a runner that
 *   stops refreshing (frozen, cut off) loses them after `lockExpiryMs`. This bounds failover when the health check
 *   itself died with its host, and when a runner is frozen. Costs one PostgreSQL round trip per refresh per runner;
 *   a pause longer than the expiry (a long GC, SIGSTOP, a VM migration) hands the runner's sessions over, and the
 *   fence then refuses everything the paused runner writes when it wakes.
 * - `pollMs`: how often a runner reads persisted messages it has not yet processed (a prompt stored while its owner
 *   was moving). Costs one query per runner per interval.
 * - `assignmentsMs`: how often a runner re-reads which runner holds which shard. Costs one query per interval.
 */
export interface ClusterTiming {
  readonly healthCheckMs: number
  readonly lockRefreshMs: number
  readonly lockExpiryMs: number
  readonly pollMs: number
  readonly assignmentsMs: number
}

/** reins's defaults: failover in about 3–5 s after a kill, at most `lockExpiryMs` + 2 s when the health check's host dies or a runner is frozen. */
export const defaultTiming: ClusterTiming = {
  healthCheckMs: 1_000,
  lockRefreshMs: 2_000,
  lockExpiryMs: 8_000,
  pollMs: 1_000,
  assignmentsMs: 1_000
}

/** A timing a user gave is refused when it cannot work: every value positive, and the locks refreshed well before they expire. */
export const checkTiming = (timing: ClusterTiming): string | undefined => {
  for (const [name, value] of Object.entries(timing)) {
    if (!Number.isFinite(value) || value <= 0) return `cluster timing ${name} must be a positive number of milliseconds, got ${value}`
  }
  if (timing.lockRefreshMs * 2 > timing.lockExpiryMs)
    return `cluster timing lockExpiryMs (${timing.lockExpiryMs}) must be at least twice lockRefreshMs (${timing.lockRefreshMs}): a single slow refresh would otherwise hand every session over`
  return undefined
}

/** The sharding settings for a timing. */
export const shardingTimings = (timing: ClusterTiming) => ({
  runnerHealthCheckInterval: Duration.millis(timing.healthCheckMs),
  shardLockRefreshInterval: Duration.millis(timing.lockRefreshMs),
  shardLockExpiration: Duration.millis(timing.lockExpiryMs),
  entityMessagePollInterval: Duration.millis(timing.pollMs),
  refreshAssignmentsInterval: Duration.millis(timing.assignmentsMs)
})
