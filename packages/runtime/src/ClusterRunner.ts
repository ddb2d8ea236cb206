import {
  clusterOnPostgres,
  type ClusterTiming,
  type ClusterTls,
  defaultTiming,
  type Failure,
  parseRunnerAddress,
  sessionClient,
  SessionOwner
} from "@reins/cluster"
import { leaseWatchdogLayer } from "./LeaseWatchdog.ts"
import { Permission } from "@reins/permission"
import { EventAppender, RouteError, SessionRouting, Sessions, endReason, lostClaim, sessionRoot } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { ConfigError, realPath } from "@reins/domain"
import { Cause, Effect, Exit, Fiber, Layer, Predicate, Result } from "effect"

/** `reins serve --runner HOST:PORT`: this process joins the cluster of runners on its PostgreSQL database. */
export interface ClusterOptions {
  /** The address the other runners reach this one at. */
  readonly runner: string
  readonly timing?: ClusterTiming
  /**
   * The secret every runner signs its frames to the others with (`REINS_CLUSTER_SECRET`; the same on every runner,
   * at least 16 characters): a connection without it is closed before anything it sent is read.
   */
  readonly secret: string
  /** Mutual TLS between the runners (`REINS_CLUSTER_TLS_CERT`, `_KEY`, `_CA`: PEM files): their traffic encrypted too. */
  readonly tls?: ClusterTls
}

/** A cluster runner that cannot start as asked (its address, its database, its port): what to change, as a setting's error. */
const setupError = (flag: "--runner" | "--database" | "REINS_CLUSTER_SECRET", problem: string) => new ConfigError({ file: flag, field: "", problem })

/** The one line a failed turn or use case leaves in a reply (the event log has the rest). */
const said = (error: unknown) => (Predicate.hasProperty(error, "message") && typeof error.message === "string" ? error.message : String(error))

/** A use case's error as a reply carries it: its tag and reason, for the node that took the request to answer as it would. */
const failureOf = (error: unknown): Failure => ({
  tag: Predicate.hasProperty(error, "_tag") ? String(error._tag) : "Defect",
  ...(Predicate.hasProperty(error, "reason") && typeof error.reason === "string" ? { reason: error.reason } : {}),
  message: said(error)
})

/**
 * The session's use cases on the runner that owns it, over this runtime's `Sessions`: a prompt starts a turn (or
 * goes into the running one) under the message id the node that took it chose, and a started turn is awaited, so a
 * runner dying mid-turn leaves the prompt unanswered and the cluster delivers it again to the next owner, which
 * resumes the turn (`PromptInput.requestID`). A turn's end goes on the event log (`turn.finished`, `turn.failed`)
 * for the clients of every node. Failures go into the replies.
 */
export const sessionOwnerLayer = (directory: string) =>
  Layer.effect(
    SessionOwner,
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const permission = yield* Permission
      const appender = yield* EventAppender
      const store = yield* SessionStore
      const project = realPath(directory)
      /** A session of another project on the same database is not this cluster's to run (its directory, rules and tools are another server's). */
      const ofProject = (sessionID: string) =>
        store.getSession(sessionID).pipe(
          Effect.flatMap((session) =>
            realPath(session.directory) === project
              ? Effect.void
              : Effect.fail({
                  _tag: "StoreError",
                  reason: "not-found",
                  message: `Session ${sessionID} belongs to another project (${session.directory}); the runners of this cluster serve ${directory}. Give each project a database of its own.`
                })
          )
        )
      return SessionOwner.of({
        prompt: (payload) =>
          // interruptible only while it waits for the turn: an interrupt between the send and the wait would leave the turn running
          Effect.uninterruptibleMask((restore) =>
            Effect.gen(function* () {
              yield* ofProject(payload.sessionID)
              const sent = yield* sessions.send({
                sessionID: payload.sessionID,
                text: payload.text,
                model: payload.model,
                requestID: payload.promptID,
                // this runner owns the session by its shard lock: a live lease is one a dead or frozen runner lost
                takeOver: true,
                ...(payload.agent !== undefined ? { agent: payload.agent } : {})
              })
              if (sent._tag === "queued") return { outcome: "queued" as const, messageID: sent.messageID }
              // the handler interrupted (the session moves to another runner, or this one stops): the turn stops too, marked
              // interrupted, which the next owner resumes rather than takes as answered
              const exit = yield* restore(Fiber.await(sent.turn)).pipe(Effect.onInterrupt(() => Fiber.interrupt(sent.turn)))
              // taken over by the runner that owns the session now: nothing more from here (no reply: the prompt is its)
              if (lostClaim(exit)) return yield* Effect.interrupt
              // its end on the event log, as a server tells the turns it starts; an answer given again (`steps` 0) is told
              // again too, as the first telling may have been lost with its runner (clients tell them apart by the message)
              const failed = endReason(exit)
              if (Exit.isSuccess(exit) || failed === undefined) {
                if (Exit.isSuccess(exit)) yield* appender.offer({ type: "turn.finished", result: exit.value })
                return { outcome: "finished" as const, ...(Exit.isSuccess(exit) ? { result: exit.value } : {}) }
              }
              yield* appender.offer({ type: "turn.failed", sessionID: payload.sessionID, error: failed })
              const error = Cause.findErrorOption(exit.cause)
              return { outcome: "finished" as const, error: failed.message, failure: error._tag === "Some" ? failureOf(error.value) : failed }
            })
          ).pipe(Effect.catch((error) => Effect.succeed({ outcome: "finished" as const, error: said(error), failure: failureOf(error) }))),
        abort: (sessionID) =>
          ofProject(sessionID).pipe(
            Effect.andThen(sessions.abort(sessionID)),
            Effect.map((aborted) => aborted !== "idle"),
            Effect.orElseSucceed(() => false)
          ),
        reply: (input) => permission.reply(input.questionID, { reply: input.reply, ...(input.message !== undefined ? { message: input.message } : {}) }),
        summarize: (sessionID, model) =>
          ofProject(sessionID).pipe(
            Effect.andThen(sessions.compact({ sessionID, model })),
            Effect.map((result) => ({ summarized: true, result })),
            Effect.catch((error) => Effect.succeed({ summarized: false, error: said(error), failure: failureOf(error) }))
          )
      })
    })
  )

/**
 * `SessionRouting` through the cluster from this runner (`self`): each use case goes as a `Session` entity message
 * to the runner owning the session (this one, or another); a message the cluster could not deliver is a
 * `RouteError` saying to try again.
 */
export const sessionRoutingLayer = (self: string) =>
  Layer.effect(
    SessionRouting,
    Effect.gen(function* () {
      const client = yield* sessionClient
      const store = yield* SessionStore
      const routeError = (sessionID: string) => (error: { readonly message: string }) => new RouteError({ sessionID, message: error.message })
      /** The entity a session's messages go to: its tree's top-level session (a sub-agent's session runs where its parent does). */
      const entityOf = (sessionID: string) =>
        store.getSession(sessionID).pipe(
          Effect.flatMap((session) => sessionRoot(store, session)),
          Effect.mapError(routeError(sessionID))
        )
      const payload = (input: Parameters<SessionRouting["Service"]["prompt"]>[0]) => ({
        sessionID: input.sessionID,
        promptID: input.requestID,
        text: input.text,
        model: input.model,
        ...(input.agent !== undefined ? { agent: input.agent } : {})
      })
      return SessionRouting.of({
        self,
        prompt: (input) =>
          Effect.flatMap(entityOf(input.sessionID), (entity) => Effect.mapError(client.prompt(entity, payload(input)), routeError(input.sessionID))),
        post: (input) =>
          Effect.flatMap(entityOf(input.sessionID), (entity) => Effect.mapError(client.post(entity, payload(input)), routeError(input.sessionID))),
        abort: (sessionID) => Effect.flatMap(entityOf(sessionID), (entity) => Effect.mapError(client.abort(entity, sessionID), routeError(sessionID))),
        compact: (sessionID, model) =>
          Effect.flatMap(entityOf(sessionID), (entity) =>
            client.summarize(entity, sessionID, model).pipe(
              Effect.mapError(routeError(sessionID)),
              // a runner of the release before says no cost
              Effect.map(({ result, ...done }) => (result === undefined ? done : { ...done, result: { ...result, cost: result.cost ?? 0 } }))
            )
          )
      })
    })
  )

/**
 * This runtime as a runner of the cluster on the PostgreSQL database at `database` (`--database postgres://…`):
 * the `Session` entity, handled by `sessionOwnerLayer`, and `SessionRouting` to every session's owner for the front
 * ends. The runtime's leases must name the runner (`LeaseHolder`, `asRunner`).
 */
export const clusterRunnerLayer = (options: ClusterOptions, database: string | undefined, directory: string) => {
  const address = parseRunnerAddress(options.runner)
  if (Result.isFailure(address)) return Layer.effectDiscard(Effect.fail(setupError("--runner", address.failure)))
  if (database === undefined || !/^postgres(ql)?:\/\//.test(database))
    return Layer.effectDiscard(
      Effect.fail(
        setupError(
          "--database",
          "a cluster runner keeps its sessions and the cluster's state in PostgreSQL: give --database postgres://… (or REINS_DATABASE_URL), the same for every runner."
        )
      )
    )
  const where = options.runner.trim()
  if (options.secret.length < 16)
    return Layer.effectDiscard(
      Effect.fail(
        setupError(
          "REINS_CLUSTER_SECRET",
          "runners sign their traffic with a shared secret of at least 16 characters: set REINS_CLUSTER_SECRET, the same on every runner (e.g. the output of openssl rand -hex 32)."
        )
      )
    )
  const timing = options.timing ?? defaultTiming
  const security = { secret: options.secret, ...(options.tls !== undefined ? { tls: options.tls } : {}) }
  const runner = clusterOnPostgres({ address: address.success, database, timing, security }).pipe(
    Layer.provide(sessionOwnerLayer(directory)),
    // half the shard locks' expiry: a frozen runner's commands are killed before its sessions can move
    Layer.provideMerge(leaseWatchdogLayer(timing.lockExpiryMs / 2))
  )
  return sessionRoutingLayer(where).pipe(
    Layer.provideMerge(runner),
    Layer.catchCause((cause) => {
      const error = Cause.findErrorOption(cause)
      // a defect or an interrupt, not a typed failure: as it is
      if (error._tag === "None") return Layer.effectDiscard(Effect.failCause(cause as unknown as Cause.Cause<never>))
      const failure = error.value
      return Layer.effectDiscard(
        Effect.fail(
          failure._tag === "SocketServerError"
            ? setupError("--runner", `this runner cannot listen on ${where} (${said(failure)}): give an address of this machine with a free port.`)
            : setupError(
                "--database",
                `the cluster's tables in PostgreSQL could not be used (${said(failure)}); check the URL, and that every runner uses the same one.`
              )
        )
      )
    })
  )
}
