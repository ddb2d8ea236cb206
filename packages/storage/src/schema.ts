import type { Message, Part, Session } from "@reins/domain"
import { sql } from "drizzle-orm"
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core"

// Each session, message and part row keeps the whole domain object as JSON in `data`; the other
// columns exist only to query, sort and cascade. Change this file, then run `bun run generate` to
// add a migration.

/** One row per conversation. */
export const session = sqliteTable(
  "session",
  {
    id: text("id").primaryKey(),
    directory: text("directory").notNull(),
    parentID: text("parent_id"),
    title: text("title").notNull(),
    timeCreated: integer("time_created").notNull(),
    timeUpdated: integer("time_updated").notNull(),
    data: text("data", { mode: "json" }).$type<Session>().notNull()
  },
  (table) => [index("session_time_updated_idx").on(table.timeUpdated), index("session_directory_time_updated_idx").on(table.directory, table.timeUpdated)]
)

/** One row per user or assistant message; deleted with its session. */
export const message = sqliteTable(
  "message",
  {
    id: text("id").primaryKey(),
    sessionID: text("session_id")
      .notNull()
      .references(() => session.id, { onDelete: "cascade" }),
    timeCreated: integer("time_created").notNull(),
    data: text("data", { mode: "json" }).$type<Message>().notNull()
  },
  (table) => [
    index("message_session_id_idx").on(table.sessionID, table.id),
    // Compaction summaries only: the loop finds the newest one every step without reading the session.
    index("message_summary_idx").on(table.sessionID, table.id).where(sql`json_extract(data, '$.summary') IS NOT NULL`)
  ]
)

/** One row per message part; deleted with its message. */
export const part = sqliteTable(
  "part",
  {
    id: text("id").primaryKey(),
    messageID: text("message_id")
      .notNull()
      .references(() => message.id, { onDelete: "cascade" }),
    sessionID: text("session_id").notNull(),
    data: text("data", { mode: "json" }).$type<Part>().notNull()
  },
  (table) => [index("part_message_id_idx").on(table.messageID, table.id), index("part_session_id_idx").on(table.sessionID)]
)

/** One row per "always" reply kept for a project; a grant is small, so its columns are the whole of it. */
export const permissionGrant = sqliteTable(
  "permission_grant",
  {
    id: text("id").primaryKey(),
    project: text("project").notNull(),
    permission: text("permission").notNull(),
    pattern: text("pattern").notNull(),
    timeCreated: integer("time_created").notNull()
  },
  (table) => [
    // The same grant twice is one row: `addGrant` relies on it to be idempotent.
    uniqueIndex("permission_grant_project_permission_pattern_idx").on(table.project, table.permission, table.pattern),
    index("permission_grant_project_idx").on(table.project)
  ]
)

/**
 * The lease on a session (T5, issue 27): which process runs a turn of it, under which epoch, until
 * when (database time, ms); another process queues its message (`queued` counts them) or asks for an
 * abort instead of starting a second loop. Kept on release (holder "", expires 0) so epochs only grow.
 */
export const sessionRun = sqliteTable("session_run", {
  sessionID: text("session_id")
    .primaryKey()
    .references(() => session.id, { onDelete: "cascade" }),
  holder: text("holder").notNull(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  epoch: integer("epoch").notNull(),
  timeStarted: integer("time_started").notNull(),
  timeExpires: integer("time_expires").notNull(),
  queued: integer("queued").notNull(),
  abort: integer("abort").notNull().default(0)
})
