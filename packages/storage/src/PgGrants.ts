import type { PermissionGrant } from "@reins/domain"
import { Effect } from "effect"
import type { Grants } from "./Grants.ts"
import { attemptPg, type PgDatabase } from "./PgDatabase.ts"
import { num } from "./PgSql.ts"

interface GrantRow {
  readonly id: string
  readonly project: string
  readonly permission: string
  readonly pattern: string
  readonly time_created: bigint | number
}

/** Grants over the PostgreSQL `permission_grant` table; the same order and unique key as SQLite's. */
export const makePgGrants = (db: PgDatabase): Grants["Service"] => {
  const { sql } = db
  return {
    list: Effect.fn("Grants.list")(function* (project?: string) {
      const rows = yield* attemptPg(
        db,
        () => (project === undefined ? "list permission grants" : `list the permission grants of ${project}`),
        sql.unsafe<GrantRow>(
          `SELECT id, project, permission, pattern, time_created FROM permission_grant WHERE ($1::text IS NULL OR project = $1)
            ORDER BY project COLLATE "C", time_created, id COLLATE "C"`,
          [project ?? null]
        )
      )
      return rows.map(
        (row): PermissionGrant => ({
          id: row.id,
          project: row.project,
          permission: row.permission,
          pattern: row.pattern,
          time: { created: num(row.time_created) }
        })
      )
    }),
    add: Effect.fn("Grants.add")(function* (grant: PermissionGrant) {
      yield* attemptPg(
        db,
        () => `save permission grant ${grant.id}`,
        // Only the unique (project, permission, pattern) index: a reused id is still an error.
        sql.unsafe(
          `INSERT INTO permission_grant (id, project, permission, pattern, time_created) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (project, permission, pattern) DO NOTHING`,
          [grant.id, grant.project, grant.permission, grant.pattern, grant.time.created]
        )
      )
    }),
    revoke: Effect.fn("Grants.revoke")(function* (ids: ReadonlyArray<string>) {
      if (ids.length === 0) return 0
      const deleted = yield* attemptPg(
        db,
        () => `revoke ${ids.length} permission grants`,
        sql.unsafe<{ id: string }>("DELETE FROM permission_grant WHERE id = ANY($1) RETURNING id", [[...ids]])
      )
      return deleted.length
    })
  }
}
