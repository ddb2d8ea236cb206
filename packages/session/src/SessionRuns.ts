import { Clock, Context, Deferred, Effect, Exit, Layer } from "effect"
import type { RunIsLive, SessionRun, TurnResult } from "@reins/domain"
import { RunClaims, WritingClaim, type StoreError } from "@reins/storage"
import type { PromptError } from "./Errors.ts"
import { RunSettings, heartbeat, newRun, runIsLive, thisProcess, type RunOwner } from "./Runs.ts"

/**
 * This process's hold on a session: its claim once stored; for a turn, where joiners wait for its
 * result; and `released`, done once the session is free again here.
 */
export interface Holder {
  run?: SessionRun
  readonly result?: Deferred.Deferred<TurnResult, PromptError>
  readonly released: Deferred.Deferred<void>
}

/** What `hold` did: ran its body holding the session, or found it held here or by another process. */
export type Held<A> =
  | { readonly _tag: "ran"; readonly value: A }
  | { readonly _tag: "here"; readonly holder: Holder }
  | { readonly _tag: "held"; readonly held: SessionRun }

type Claimed = { readonly _tag: "claimed"; readonly run: SessionRun; readonly holder: Holder } | Exclude<Held<never>, { _tag: "ran" }>

/**
 * The claims of running sessions (T5): this process's holds, by session, and the claim in the store
 * that other processes see, kept alive by a heartbeat while a body runs.
 */
export class SessionRuns extends Context.Service<
  SessionRuns,
  {
    readonly self: RunOwner
    /** Whether a stored claim still holds its session, judged now. */
    readonly isLive: Effect.Effect<RunIsLive>
    /** This process's hold on the session, if any: a prompt joins its turn or waits for `released`. */
    current(sessionID: string): Holder | undefined
    /**
     * Claims the session (uninterruptibly: the hold is registered before the claim is stored, and
     * released whatever happens), runs `use` holding it with a heartbeat racing it, then releases
     * the claim and tells joiners. `turn` (a turn's result Deferred) lets queued messages join; a
     * hold without one (a compaction) refuses them. The heartbeat ends the body with a
     * "taken-over" error once another process holds the session; every write of the body checks
     * the claim too (WritingClaim).
     */
    hold<A, E, R>(
      sessionID: string,
      turn: Deferred.Deferred<TurnResult, PromptError> | undefined,
      use: (run: SessionRun) => Effect.Effect<A, E, R>
    ): Effect.Effect<Held<A>, E | StoreError, R>
  }
>()("reins/session/SessionRuns") {
  static readonly layer = Layer.effect(
    SessionRuns,
    Effect.gen(function* () {
      const claims = yield* RunClaims
      const timing = yield* RunSettings
      const self = thisProcess()
      const running = new Map<string, Holder>()
      const isLive = Effect.map(Clock.currentTimeMillis, (now) => runIsLive(now, self, running, timing))

      const free = (sessionID: string, holder: Holder) =>
        Effect.suspend(() => {
          // A joiner may have started the next turn once this one released the session.
          if (running.get(sessionID) === holder) running.delete(sessionID)
          return Deferred.succeed(holder.released, undefined)
        })

      const claim = (sessionID: string, turn: Holder["result"]): Effect.Effect<Claimed, StoreError> =>
        Effect.gen(function* () {
          const here = running.get(sessionID)
          if (here) return { _tag: "here", holder: here } as const
          const holder: Holder = { released: yield* Deferred.make<void>(), ...(turn ? { result: turn } : {}) }
          running.set(sessionID, holder)
          const run = newRun(sessionID, self, yield* Clock.currentTimeMillis, turn !== undefined)
          const held = yield* claims.claim(run, yield* isLive).pipe(Effect.onError(() => free(sessionID, holder)))
          if (held !== undefined) {
            yield* free(sessionID, holder)
            return { _tag: "held", held } as const
          }
          holder.run = run
          return { _tag: "claimed", run, holder } as const
        })

      const hold = <A, E, R>(sessionID: string, turn: Holder["result"], use: (run: SessionRun) => Effect.Effect<A, E, R>) =>
        Effect.acquireUseRelease(
          claim(sessionID, turn),
          (claimed): Effect.Effect<Held<A>, E | StoreError, R> =>
            claimed._tag !== "claimed"
              ? Effect.succeed(claimed)
              : Effect.raceFirst(use(claimed.run), heartbeat(claims, claimed.run, timing)).pipe(
                  Effect.map((value) => ({ _tag: "ran", value }) as const),
                  Effect.provideService(WritingClaim, claimed.run)
                ),
          (claimed, exit) =>
            claimed._tag !== "claimed"
              ? Effect.void
              : Effect.gen(function* () {
                  yield* claims.release(claimed.run, Number.MAX_SAFE_INTEGER).pipe(Effect.ignore)
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

      return SessionRuns.of({ self, isLive, current: (sessionID) => running.get(sessionID), hold })
    })
  )
}
