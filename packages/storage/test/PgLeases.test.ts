// Claims on PostgreSQL from several pools (as from several processes): database time, one winner per session.
import { describe, expect, test } from "bun:test"
import { Context, Deferred, Effect, Fiber, Layer, type Scope } from "effect"
import { WritingClaim } from "../src/Claim.ts"
import { openPostgres } from "../src/PgDatabase.ts"
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
  test("a fenced updateSession loop and another pool's claim loop: no deadlock, every write lands, every claim finds the lease held", async () => {
    const out = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const a = yield* Layer.build(Storage.layerPostgres(url))
        const b = yield* Layer.build(Storage.layerPostgres(url))
        const store = Context.get(a, SessionStore)
        yield* store.createSession(session("ses_a"))
        const got = yield* Context.get(a, RunClaims).claim(request("ses_a", "A"))
        const writer = Effect.forEach(
          Array.from({ length: 150 }, (_, i) => i),
          (i) => Effect.result(store.updateSession(session("ses_a", { title: `t${i}` })).pipe(Effect.provideService(WritingClaim, got.run)))
        )
        const claimer = Effect.forEach(Array.from({ length: 150 }), () => Effect.result(Context.get(b, RunClaims).claim(request("ses_a", "B"))))
        const [writes, claims] = yield* Effect.all([writer, claimer], { concurrency: "unbounded" })
        return { writes, claims, title: (yield* store.getSession("ses_a")).title }
      })
    )
    expect(out.writes.filter((r) => r._tag === "Failure")).toEqual([])
    expect(out.claims.filter((r) => r._tag === "Failure")).toEqual([])
    for (const r of out.claims) if (r._tag === "Success") expect(r.success._tag).toBe("held")
    expect(out.title).toBe("t149")
  }, 60_000)

  test("deleting sessions while their holder writes messages behind the fence: no deadlock, only not-found or taken-over", async () => {
    const out = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const a = yield* Layer.build(Storage.layerPostgres(url))
        const b = yield* Layer.build(Storage.layerPostgres(url))
        const store = Context.get(a, SessionStore)
        const ids = Array.from({ length: 20 }, (_, i) => `ses_${i}`)
        return yield* Effect.forEach(
          ids,
          (id) =>
            Effect.gen(function* () {
              yield* store.createSession(session(id))
              const got = yield* Context.get(a, RunClaims).claim(request(id, "A"))
              const writer = Effect.forEach(
                Array.from({ length: 10 }, (_, i) => i),
                (i) =>
                  Effect.flip(store.putMessage(userMessage(`msg_${id}_${i}`, id)).pipe(Effect.provideService(WritingClaim, got.run))).pipe(
                    Effect.map((error) => error.message),
                    Effect.orElseSucceed(() => "ok")
                  )
              )
              const deleter = Effect.flip(Context.get(b, SessionStore).deleteSession(id)).pipe(
                Effect.map((error) => error.message),
                Effect.orElseSucceed(() => "ok")
              )
              const [writes, deleted] = yield* Effect.all([writer, deleter], { concurrency: "unbounded" })
              return { writes, deleted, left: yield* Effect.result(store.getSession(id)) }
            }),
          { concurrency: 4 }
        )
      })
    )
    for (const r of out) {
      expect(r.deleted).toBe("ok")
      expect(r.left._tag).toBe("Failure")
      for (const w of r.writes) expect(w === "ok" || !/deadlock/i.test(w)).toBe(true)
    }
  }, 60_000)

  test("deleting a session tree locks the leases from the top down, as a take-over does (a child's id below its parent's deadlocked)", async () => {
    const out = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const pool = yield* Layer.build(Storage.layerPostgres(url))
        const store = Context.get(pool, SessionStore)
        const claims = Context.get(pool, RunClaims)
        // ids that sort the child first
        yield* store.createSession(session("ses_b_root"))
        yield* store.createSession(session("ses_a_child", { parentID: "ses_b_root" }))
        yield* claims.claim(request("ses_b_root", "A"))
        yield* claims.claim(request("ses_a_child", "A"))
        const { sql } = yield* openPostgres(url)
        // another transaction holds the root's lease row, as a take-over of the tree does first
        const release = yield* Deferred.make<void>()
        const locked = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql.unsafe("SELECT session_id FROM session_run WHERE session_id = 'ses_b_root' FOR UPDATE")
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(locked)
        const deleting = yield* Effect.forkChild(store.deleteSession("ses_b_root"))
        // the delete waits for that lock ...
        yield* Effect.repeat(
          sql.unsafe<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND datname = current_database()"
          ),
          { until: (rows) => (rows[0]?.n ?? 0) > 0 }
        )
        // ... holding no lock on the child's lease, which the take-over would lock next
        const child = yield* Effect.result(
          sql.withTransaction(sql.unsafe("SELECT session_id FROM session_run WHERE session_id = 'ses_a_child' FOR UPDATE NOWAIT"))
        )
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const deleted = yield* Fiber.join(deleting)
        return { child: child._tag === "Success" ? child.success.length : child.failure.message, deleted }
      })
    )
    expect(out.child).toBe(1)
    expect(out.deleted).toEqual(["ses_b_root", "ses_a_child"])
  }, 60_000)
})
