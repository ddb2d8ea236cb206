import { layerDigest } from "@effect/platform-node-shared/NodeCrypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Entity from "effect/cluster/Entity"
import type { RunnerAddress } from "effect/cluster/RunnerAddress"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Rpc from "effect/rpc/Rpc"
import * as Health from "./Health.ts"
import { formatRunnerAddress } from "./RunnerAddress.ts"
import { SessionEntity } from "./SessionEntity.ts"
import { SessionOwner } from "./SessionOwner.ts"
import { clientProtocol, socketServer } from "./Sockets.ts"
import { type ClusterTiming, checkTiming, defaultTiming, shardingTimings } from "./Timing.ts"
import { serializationLayer, type TransportSecurity } from "./Transport.ts"

/** How this process joins the cluster. */
export interface RunnerOptions {
  /** The address the other runners reach this one at (it is stored with the shard assignments). */
  readonly address: RunnerAddress
  /** Where to listen, when it differs from `address` (behind NAT, or 0.0.0.0 in a container). */
  readonly listen?: RunnerAddress
  readonly timing?: ClusterTiming
  /** The secret the runners sign their frames with (none: plain frames, for a test). */
  readonly security?: TransportSecurity
}

/**
 * The timing a runner uses: the one given (refused, as a defect naming what is wrong, when it cannot work; a
 * front end checks it first with `checkTiming` to say so as an error) or the defaults.
 */
const timingOf = (timing: ClusterTiming | undefined) => {
  const chosen = timing ?? defaultTiming
  const wrong = checkTiming(chosen)
  if (wrong !== undefined) throw new Error(wrong)
  return chosen
}

/**
 * What a runner and a client both stand on: the persisted messages and the runners' table in the SQL database
 * (PostgreSQL's advisory locks for the shards), `config`, and schema-encoded binary frames between runners (signed
 * with the secret when there is one).
 */
const onSqlStorage = <A, E, R>(member: Layer.Layer<A, E, R>, config: Partial<ShardingConfig.ShardingConfig["Service"]>, security: TransportSecurity) =>
  member.pipe(
    Layer.provideMerge(SqlMessageStorage.layer.pipe(Layer.provide(layerDigest))),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    Layer.provide(ShardingConfig.layer(config)),
    Layer.provide(serializationLayer(security))
  )

/**
 * A runner of the cluster over the SQL database it is given (PostgreSQL: the shard locks are advisory locks, the
 * persisted messages and the runners are `cluster_*` tables beside the sessions): listens for the other runners on
 * `address`, takes its share of the shards, pings the others from the health-check singleton. Runner-to-runner
 * messages are schema-encoded binary frames over TCP.
 */
export const runnerLayer = (options: RunnerOptions) => {
  const tls = options.security?.tls
  const client = clientProtocol(tls)
  return onSqlStorage(
    SocketRunner.layer.pipe(
      Layer.provide([socketServer(tls), client]),
      Layer.provide(Health.layer.pipe(Layer.provide(Runners.layerRpc), Layer.provide(client))),
      Layer.merge(Health.sweepLayer.pipe(Layer.provide(Runners.layerRpc), Layer.provide(client)))
    ),
    {
      runnerAddress: Option.some(options.address),
      runnerListenAddress: options.listen === undefined ? Option.none() : Option.some(options.listen),
      ...shardingTimings(timingOf(options.timing))
    },
    options.security ?? {}
  )
}

/**
 * The `Session` entity on this runner: each message routed here is handed to the `SessionOwner`, and its reply
 * names this runner. Every handler is forked: a prompt, an abort or a reply never waits behind the turn running.
 */
export const sessionEntityLayer = SessionEntity.toLayer(
  Effect.gen(function* () {
    const owner = yield* SessionOwner
    const runner = formatRunnerAddress(yield* Entity.CurrentRunnerAddress)
    return SessionEntity.of({
      Prompt: ({ payload }) => Rpc.fork(Effect.map(owner.prompt(payload), (reply) => ({ ...reply, runner }))),
      Abort: ({ payload }) => Rpc.fork(Effect.map(owner.abort(payload.sessionID), (aborted) => ({ aborted, runner }))),
      Reply: ({ payload }) => Rpc.fork(Effect.map(owner.reply(payload), (answered) => ({ answered, runner }))),
      Summarize: ({ payload }) => Rpc.fork(Effect.map(owner.summarize(payload.sessionID, payload.model), (done) => ({ ...done, runner })))
    })
  })
)

/**
 * A member of the cluster that runs no entity: it sends messages to the runners (through the same database and
 * their sockets) and reads their replies. For tools and tests; every `reins serve` of a cluster is a full runner.
 */
export const clientLayer = (timing: ClusterTiming = defaultTiming, security: TransportSecurity = {}) =>
  onSqlStorage(
    SocketRunner.layerClientOnly.pipe(Layer.provide(clientProtocol(security.tls))),
    {
      runnerAddress: Option.none(),
      ...shardingTimings(timingOf(timing))
    },
    security
  )

/** A runner with the `Session` entity on it: what `reins serve --runner` joins. */
export const clusterLayer = (options: RunnerOptions) => sessionEntityLayer.pipe(Layer.provideMerge(runnerLayer(options)))

/** A pool on the PostgreSQL database at `url` for the cluster's own tables and locks (beside the session store's pool), named after the runner. */
const postgres = (url: string, name: string) =>
  PgClient.layer({ url: Redacted.make(url), applicationName: name, connectTimeout: "10 seconds" }).pipe(Layer.provide(Reactivity.layer))

/** `clusterLayer` on the PostgreSQL database at `database`: what a `reins serve --runner` process runs. */
export const clusterOnPostgres = (options: RunnerOptions & { readonly database: string }) =>
  clusterLayer(options).pipe(Layer.provide(postgres(options.database, Health.runnerApplicationName(options.address))))

/** `clientLayer` on the PostgreSQL database at `database`. */
export const clientOnPostgres = (database: string, timing?: ClusterTiming, security?: TransportSecurity) =>
  clientLayer(timing, security).pipe(Layer.provide(postgres(database, "reins-cluster-client")))
