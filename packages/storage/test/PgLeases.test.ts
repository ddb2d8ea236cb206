// Claims on PostgreSQL from several pools (as from several processes): database time, one winner per session.
import { describe, expect, test } from "bun:test"
import { Context, Effect, Layer, type Scope } from "effect"
import { WritingClaim } from "../src/Claim.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import * as Storage from "../src/Storage.ts"
import { freshSchema, pgUrl, session, userMessage, withSearchPath } from "./support.ts"

const inFreshSchema = <A, E>(body: (url: string) => Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(freshSchema(pgUrl!), (schema) => body(withSearchPath(pgUrl!, schema)))))

const request = (sessionID: string, holder: string) => ({ sessionID, holder, host: "box", pid: 1, takesMessages: true, ttlMs: 60_000 })

describe.skipIf(pgUrl === undefined)("leases on PostgreSQL, from several pools", () => {
  test("eight pools claiming one session at once: exactly one claims it (epoch 1), the others find it held", async () => {
    const results = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const pools = yield* Effect.forEach(Array.from({ length: 8 }), () => Layer.build(Storage.layerPostgres(url)))
        yield* Context.get(pools[0]!, SessionStore).createSession(session("ses_a"))
        return yield* Effect.forEach(pools, (pool, i) => Context.get(pool, RunClaims).claim(request("ses_a", `holder-${i}`)), { concurrency: "unbounded" })
      })
    )
    const claimed = results.filter((r) => r._tag === "claimed")
    expect(claimed).toHaveLength(1)
    expect(claimed[0]!.run.epoch).toBe(1)
    for (const r of results.filter((r) => r._tag === "held")) expect(r.run.holder).toBe(claimed[0]!.run.holder)
  })

  test("expiry is the database's time: a lease claimed with ttl 0 is not live; a new holder takes it with the next epoch and fences the old", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const ctx = yield* Layer.build(Storage.layerPostgres(url))
        const store = Context.get(ctx, SessionStore)
        const claims = Context.get(ctx, RunClaims)
        yield* store.createSession(session("ses_a"))
        const old = yield* claims.claim({ ...request("ses_a", "old"), ttlMs: 0 })
        const live = yield* claims.get("ses_a")
        const taken = yield* claims.claim(request("ses_a", "new"))
        const oldRun = old._tag === "claimed" ? old.run : undefined
        const stale = yield* Effect.flip(store.putMessage(userMessage("msg_1", "ses_a")).pipe(Effect.provideService(WritingClaim, oldRun)))
        const renewed = yield* claims.renew(oldRun!, 60_000)
        return { old, live, taken, stale, renewed, messages: yield* store.messages("ses_a") }
      })
    )
    expect(result.old._tag).toBe("claimed")
    expect(result.old.run.time.expires).toBe(result.old.run.time.started)
    expect(result.live).toBeUndefined()
    expect(result.taken._tag).toBe("claimed")
    expect(result.taken.run.epoch).toBe(2)
    expect(result.stale.reason).toBe("taken-over")
    expect(result.renewed).toBeUndefined()
    expect(result.messages).toEqual([])
  })
})
