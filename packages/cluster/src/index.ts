// Every import of effect/cluster, effect/rpc and the runners' socket transport is in this package (issue 28).
export { parseRunnerAddress, formatRunnerAddress } from "./RunnerAddress.ts"
export { type ClusterTiming, checkTiming, defaultTiming } from "./Timing.ts"
export {
  Abort,
  Compacted,
  Failure,
  ModelPayload,
  Prompt,
  type PromptPayload,
  type PromptReply,
  Reply,
  SessionEntity,
  Summarize,
  type SummarizeReply
} from "./SessionEntity.ts"
export { SessionOwner } from "./SessionOwner.ts"
export { sessionClient, Unreachable } from "./SessionClient.ts"
export { type ClusterTls, signed, type TransportSecurity } from "./Transport.ts"
export { clientLayer, clientOnPostgres, clusterLayer, clusterOnPostgres, runnerLayer, type RunnerOptions, sessionEntityLayer } from "./Runner.ts"
/** For tests of a cluster: fresh databases, settled shards, free ports, runner processes' lines. */
export * as ClusterTesting from "./Testing.ts"
