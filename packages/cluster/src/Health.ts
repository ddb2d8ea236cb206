import { Duration, Effect, Layer, Schedule } from "effect"
import type { RunnerAddress } from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import { RunnerStorage } from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import { SqlClient } from "effect/sql/SqlClient"
import { formatRunnerAddress } from "./RunnerAddress.ts"

/** What the application name of a runner's connections to PostgreSQL starts with (the runner's HOST:PORT follows). */
export const RUNNER_APPLICATION_PREFIX = "reins-runner "

/** The application name a runner's connections to PostgreSQL carry (its pool is named after it). */
export const runnerApplicationName = (address: RunnerAddress) => `${RUNNER_APPLICATION_PREFIX}${formatRunnerAddress(address)}`

/**
 * That name as PostgreSQL shows it: cut to 63 bytes (a long host name's end is lost). Two runners whose names agree
 * in their first 63 bytes look connected while either is: the patient check then decides, never a false death.
 */
const shownName = (address: RunnerAddress) => {
  const bytes = new TextEncoder().encode(runnerApplicationName(address))
  return bytes.length <= 63 ? runnerApplicationName(address) : new TextDecoder().decode(bytes.subarray(0, 63)).replace(/\uFFFD$/, "")
}

/** The application names of every connection to this database now; undefined when PostgreSQL cannot be asked. */
const connectedNames = (sql: SqlClient) =>
  sql.unsafe<{ readonly name: string }>("SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = current_database()").pipe(
    Effect.map((rows) => new Set(rows.map((row) => row.name))),
    Effect.orElseSucceed(() => undefined)
  )

/** Whether no connection to the database names the runner at `address` (`names`: those connected now); never when PostgreSQL could not be asked. */
const disconnected = (names: ReadonlySet<string> | undefined, address: RunnerAddress) => names !== undefined && !names.has(shownName(address))

/**
 * How the health-check singleton decides that a runner is dead, which moves its shards (and sessions) to the others.
 * The library's ping check retries a failed ping 5 times, 500 ms apart: a killed runner was noticed 3–4 s after its
 * death. Here a runner that does not answer one ping and has no connection left to the database is dead at once:
 * PostgreSQL closed its connections, which the kernel does when a process dies (kill -9, a crash, OOM) — and with
 * them its shard locks, so nothing is still holding its sessions. A runner with a connection (frozen, its network to
 * the other runners cut, busy) gets the library's patient check; so does any runner while the database cannot be
 * asked (a restart of PostgreSQL must not make every runner look dead).
 */
export const layer = Layer.effect(
  RunnerHealth.RunnerHealth,
  Effect.gen(function* () {
    const runners = yield* Runners.Runners
    const sql = yield* SqlClient
    const answers = (address: RunnerAddress) => runners.ping(address).pipe(Effect.timeout("10 seconds"))
    const patient = (address: RunnerAddress) => answers(address).pipe(Effect.retry({ times: 4, schedule: Schedule.spaced(500) }), Effect.isSuccess)
    return RunnerHealth.RunnerHealth.of({
      isAlive: (address) =>
        Effect.gen(function* () {
          if (yield* Effect.isSuccess(answers(address))) return true
          if (disconnected(yield* connectedNames(sql), address)) return false
          return yield* patient(address)
        })
    })
  })
)

/**
 * Every runner, not only the health check's host, marks a dead runner unhealthy: one that no connection to the
 * database names and that does not answer a ping (its process is gone). Without it a kill of the runner running
 * the health-check singleton moved nothing until the shard locks expired (the singleton's own shard was the dead
 * runner's); with it that kill costs what any other does. One query a runner per health-check interval.
 */
export const sweepLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const runners = yield* Runners.Runners
    const storage = yield* RunnerStorage
    const sql = yield* SqlClient
    const config = yield* ShardingConfig.ShardingConfig
    const self = config.runnerAddress._tag === "Some" ? config.runnerAddress.value : undefined
    const sweep = Effect.gen(function* () {
      const names = yield* connectedNames(sql)
      if (names === undefined) return
      for (const [runner, healthy] of yield* storage.getRunners) {
        if (!healthy || (self !== undefined && formatRunnerAddress(runner.address) === formatRunnerAddress(self))) continue
        if (!disconnected(names, runner.address)) continue
        if (yield* Effect.isSuccess(runners.ping(runner.address).pipe(Effect.timeout("2 seconds")))) continue
        yield* Effect.logInfo(`Runner ${formatRunnerAddress(runner.address)} is gone (no connection to the database, no answer): its sessions move.`)
        yield* storage.setRunnerHealth(runner.address, false)
      }
    }).pipe(Effect.catchCause(() => Effect.void))
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(Duration.fromInputUnsafe(config.runnerHealthCheckInterval))))
  })
)
