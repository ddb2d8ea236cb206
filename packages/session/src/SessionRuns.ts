import { Context, Deferred, Effect, Exit, Layer, Option } from "effect"
import type { SessionRun, TurnResult } from "@reins/domain"
import { RunClaims, WritingClaim, type StoreError } from "@reins/storage"
import type { PromptError } from "./Errors.ts"
import { EventAppender } from "./EventAppender.ts"
import { LeaseHolder, RunSettings, heartbeat, lostClaim, type RunOwner } from "./Runs.ts"

/**
 * This process's hold on a session: its lease once claimed; for a turn, where joiners wait for its
 * result; `abort`, done to interrupt the body; and `released`, done once the session is free again here.
 */
export interface Holder {
  run?: SessionRun
  readonly result?: Deferred.Deferred<TurnResult, PromptError>
  readonly abort: Deferred.Deferred<void>
  readonly released: Deferred.Deferred<void>
}

/** What `hold` did: ran its body holding the session, or found it held here or by another process. */
export type Held<A> =
  | { readonly _tag: "ran"; readonly value: A }
  | { readonly _tag: "here"; readonly holder: Holder }
  | { readonly _tag: "held"; readonly held: SessionRun }

/** Where `abort` found the session's turn: interrupted here, asked of the process holding it, or none running. */
export type Aborted = "here" | "elsewhere" | "idle"

type Claimed = { readonly _tag: "claimed"; readonly run: SessionRun; readonly holder: Holder } | Exclude<Held<never>, { _tag: "ran" }>

/**
 * The leases of running sessions (T5, issue 27): this process's holds, by session, and the lease in
 * the store that other processes see, renewed by a heartbeat while a body runs.
 */
export class SessionRuns extends Context.Service<
  SessionRuns,
  {
    readonly self: RunOwner
    /** This process's hold on the session, if any: a prompt joins its turn or waits for `released`. */
    current(sessionID: string): Holder | undefined
    /** The live lease of another process on the session, if any (one of this process's is not "elsewhere"). */
    elsewhere(sessionID: string): Effect.Effect<SessionRun | undefined, StoreError>
    /**
     * Interrupts the session's turn: the one held here at once (as Ctrl+C would: running tools are
     * stopped and the turn is recorded as interrupted), or asks the process holding it, whose turn
     * is interrupted within a second; "idle" when no lease is live.
     */
    abort(sessionID: string): Effect.Effect<Aborted, StoreError>
    /**
     * Claims the session (uninterruptibly: the hold is registered before the lease is taken, and
     * released whatever happens), runs `use` holding it with a heartbeat racing it, then releases
     * the lease and tells joiners. `turn` (a turn's result Deferred) lets queued messages join; a
     * hold without one (a compaction) refuses them. The heartbeat ends the body with a
     * "taken-over" error once another process took the session over, and interrupts it when an
     * abort is requested; every write of the body checks the lease too (WritingClaim, the fence).
     */
    hold<A, E, R>(
      sessionID: string,
      turn: Deferred.Deferred<TurnResult, PromptError> | undefined,
      use: (run: SessionRun) => Effect.Effect<A, E, R>,
      /** `takeOver`: claim even from another holder's live lease (`ClaimRequest.takeOver`; a cluster runner's turn). */
      options?: { readonly takeOver?: boolean }
    ): Effect.Effect<Held<A>, E | StoreError, R>
  }
>()("reins/session/SessionRuns") {
  static readonly layer = Layer.effect(
    SessionRuns,
    Effect.gen(function* () {
      const claims = yield* RunClaims
      const timing = yield* RunSettings
      const self = yield* LeaseHolder
      const running = new Map<string, Holder>()

      const free = (sessionID: string, holder: Holder) =>
        Effect.suspend(() => {
          // A joiner may have started the next turn once this one released the session.
          if (running.get(sessionID) === holder) running.delete(sessionID)
          return Deferred.succeed(holder.released, undefined)
        })

      const claim = (sessionID: string, turn: Holder["result"], takeOver: boolean): Effect.Effect<Claimed, StoreError> =>
        Effect.gen(function* () {
          const here = running.get(sessionID)
          if (here) return { _tag: "here", holder: here } as const
          const holder: Holder = { released: yield* Deferred.make<void>(), abort: yield* Deferred.make<void>(), ...(turn ? { result: turn } : {}) }
          running.set(sessionID, holder)
          const claimed = yield* claims
            .claim({ sessionID, holder: self.holder, host: self.host, pid: self.pid, takesMessages: turn !== undefined, ttlMs: timing.ttlMs, takeOver })
            .pipe(Effect.onError(() => free(sessionID, holder)))
          if (claimed._tag === "held") {
            yield* free(sessionID, holder)
            return { _tag: "held", held: claimed.run } as const
          }
          holder.run = claimed.run
          return { _tag: "claimed", run: claimed.run, holder } as const
        })

      // Ends (by interrupting itself, so the race interrupts the body) once an abort is asked here or elsewhere.
      const watch = (run: SessionRun, holder: Holder) =>
        Effect.raceFirst(heartbeat(claims, run, timing), Deferred.await(holder.abort)).pipe(Effect.andThen(Effect.interrupt))

      const hold = <A, E, R>(
        sessionID: string,
        turn: Holder["result"],
        use: (run: SessionRun) => Effect.Effect<A, E, R>,
        options?: { readonly takeOver?: boolean }
      ) =>
        Effect.acquireUseRelease(
          claim(sessionID, turn, options?.takeOver === true),
          (claimed): Effect.Effect<Held<A>, E | StoreError, R> =>
            claimed._tag !== "claimed"
              ? Effect.succeed(claimed)
              : Effect.raceFirst(use(claimed.run), watch(claimed.run, claimed.holder)).pipe(
                  Effect.map((value) => ({ _tag: "ran", value }) as const),
                  Effect.provideService(WritingClaim, claimed.run)
                ),
          (claimed, exit) =>
            claimed._tag !== "claimed"
              ? Effect.void
              : Effect.gen(function* () {
                  // what the body published under the lease (an interrupted turn's closing parts, in the appender's
                  // batch) is logged while the lease is still its own: after the release the fence refuses it
                  const appender = yield* Effect.serviceOption(EventAppender)
                  if (Option.isSome(appender)) yield* appender.value.flush
                  yield* claims.release(claimed.run, Number.MAX_SAFE_INTEGER).pipe(Effect.ignore)
                  // a hold cut short because another process took its session over (this one was frozen, or a cluster
                  // runner lost the session's shard) says so: nothing it did after that was written
                  if (lostClaim(exit))
                    yield* Effect.logWarning(
                      `Session ${sessionID} was taken over by another process while this one held it; this process's turn stopped there, and nothing it did after that was written.`
                    )
                  yield* free(sessionID, claimed.holder)
                  // a turn's body gives its TurnResult and fails with a PromptError
                  const turnExit = exit as Exit.Exit<Held<TurnResult>, PromptError>
                  if (claimed.holder.result)
                    yield* Deferred.done(
                      claimed.holder.result,
                      Exit.map(turnExit, (held) => (held as { readonly value: TurnResult }).value)
                    )
                })
        )

      const elsewhere = (sessionID: string) => Effect.map(claims.get(sessionID), (run) => (run !== undefined && run.holder !== self.holder ? run : undefined))

      const abort = (sessionID: string): Effect.Effect<Aborted, StoreError> =>
        Effect.suspend(() => {
          const here = running.get(sessionID)
          // a hold still claiming is interrupted as soon as it holds the session
          if (here !== undefined) return Effect.as(Deferred.succeed(here.abort, undefined), "here" as const)
          return Effect.map(claims.requestAbort(sessionID), (run): Aborted => (run === undefined ? "idle" : "elsewhere"))
        })

      return SessionRuns.of({ self, current: (sessionID) => running.get(sessionID), elsewhere, abort, hold })
    })
  )
}
