// What only the PostgreSQL adapter has to get right: jsonb stored as jsonb (not a JSON string), bigint ms read back
// as numbers, the event log ordered by its numeric id, migrations under an advisory lock, LISTEN wakeups across
// pools, and connection errors that say what to do without the password. Skipped without REINS_TEST_PG_URL
// (scripts/pg-test.sh starts a server); the connection-error tests need no server.
import { describe, expect, test } from "bun:test"
import { PgClient } from "@effect/sql-pg"
import { eventually } from "@reins/testkit"
import { Context, Effect, Fiber, Layer, Redacted, Ref, type Scope, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as fs from "node:fs"
import * as path from "node:path"
import pgJournal from "../migrations/pg/meta/_journal.json"
import { EventLog } from "../src/EventLog.ts"
import { Grants } from "../src/Grants.ts"
import { PendingQuestions } from "../src/PendingQuestions.ts"
import { listenFailed } from "../src/PgEventLog.ts"
import { migratePg, MIGRATION_LOCK, pgMigrations } from "../src/PgMigrations.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import * as Storage from "../src/Storage.ts"
import { claim, freshSchema, grant, pgUrl, session, tempDir, textPart, userMessage, withSearchPath } from "./support.ts"

/** A pool of its own on `url` (one connection unless told). */
const client = (url: string, maxConnections = 1) => PgClient.make({ url: Redacted.make(url), maxConnections }).pipe(Effect.provide(Reactivity.layer))

/** Runs `body` with a fresh schema's URL, the schema dropped after. */
const inFreshSchema = <A, E>(body: (url: string) => Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(freshSchema(pgUrl!), (schema) => body(withSearchPath(pgUrl!, schema)))))

const BIG_TIME = 1_795_804_157_513 // past 2^31: a bigint column

describe.skipIf(pgUrl === undefined)("PostgreSQL storage", () => {
  test("the domain objects are stored as jsonb objects, times read back as numbers", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const grants = yield* Grants
        const log = yield* EventLog
        const questions = yield* PendingQuestions
        yield* store.createSession(session("ses_a", { time: { created: BIG_TIME, updated: BIG_TIME + 1 } }))
        const user = userMessage("msg_001", "ses_a", BIG_TIME)
        yield* store.putMessage(user)
        yield* store.putPart(textPart("prt_001", user, "hello"))
        yield* grants.add(grant("grt_a", { created: BIG_TIME }))
        yield* log.append([{ sessionID: "ses_a", rootSessionID: "ses_a", time: BIG_TIME, event: { type: "session.idle", sessionID: "ses_a" } as never }])
        // asked and answered while the asking session's lease is live
        yield* (yield* RunClaims).claim(claim("ses_a", 1))
        yield* questions.put({
          id: "per_1",
          sessionID: "ses_a",
          rootSessionID: "ses_a",
          time: { created: BIG_TIME },
          asked: { type: "permission.asked" } as never
        })
        yield* questions.answer("per_1", { reply: "once" })
        const sql = yield* client(url)
        const types = yield* sql.unsafe<{ t: string; kind: string }>(
          `SELECT 'session' AS t, jsonb_typeof(data) AS kind FROM session UNION ALL SELECT 'message', jsonb_typeof(data) FROM message
           UNION ALL SELECT 'part', jsonb_typeof(data) FROM part UNION ALL SELECT 'event', jsonb_typeof(data) FROM session_event
           UNION ALL SELECT 'question', jsonb_typeof(data) FROM permission_pending UNION ALL SELECT 'reply', jsonb_typeof(reply) FROM permission_pending`
        )
        // what the queries on JSON fields (totals, summaries) depend on
        const fields = yield* sql.unsafe<{ role: string; text: string }>(
          "SELECT m.data->>'role' AS role, p.data->>'text' AS text FROM message m JOIN part p ON p.message_id = m.id"
        )
        return {
          types,
          fields,
          got: yield* store.getSession("ses_a"),
          list: yield* grants.list(),
          events: yield* log.read({ after: 0 }),
          pending: yield* questions.list(),
          messages: yield* store.messages("ses_a")
        }
      }).pipe(Effect.provide(Storage.layerPostgres(url)))
    )
    expect(result.types.map((row) => [row.t, row.kind])).toEqual([
      ["session", "object"],
      ["message", "object"],
      ["part", "object"],
      ["event", "object"],
      ["question", "object"],
      ["reply", "object"]
    ])
    expect(result.fields).toEqual([{ role: "user", text: "hello" }])
    expect(result.got.time).toEqual({ created: BIG_TIME, updated: BIG_TIME + 1 })
    expect(result.list[0]?.time.created).toBe(BIG_TIME)
    expect(typeof result.events[0]?.id).toBe("number")
    expect(result.events[0]?.time).toBe(BIG_TIME)
    expect(result.pending[0]?.time.created).toBe(BIG_TIME)
    expect(result.pending[0]?.reply).toEqual({ reply: "once" })
    expect(result.messages[0]?.info.time.created).toBe(BIG_TIME)
  })

  test("the event log orders and reads after ids as numbers (10 after 9), per-session seq 1, 2, …", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        for (let i = 1; i <= 12; i++) {
          const sessionID = i % 2 === 0 ? "ses_even" : "ses_odd"
          yield* log.append([{ sessionID, rootSessionID: "ses_root", time: i, event: { type: "session.idle", sessionID } as never }])
        }
        const all = yield* log.read({ after: 0 })
        return {
          ids: all.map((e) => e.id),
          after9: (yield* log.read({ after: all[8]!.id })).map((e) => e.time),
          limited: (yield* log.read({ after: all[7]!.id, limit: 2 })).map((e) => e.time),
          evenSeqs: (yield* log.read({ after: 0, sessionID: "ses_even" })).map((e) => e.seq),
          last: yield* log.last(),
          first: yield* log.first(),
          pruned: yield* log.prune(5),
          firstAfterPrune: yield* log.first()
        }
      }).pipe(Effect.provide(Storage.layerPostgres(url)))
    )
    expect(result.ids).toEqual([...result.ids].sort((a, b) => a - b))
    expect(new Set(result.ids).size).toBe(12)
    expect(result.after9).toEqual([10, 11, 12])
    expect(result.limited).toEqual([9, 10])
    expect(result.evenSeqs).toEqual([1, 2, 3, 4, 5, 6])
    expect(result.last).toBe(result.ids[11]!)
    expect(result.first).toBe(result.ids[0]!)
    expect(result.pruned).toBe(4)
    expect(result.firstAfterPrune).toBe(result.ids[4]!)
  })

  test("one append of 2,500 events over three sessions (several INSERT chunks): ids in batch order, seqs continuing per session, as read back", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const log = Context.get(yield* Layer.build(Storage.layerPostgres(url)), EventLog)
        const event = (sessionID: string, time: number) => ({ sessionID, rootSessionID: "ses_root", time, event: { type: "session.idle", sessionID } as never })
        yield* log.append([event("ses_b", 0)])
        const batch = Array.from({ length: 2500 }, (_, i) => event(["ses_a", "ses_b", "ses_c"][i % 3]!, i + 1))
        const logged = yield* log.append(batch)
        return { batch, logged, read: yield* log.read({ after: 0 }) }
      })
    )
    expect(result.logged.map((e) => e.time)).toEqual(result.batch.map((e) => e.time))
    const ids = result.logged.map((e) => e.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(2500)
    for (const [sessionID, first] of [
      ["ses_a", 1],
      ["ses_b", 2],
      ["ses_c", 1]
    ] as const) {
      const seqs = result.logged.filter((e) => e.sessionID === sessionID).map((e) => e.seq)
      expect(seqs).toEqual(seqs.map((_, i) => first + i))
    }
    expect(result.read.slice(1)).toEqual([...result.logged])
  })

  test("another pool's append wakes wakeups (LISTEN reins_events)", async () => {
    const woken = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const count = yield* Ref.make(0)
        const listener = yield* Layer.build(Storage.layerPostgres(url))
        const writer = yield* Layer.build(Storage.layerPostgres(url))
        const wakeups = Context.get(listener, EventLog).wakeups
        const fiber = yield* Effect.forkChild(Stream.runForEach(wakeups, () => Ref.update(count, (n) => n + 1)))
        const other = Context.get(writer, EventLog)
        // LISTEN starts with the fiber: append until one wakeup arrives (the first appends may precede it)
        yield* eventually(
          Effect.gen(function* () {
            yield* other.append([{ sessionID: "ses_a", rootSessionID: "ses_a", time: 1, event: { type: "session.idle", sessionID: "ses_a" } as never }])
            return (yield* Ref.get(count)) > 0
          }),
          "no wakeup after another pool's append"
        )
        yield* Fiber.interrupt(fiber)
        return yield* Ref.get(count)
      })
    )
    expect(woken).toBeGreaterThan(0)
  })

  test("twenty wakeups subscribers on one pool share one LISTEN: the pool's queries still run and every subscriber wakes", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const ctx = yield* Layer.build(Storage.layerPostgres(url)) // a pool of 10 connections
        const log = Context.get(ctx, EventLog)
        const counts = yield* Effect.forEach(Array.from({ length: 20 }), () => Ref.make(0))
        const fibers = yield* Effect.forEach(counts, (count) => Effect.forkChild(Stream.runForEach(log.wakeups, () => Ref.update(count, (n) => n + 1))))
        const append = log.append([{ sessionID: "ses_a", rootSessionID: "ses_a", time: 1, event: { type: "session.idle", sessionID: "ses_a" } as never }])
        // the appends and reads go through the same pool: with a connection per subscriber they would wait forever
        yield* eventually(
          Effect.gen(function* () {
            yield* append
            const woken = yield* Effect.forEach(counts, Ref.get)
            return woken.every((n) => n > 0)
          }),
          "not every wakeups subscriber woke on an append"
        )
        const last = yield* log.last()
        yield* Effect.forEach(fibers, Fiber.interrupt)
        // the shared LISTEN ended with its last subscriber; a new one starts it again
        const later = yield* Ref.make(0)
        const fiber = yield* Effect.forkChild(Stream.runForEach(log.wakeups, () => Ref.update(later, (n) => n + 1)))
        yield* eventually(
          Effect.andThen(
            append,
            Effect.map(Ref.get(later), (n) => n > 0)
          ),
          "no wakeup for a subscriber after the others ended"
        )
        yield* Fiber.interrupt(fiber)
        return { last, read: (yield* log.read({ after: 0 })).length }
      })
    )
    expect(result.last).toBeGreaterThan(0)
    expect(result.read).toBeGreaterThan(1)
  })

  test("two processes migrating at once: one waits for the other's advisory lock, the migrations apply once", async () => {
    const result = await inFreshSchema((url) =>
      Effect.gen(function* () {
        const holder = yield* client(url)
        const observer = yield* client(url)
        const a = yield* client(url)
        const b = yield* client(url)
        // another process is migrating: it holds the lock
        const held = yield* holder.reserve
        yield* held.executeRaw(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`, [])
        const first = yield* Effect.forkChild(migratePg(a))
        const second = yield* Effect.forkChild(migratePg(b))
        // both wait on the lock (seen in pg_locks), and nothing was applied meanwhile
        const waiting = yield* eventually(
          Effect.map(observer.unsafe<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"), (rows) =>
            rows[0]!.n >= 2 ? rows[0]!.n : false
          ),
          "the migrators never waited on the advisory lock"
        )
        const tablesWhileWaiting = yield* observer.unsafe<{ n: number }>(
          "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'session'"
        )
        yield* held.executeRaw(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`, [])
        const applied = [yield* Fiber.join(first), yield* Fiber.join(second)]
        const recorded = yield* observer.unsafe<{ tag: string }>("SELECT tag FROM __reins_migrations ORDER BY tag")
        return { waiting, tablesWhileWaiting: tablesWhileWaiting[0]!.n, applied, recorded: recorded.map((row) => row.tag) }
      })
    )
    expect(result.waiting).toBeGreaterThanOrEqual(2)
    expect(result.tablesWhileWaiting).toBe(0)
    // one of them applied everything, the other found nothing to do
    expect(result.applied.map((tags) => tags.length).sort()).toEqual([0, pgMigrations.length])
    expect(result.recorded).toEqual(pgMigrations.map((m) => m.tag))
  })

  test("every migration drizzle-kit wrote into migrations/pg is registered, in order", () => {
    expect(pgMigrations.map((migration) => migration.tag)).toEqual(pgJournal.entries.map((entry) => entry.tag))
    const files = fs.readdirSync(path.join(import.meta.dir, "..", "migrations", "pg")).filter((file) => file.endsWith(".sql"))
    expect(files.map((file) => file.replace(/\.sql$/, ""))).toEqual(pgMigrations.map((m) => m.tag))
  })
})

describe("choosing and opening the database", () => {
  test("an unreachable PostgreSQL server is a StoreError naming the URL without its password, saying what to check", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Effect.scoped(Layer.build(Storage.layerPostgres("postgres://reins:hunter2secret@127.0.0.1:1/reins?sslmode=disable"))))
    )
    expect(error._tag).toBe("StoreError")
    expect(error.message).toContain("postgres://reins@127.0.0.1:1/reins")
    expect(error.message).toContain("REINS_DATABASE_URL or --database")
    expect(error.message).toContain("server is running")
    expect(error.message).not.toContain("hunter2secret")
  })

  test("the warning for a failed LISTEN names the database and scrubs the password from the driver's message", () => {
    const db = { sql: undefined as never, where: "postgres://reins@db:5432/reins", secret: "hunter2secret" }
    const warning = listenFailed(db, new Error('password authentication failed: "hunter2secret" rejected'))
    expect(warning).toContain("postgres://reins@db:5432/reins")
    expect(warning).toContain("listening again")
    expect(warning).not.toContain("hunter2secret")
  })

  test("layerFor: SQLite in the data dir without a URL, an error for a URL that is not postgres://", async () => {
    const dataDir = tempDir()
    await Effect.runPromise(
      Effect.scoped(Effect.flatMap(Layer.build(Storage.layerFor({ dataDir })), (context) => Context.get(context, SessionStore).listSessions()))
    )
    expect(fs.existsSync(path.join(dataDir, "reins.db"))).toBe(true)
    const error = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(Storage.layerFor({ dataDir, url: "mysql://root:topsecret@db/reins" })))))
    expect(error.message).toContain("postgres://")
    expect(error.message).not.toContain("topsecret")
  })

  test.skipIf(pgUrl === undefined)("layerFor: a postgres:// or postgresql:// URL is PostgreSQL", async () => {
    const kinds = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const schema = yield* freshSchema(pgUrl!)
          const url = withSearchPath(pgUrl!, schema)
          const out: Array<string> = []
          for (const u of [url, url.replace(/^postgres:/, "postgresql:")]) {
            const context = yield* Layer.build(Storage.layerFor({ dataDir: tempDir(), url: u }))
            const store = Context.get(context, SessionStore)
            yield* store.createSession(session(`ses_${out.length}`))
            out.push(...(yield* store.listSessions()).map((s) => s.id))
          }
          return out
        })
      )
    )
    // both URLs reach the same schema: the second sees the first's session
    expect(kinds).toEqual(["ses_0", "ses_1", "ses_0"])
  })
})
