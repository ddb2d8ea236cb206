import type { Message, Part, Session } from "@reins/domain"
import { sql } from "drizzle-orm"
import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core"

// The PostgreSQL twin of schema.ts: the same tables and columns (a test compares them), with `jsonb` for the
// domain objects and `bigint` ms for times. Change both files, then run `bun run generate` (it writes a migration
// for each) and register the new files in src/Migrations.ts and src/PgMigrations.ts.

/** Milliseconds since the Unix epoch, read back as a JS number. */
const ms = (name: string) => bigint(name, { mode: "number" })

/** One row per conversation. */
export const session = pgTable(
  "session",
  {
    id: text("id").primaryKey(),
    directory: text("directory").notNull(),
    parentID: text("parent_id"),
    title: text("title").notNull(),
    timeCreated: ms("time_created").notNull(),
    timeUpdated: ms("time_updated").notNull(),
    data: jsonb("data").$type<Session>().notNull()
  },
  (table) => [
    index("session_time_updated_idx").on(table.timeUpdated),
    index("session_directory_time_updated_idx").on(table.directory, table.timeUpdated),
    index("session_parent_id_idx").on(table.parentID)
  ]
)

/** One row per user or assistant message; deleted with its session. */
export const message = pgTable(
  "message",
  {
    id: text("id").primaryKey(),
    sessionID: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    timeCreated: ms("time_created").notNull(),
    data: jsonb("data").$type<Message>().notNull()
  },
  (table) => [
    index("message_session_id_idx").on(table.sessionID, table.id),
    // Compaction summaries only: the loop finds the newest one every step without reading the session.
    index("message_summary_idx").on(table.sessionID, table.id).where(sql`(data->>'summary') IS NOT NULL`)
  ]
)

/** One row per message part; deleted with its message. */
export const part = pgTable(
  "part",
  {
    id: text("id").primaryKey(),
    messageID: text("message_id")
      .notNull()
      .references(() => message.id, { onDelete: "cascade" }),
    sessionID: text("session_id").notNull(),
    data: jsonb("data").$type<Part>().notNull()
  },
  (table) => [index("part_message_id_idx").on(table.messageID, table.id), index("part_session_id_idx").on(table.sessionID)]
)

/** One row per "always" reply kept for a project. */
export const permissionGrant = pgTable(
  "permission_grant",
  {
    id: text("id").primaryKey(),
    project: text("project").notNull(),
    permission: text("permission").notNull(),
    pattern: text("pattern").notNull(),
    timeCreated: ms("time_created").notNull()
  },
  (table) => [
    uniqueIndex("permission_grant_project_permission_pattern_idx").on(table.project, table.permission, table.pattern),
    index("permission_grant_project_idx").on(table.project)
  ]
)

/**
 * The lease on a session of the process running its turn (issue 27): (holder, epoch) with an expiry in database
 * time. Kept on release (holder '', time_expires 0) so that the epoch only grows.
 */
export const sessionRun = pgTable("session_run", {
  sessionID: text("session_id")
    .primaryKey()
    .references(() => session.id, { onDelete: "cascade" }),
  holder: text("holder").notNull(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  epoch: integer("epoch").notNull(),
  timeStarted: ms("time_started").notNull(),
  timeExpires: ms("time_expires").notNull(),
  queued: integer("queued").notNull(),
  abort: boolean("abort").notNull().default(false)
})

/** The durable event log: every event of every session, in commit order (`id`), numbered per session (`seq`). */
export const sessionEvent = pgTable(
  "session_event",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    sessionID: text("session_id").notNull(),
    rootSessionID: text("root_session_id").notNull(),
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    time: ms("time").notNull(),
    data: jsonb("data").notNull()
  },
  (table) => [
    uniqueIndex("session_event_session_id_seq_idx").on(table.sessionID, table.seq),
    index("session_event_root_session_id_id_idx").on(table.rootSessionID, table.id),
    index("session_event_time_idx").on(table.time)
  ]
)

/** Permission questions waiting for an answer, so that any process serving the session can list and answer them. */
export const permissionPending = pgTable(
  "permission_pending",
  {
    id: text("id").primaryKey(),
    sessionID: text("session_id").notNull(),
    rootSessionID: text("root_session_id").notNull(),
    timeCreated: ms("time_created").notNull(),
    data: jsonb("data").notNull(),
    reply: jsonb("reply")
  },
  (table) => [index("permission_pending_session_id_idx").on(table.sessionID), index("permission_pending_root_session_id_idx").on(table.rootSessionID)]
)
