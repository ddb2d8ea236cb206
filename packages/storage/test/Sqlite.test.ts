import { describe, expect, test } from "bun:test"
import { Database as SqliteClient } from "bun:sqlite"
import { DataDir } from "@reins/domain"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import journal from "../migrations/meta/_journal.json"
import { migrate, migrations, statements } from "../src/Migrations.ts"
import { openDatabase } from "../src/Database.ts"
import { Grants } from "../src/Grants.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { makeSqliteSessionStore } from "../src/SqliteSessionStore.ts"
import * as Storage from "../src/Storage.ts"
import { grant, run, session, tempDir, textPart, userMessage } from "./support.ts"

const countRows = (file: string, table: string) => {
  const db = new SqliteClient(file, { readonly: true })
  const row = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()
  db.close()
  return row?.n
}

describe("Database.layerSqlite", () => {
  test("data survives closing and reopening; migrations run once", async () => {
    const file = path.join(tempDir(), "nested", "dirs", "reins.db")
    const user = userMessage("msg_001", "ses_a")
    await run(
      Storage.layerSqlite(file),
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.createSession(session("ses_a", { updated: 5 }))
        yield* store.putMessage(user)
        yield* store.putPart(textPart("prt_001", user, "persisted"))
      })
    )
    expect(fs.existsSync(file)).toBe(true)
    // Closed cleanly: the last connection checkpoints and removes the WAL.
    expect(fs.existsSync(`${file}-wal`)).toBe(false)
    const reopened = await run(
      Storage.layerSqlite(file),
      Effect.gen(function* () {
        const store = yield* SessionStore
        return { list: yield* store.listSessions(), rows: yield* store.messages("ses_a") }
      })
    )
    expect(reopened.list).toEqual([session("ses_a", { updated: 5 })])
    expect(reopened.rows).toEqual([{ info: user, parts: [textPart("prt_001", user, "persisted")] }])
    expect(countRows(file, "__reins_migrations")).toBe(migrations.length)
  })

  test("sets WAL, NORMAL sync, busy timeout and foreign keys on its connection", async () => {
    const pragmas = await Effect.runPromise(
      Effect.scoped(
        Effect.map(openDatabase(path.join(tempDir(), "reins.db")), (db) => ({
          journal: db.query("PRAGMA journal_mode").get(),
          foreignKeys: db.query("PRAGMA foreign_keys").get(),
          synchronous: db.query("PRAGMA synchronous").get(),
          busy: db.query("PRAGMA busy_timeout").get()
        }))
      )
    )
    expect(pragmas.journal).toEqual({ journal_mode: "wal" })
    expect(pragmas.foreignKeys).toEqual({ foreign_keys: 1 })
    expect(pragmas.synchronous).toEqual({ synchronous: 1 })
    expect(pragmas.busy).toEqual({ timeout: 5000 })
  })

  test("deleteSession cascades to the message and part rows", async () => {
    const file = path.join(tempDir(), "reins.db")
    const user = userMessage("msg_001", "ses_a")
    await run(
      Storage.layerSqlite(file),
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.createSession(session("ses_a"))
        yield* store.putMessage(user)
        yield* store.putParts([textPart("prt_001", user, "a"), textPart("prt_002", user, "b")])
        yield* store.deleteSession("ses_a")
      })
    )
    expect(countRows(file, "message")).toBe(0)
    expect(countRows(file, "part")).toBe(0)
  })

  test("Database.layer keeps reins.db in the DataDir", async () => {
    const dataDir = path.join(tempDir(), "data")
    const layer = Storage.layer.pipe(Layer.provide(Layer.succeed(DataDir, dataDir)))
    await run(
      layer,
      Effect.flatMap(SessionStore, (store) => store.createSession(session("ses_a")))
    )
    expect(countRows(path.join(dataDir, "reins.db"), "session")).toBe(1)
  })

  test("a file that is not a database is reported as corrupt", async () => {
    const file = path.join(tempDir(), "reins.db")
    fs.writeFileSync(file, "this is not a sqlite database, just some text that is long enough ".repeat(100))
    const error = await Effect.runPromise(Effect.flip(Effect.scoped(openDatabase(file))))
    expect(error.reason).toBe("corrupt")
    expect(error.message).toContain(file)
  })

  test("a full disk is reported as disk-full and the data saved before stays readable", async () => {
    const file = path.join(tempDir(), "reins.db")
    const user = userMessage("msg_001", "ses_a")
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* openDatabase(file)
          const store = yield* makeSqliteSessionStore({ _tag: "Sqlite", client: db, file })
          yield* store.createSession(session("ses_a"))
          yield* store.putMessage(user)
          yield* store.putPart(textPart("prt_001", user, "saved before the disk filled up"))
          // Cap the file a few pages above its current size, then write more than fits.
          const pages = db.query<{ page_count: number }, []>("PRAGMA page_count").get()?.page_count ?? 0
          db.run(`PRAGMA max_page_count = ${pages + 4}`)
          const error = yield* Effect.flip(store.putPart(textPart("prt_002", user, "x".repeat(1_000_000))))
          const batch = yield* Effect.flip(store.putParts([textPart("prt_003", user, "small"), textPart("prt_004", user, "y".repeat(1_000_000))]))
          return { error, batch, rows: yield* store.messages("ses_a") }
        })
      )
    )
    expect(result.error.reason).toBe("disk-full")
    expect(result.error.message).toContain("Free some disk space")
    expect(result.batch.reason).toBe("disk-full")
    expect(result.rows).toEqual([{ info: user, parts: [textPart("prt_001", user, "saved before the disk filled up")] }])
  })
})

describe("indexed reads", () => {
  // The loop reads these every step: a scan of the session would grow with its length.
  test("summaries use the partial index; a window reads messages and parts through indexes", () => {
    const db = new SqliteClient(":memory:")
    migrate(db, 0)
    const plan = (query: string) =>
      db
        .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${query}`)
        .all()
        .map((row) => row.detail)
        .join("\n")
    const summaries = plan(
      `SELECT data FROM message WHERE session_id = 's' AND json_extract(data, '$.summary') IS NOT NULL AND json_extract(data, '$.time.completed') IS NOT NULL AND json_extract(data, '$.error') IS NULL ORDER BY id DESC LIMIT 1`
    )
    expect(summaries).toContain("message_summary_idx")
    const window = plan(
      `SELECT data FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = 's' AND id >= 'm' UNION ALL SELECT id FROM message WHERE session_id = 's' AND id < 'm' AND id IN (SELECT value FROM json_each('[]'))) ORDER BY message_id, id`
    )
    expect(window).toContain("part_message_id_idx")
    expect(window).not.toMatch(/SCAN (part|message)\b(?! USING)/)
    db.close()
  })
})

describe("Migrations", () => {
  test("every migration drizzle-kit generated is registered, in order", () => {
    expect(migrations.map((migration) => migration.tag)).toEqual(journal.entries.map((entry) => entry.tag))
    for (const migration of migrations) {
      const text = fs.readFileSync(path.join(import.meta.dir, "..", "migrations", `${migration.tag}.sql`), "utf8")
      expect(migration.sql).toBe(text)
    }
  })

  test("statements split on drizzle's breakpoint marker", () => {
    expect(statements("CREATE TABLE a (x);--> statement-breakpoint\nCREATE INDEX i ON a (x);\n")).toEqual(["CREATE TABLE a (x);", "CREATE INDEX i ON a (x);"])
  })

  test("a failing migration rolls back entirely", () => {
    const db = new SqliteClient(":memory:")
    const broken = [{ tag: "0001_broken", sql: "CREATE TABLE t (x);--> statement-breakpoint\nNOT SQL" }]
    expect(() => migrate(db, 1, broken)).toThrow()
    expect(db.query("SELECT name FROM sqlite_master WHERE name IN ('t', '__reins_migrations')").all()).toEqual([])
    expect(migrate(db, 1)).toEqual(migrations.map((m) => m.tag))
    expect(migrate(db, 2)).toEqual([])
    db.close()
  })
})

describe("upgrading a database", () => {
  test("a database from before the grants table gets it and keeps its sessions", async () => {
    const file = path.join(tempDir(), "reins.db")
    const old = session("ses_old", { updated: 42 })
    const user = userMessage("msg_001", "ses_old")
    const db = new SqliteClient(file, { create: true })
    expect(migrate(db, 1, migrations.slice(0, 1))).toEqual(["0000_init"])
    db.run("INSERT INTO session (id, directory, parent_id, title, time_created, time_updated, data) VALUES (?, ?, NULL, ?, ?, ?, ?)", [
      old.id,
      old.directory,
      old.title,
      old.time.created,
      old.time.updated,
      JSON.stringify(old)
    ])
    db.run("INSERT INTO message (id, session_id, time_created, data) VALUES (?, ?, ?, ?)", [user.id, user.sessionID, user.time.created, JSON.stringify(user)])
    db.close()

    const result = await run(
      Storage.layerSqlite(file),
      Effect.gen(function* () {
        const store = yield* SessionStore
        const grants = yield* Grants
        const before = yield* grants.list()
        yield* grants.add(grant("grt_a"))
        return { before, grants: yield* grants.list(), sessions: yield* store.listSessions(), rows: yield* store.messages("ses_old") }
      })
    )
    expect(result.before).toEqual([])
    expect(result.grants).toEqual([grant("grt_a")])
    expect(result.sessions).toEqual([old])
    expect(result.rows).toEqual([{ info: user, parts: [] }])

    const check = new SqliteClient(file, { readonly: true })
    const tags = check.query<{ tag: string }, []>("SELECT tag FROM __reins_migrations ORDER BY tag").all()
    const indexes = check
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'permission_grant' AND sql IS NOT NULL ORDER BY name")
      .all()
    check.close()
    expect(tags.map((row) => row.tag)).toEqual(["0000_init", "0001_permission_grant", "0002_session_run", "0003_session_lease"])
    expect(indexes.map((row) => row.name)).toEqual(["permission_grant_project_idx", "permission_grant_project_permission_pattern_idx"])
  })
})

describe("error messages", () => {
  test("constraint failures say what is missing", async () => {
    const errors = await run(
      Storage.layerSqlite(path.join(tempDir(), "reins.db")),
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.createSession(session("ses_a"))
        return [yield* Effect.flip(store.createSession(session("ses_a"))), yield* Effect.flip(store.putMessage(userMessage("msg_001", "ses_missing")))]
      })
    )
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringContaining("one with that id is already stored"),
      expect.stringContaining("refers to a session or message that is not stored")
    ])
  })
})
