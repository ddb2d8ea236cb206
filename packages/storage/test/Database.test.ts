// The storage services of an adapter share one database: what one writes, the others read and check, in the
// same transaction.
import { describe, expect, test } from "bun:test"
import { Effect, type Layer } from "effect"
import * as path from "node:path"
import { WritingClaim } from "../src/Claim.ts"
import { Grants } from "../src/Grants.ts"
import { RunClaims } from "../src/RunClaims.ts"
import { SessionStore } from "../src/SessionStore.ts"
import * as Storage from "../src/Storage.ts"
import type { StoreError } from "../src/StoreError.ts"
import { databaseIdentity } from "../src/DatabaseUrl.ts"
import { claim, claimed, grant, layerPostgresFresh, pgUrl, run, session, shape, tempDir, textPart, userMessage } from "./support.ts"

const databases: ReadonlyArray<readonly [string, () => Layer.Layer<Storage.Services, StoreError>]> = [
  ["memory", () => Storage.layerMemory],
  ["sqlite file", () => Storage.layerSqlite(path.join(tempDir(), "reins.db"))],
  // A ":memory:" SQLite database belongs to the one connection that opened it: any row one service
  // reads back from another proves that both run on that same connection.
  ["sqlite :memory:", () => Storage.layerSqlite(":memory:")],
  // one pool: what one service writes, another reads through its own connection of that pool
  ...(pgUrl === undefined ? [] : [["postgres", () => layerPostgresFresh(pgUrl as string)] as const])
]

for (const [name, database] of databases) {
  describe(`one database under every storage service (${name})`, () => {
    const services = database

    test("a message queued through RunClaims is read through SessionStore, with its parts", async () => {
      const result = await run(
        services(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          yield* claims.claim(claim("ses_a", 100))
          const queued = userMessage("msg_001", "ses_a")
          const run = yield* claims.queue(queued, [textPart("prt_001", queued, "also this"), textPart("prt_002", queued, "and that")])
          return { run, messages: yield* store.messages("ses_a"), held: yield* claims.get("ses_a") }
        })
      )
      expect(result.run?.queued).toBe(1)
      expect(shape(result.messages)).toEqual([["msg_001", ["prt_001", "prt_002"]]])
      expect(result.messages[0]?.parts[1]).toEqual(textPart("prt_002", userMessage("msg_001", "ses_a"), "and that"))
      expect(result.held?.queued).toBe(1)
    })

    test("a claim stored through RunClaims is what SessionStore's writes under a WritingClaim check", async () => {
      const result = await run(
        services(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          yield* store.createSession(session("ses_a"))
          const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100)), claimed)
          const user = userMessage("msg_001", "ses_a")
          yield* store.putMessage(user).pipe(Effect.provideService(WritingClaim, mine))
          // another holder's claim after this one's release: a write under the old epoch is refused
          yield* claims.release(mine, 0)
          yield* claims.claim(claim("ses_a", 200))
          const refused = yield* Effect.flip(store.putPart(textPart("prt_001", user, "late")).pipe(Effect.provideService(WritingClaim, mine)))
          return { refused, messages: yield* store.messages("ses_a") }
        })
      )
      expect(result.refused.reason).toBe("taken-over")
      expect(result.refused.message).toContain("pid 200")
      expect(shape(result.messages)).toEqual([["msg_001", []]])
    })

    test("deleting a session through SessionStore ends its claim; grants stay", async () => {
      const result = await run(
        services(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          const grants = yield* Grants
          yield* store.createSession(session("ses_a"))
          yield* claims.claim(claim("ses_a", 100))
          yield* grants.add(grant("grt_a"))
          yield* store.deleteSession("ses_a")
          return { held: yield* claims.get("ses_a"), grants: yield* grants.list() }
        })
      )
      expect(result.held).toBeUndefined()
      expect(result.grants.map((g) => g.id)).toEqual(["grt_a"])
    })

    test("a claim needs a stored session", async () => {
      const error = await run(
        services(),
        Effect.flatMap(RunClaims, (claims) => Effect.flip(claims.claim(claim("ses_missing", 100))))
      )
      expect(error.reason).toBe("io")
      expect(error.message).toContain("not stored")
    })
  })
}

describe("Storage layers", () => {
  test("Storage.layerSqlite opens one connection for all three services", async () => {
    const result = await run(
      Storage.layerSqlite(":memory:"),
      Effect.gen(function* () {
        yield* (yield* SessionStore).createSession(session("ses_a"))
        // Only the connection that created the session sees it (":memory:").
        return yield* (yield* RunClaims).claim(claim("ses_a", 100))
      })
    )
    expect(result._tag).toBe("claimed")
  })

  test("each run of Storage.layerMemory is a fresh database", async () => {
    const first = await run(
      Storage.layerMemory,
      Effect.flatMap(SessionStore, (store) => Effect.andThen(store.createSession(session("ses_a")), store.listSessions()))
    )
    const second = await run(
      Storage.layerMemory,
      Effect.flatMap(SessionStore, (store) => store.listSessions())
    )
    expect(first.map((s) => s.id)).toEqual(["ses_a"])
    expect(second).toEqual([])
  })
})

describe("databaseIdentity", () => {
  const env = { USER: "me" }
  const cases: ReadonlyArray<readonly [string, string | undefined, string]> = [
    ["no URL: the data dir's SQLite file", undefined, "sqlite:/data/reins.db"],
    ["a blank URL", "  ", "sqlite:/data/reins.db"],
    ["PostgreSQL: user, host, port and database, never the password", "postgres://me:secret@DB.example:5432/reins", "postgres://me@db.example:5432/reins"],
    ["the default port said or not, postgresql:// or postgres://", "postgresql://me@db.example/reins", "postgres://me@db.example:5432/reins"],
    ["the user from USER when the URL has none", "postgres://db.example/reins", "postgres://me@db.example:5432/reins"],
    ["the database the user's when the URL has none, as the server takes it", "postgres://alice@db.example", "postgres://alice@db.example:5432/alice"],
    [
      "?host, ?port, ?user and ?dbname over the URL's parts",
      "postgres://x@ignored:1/ignored?host=/run/pg&port=6543&user=bob&dbname=r",
      "postgres://bob@/run/pg:6543/r"
    ],
    [
      "a schema of its own (options): another database for reins; other parameters are not",
      "postgres://me:secret@db/reins?options=-c%20search_path%3Dalice&sslmode=require&application_name=x",
      "postgres://me@db:5432/reins?options=-c%20search_path%3Dalice"
    ],
    ["a password in the query is left out", "postgres://db/reins?password=secret", "postgres://me@db:5432/reins"]
  ]
  for (const [name, url, identity] of cases)
    test(name, () => {
      expect(databaseIdentity({ url, dataDir: "/data", env })).toBe(identity)
      expect(databaseIdentity({ url, dataDir: "/data", env })).not.toContain("secret")
    })
  test("what makes two databases, or two sets of reins tables, two identities", () => {
    const of = (url: string, user = "me") => databaseIdentity({ url, dataDir: "/data", env: { USER: user } })
    expect(of("postgres://db/reins?options=-c%20search_path%3Dalice")).not.toBe(of("postgres://db/reins?options=-c%20search_path%3Dbob"))
    expect(of("postgres://alice@db/reins")).not.toBe(of("postgres://bob@db/reins"))
    expect(of("postgres://localhost?user=alice")).not.toBe(of("postgres://localhost?user=bob"))
    expect(of("postgres:///reins", "alice")).not.toBe(of("postgres:///reins", "bob"))
    // PG* variables: the driver does not read them, so neither does the identity
    expect(databaseIdentity({ url: "postgres:///reins", dataDir: "/data", env: { USER: "me", PGHOST: "db-a" } })).toBe("postgres://me@localhost:5432/reins")
  })
})
