/// <reference path="./sql.d.ts" />
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import p0000 from "../migrations/pg/0000_init.sql" with { type: "text" }
import { type Migration, statements } from "./Migrations.ts"

// Imported as text so `bun build` inlines them, like the SQLite ones. After `bun run generate`, add the new file
// of migrations/pg here, in order.
/** Every PostgreSQL migration, oldest first. */
export const pgMigrations: ReadonlyArray<Migration> = [{ tag: "0000_init", sql: p0000 }]

/** The advisory lock key every reins process migrating a PostgreSQL database takes ("reins" in ASCII). */
export const MIGRATION_LOCK = 0x7265696e73

/**
 * drizzle-kit names the schema of a foreign key's table ("public"."session"); without it the tables are created in
 * the connection's current schema (its search_path), so a database URL may point reins at a schema of its own.
 */
const unqualified = (statement: string) => statement.replaceAll('"public".', "")

/**
 * Applies the migrations not yet recorded in `__reins_migrations`, all in one transaction that first takes an
 * advisory lock: a second process migrating at the same time waits for the first to commit, then finds nothing to
 * do. PostgreSQL's DDL is transactional, so a failed migration leaves nothing half done. Returns the tags it applied.
 */
export const migratePg = (sql: SqlClient, list: ReadonlyArray<Migration> = pgMigrations): Effect.Effect<Array<string>, SqlError> =>
  sql.withTransaction(
    Effect.gen(function* () {
      yield* sql.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
      yield* sql.unsafe("CREATE TABLE IF NOT EXISTS __reins_migrations (tag text PRIMARY KEY NOT NULL, applied_at bigint NOT NULL)")
      const rows = yield* sql.unsafe<{ tag: string }>("SELECT tag FROM __reins_migrations")
      const applied = new Set(rows.map((row) => row.tag))
      const done: Array<string> = []
      for (const migration of list) {
        if (applied.has(migration.tag)) continue
        for (const statement of statements(migration.sql)) yield* sql.unsafe(unqualified(statement))
        yield* sql.unsafe("INSERT INTO __reins_migrations (tag, applied_at) VALUES ($1, (extract(epoch from clock_timestamp()) * 1000)::bigint)", [
          migration.tag
        ])
        done.push(migration.tag)
      }
      return done
    })
  )
