/// <reference path="./sql.d.ts" />
import type { Database } from "bun:sqlite"
import m0000 from "../migrations/0000_init.sql" with { type: "text" }
import m0001 from "../migrations/0001_permission_grant.sql" with { type: "text" }
import m0002 from "../migrations/0002_session_run.sql" with { type: "text" }
import m0003 from "../migrations/0003_session_lease.sql" with { type: "text" }

/** One drizzle-kit migration: its journal tag and its SQL. */
export interface Migration {
  readonly tag: string
  readonly sql: string
}

// Imported as text so `bun build` inlines them: the bundled CLI never reads the migrations folder.
// After `bun run generate`, add the new file here, in order.
/** Every migration, oldest first. */
export const migrations: ReadonlyArray<Migration> = [
  { tag: "0000_init", sql: m0000 },
  { tag: "0001_permission_grant", sql: m0001 },
  { tag: "0002_session_run", sql: m0002 },
  { tag: "0003_session_lease", sql: m0003 }
]

const BREAKPOINT = "--> statement-breakpoint"

/** The statements of one drizzle-kit migration file. */
export const statements = (sql: string): Array<string> =>
  sql
    .split(BREAKPOINT)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0)

/**
 * Applies the migrations not yet recorded in `__reins_migrations`, all in one IMMEDIATE
 * transaction (so a second process waits instead of racing). Throws the driver's error;
 * callers wrap it in Effect.try. Returns the tags it applied.
 */
export const migrate = (db: Database, now: number, list: ReadonlyArray<Migration> = migrations): Array<string> =>
  db
    .transaction(() => {
      db.run("CREATE TABLE IF NOT EXISTS __reins_migrations (tag text PRIMARY KEY NOT NULL, applied_at integer NOT NULL)")
      const applied = new Set(
        db
          .query<{ tag: string }, []>("SELECT tag FROM __reins_migrations")
          .all()
          .map((row) => row.tag)
      )
      const record = db.prepare<void, [string, number]>("INSERT INTO __reins_migrations (tag, applied_at) VALUES (?, ?)")
      const done: Array<string> = []
      for (const migration of list) {
        if (applied.has(migration.tag)) continue
        for (const statement of statements(migration.sql)) db.run(statement)
        record.run(migration.tag, now)
        done.push(migration.tag)
      }
      record.finalize()
      return done
    })
    .immediate()
