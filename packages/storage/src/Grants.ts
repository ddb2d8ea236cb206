import type { PermissionGrant } from "@reins/domain"
import { Context, Effect } from "effect"
import { utf8Order, type MemoryState, type SqliteDatabase } from "./Database.ts"
import { StoreError, toStoreError } from "./StoreError.ts"

/**
 * The "always" permission grants kept per project, as rows with ids (what `reins permissions`
 * lists and revokes). Not permission's `GrantStore` port (rules loaded and saved for a project):
 * the runtime adapts this to that, so permission never imports storage.
 */
export class Grants extends Context.Service<
  Grants,
  {
    /** The grants of one project (every project when undefined), by project, then creation time, then id. */
    list(project?: string): Effect.Effect<ReadonlyArray<PermissionGrant>, StoreError>
    /** Keeps a grant; the same (project, permission, pattern) again is a no-op that keeps the first row. */
    add(grant: PermissionGrant): Effect.Effect<void, StoreError>
    /** Deletes the grants with these ids; returns how many there were (unknown ids are skipped). */
    revoke(ids: ReadonlyArray<string>): Effect.Effect<number, StoreError>
  }
>()("reins/storage/Grants") {}

interface GrantRow {
  readonly id: string
  readonly project: string
  readonly permission: string
  readonly pattern: string
  readonly timeCreated: number
}
const GRANT_COLUMNS = "id, project, permission, pattern, time_created AS timeCreated"
const LIST_GRANTS = `SELECT ${GRANT_COLUMNS} FROM permission_grant ORDER BY project, time_created, id`
const LIST_PROJECT_GRANTS = `SELECT ${GRANT_COLUMNS} FROM permission_grant WHERE project = ?1 ORDER BY project, time_created, id`
// Only the unique (project, permission, pattern) index: a reused id is still an error.
const ADD_GRANT = `INSERT INTO permission_grant (id, project, permission, pattern, time_created) VALUES (?1, ?2, ?3, ?4, ?5)
  ON CONFLICT (project, permission, pattern) DO NOTHING`
const REVOKE_GRANTS = "DELETE FROM permission_grant WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id"

/** Grants over the SQLite `permission_grant` table (raw SQL; its schema and migration are drizzle's, in schema.ts). */
export const makeSqliteGrants = ({ client, file }: SqliteDatabase): Grants["Service"] => {
  const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })
  return Grants.of({
    list: Effect.fn("Grants.list")(function* (project?: string) {
      const rows = yield* attempt(
        () => (project === undefined ? "list permission grants" : `list the permission grants of ${project}`),
        () => (project === undefined ? client.query<GrantRow, []>(LIST_GRANTS).all() : client.query<GrantRow, [string]>(LIST_PROJECT_GRANTS).all(project))
      )
      return rows.map(
        (row): PermissionGrant => ({
          id: row.id,
          project: row.project,
          permission: row.permission,
          pattern: row.pattern,
          time: { created: row.timeCreated }
        })
      )
    }),
    add: Effect.fn("Grants.add")(function* (grant: PermissionGrant) {
      yield* attempt(
        () => `save permission grant ${grant.id}`,
        () =>
          client
            .query<void, [string, string, string, string, number]>(ADD_GRANT)
            .run(grant.id, grant.project, grant.permission, grant.pattern, grant.time.created)
      )
    }),
    revoke: Effect.fn("Grants.revoke")(function* (ids: ReadonlyArray<string>) {
      if (ids.length === 0) return 0
      const deleted = yield* attempt(
        () => `revoke ${ids.length} permission grants`,
        () => client.query<{ id: string }, [string]>(REVOKE_GRANTS).all(JSON.stringify([...ids]))
      )
      return deleted.length
    })
  })
}

// Same order as SQLite: project, time_created, id.
const grantOrder = (a: PermissionGrant, b: PermissionGrant) => utf8Order(a.project, b.project) || a.time.created - b.time.created || utf8Order(a.id, b.id)

const grantKey = (grant: PermissionGrant) => JSON.stringify([grant.project, grant.permission, grant.pattern])

/** Grants over the memory database's Map; behaves like the SQLite table (unique key, order). */
export const makeMemoryGrants = (state: MemoryState): Grants["Service"] => {
  const grants = state.grants
  return Grants.of({
    list: Effect.fn("Grants.list")(function* (project?: string) {
      return [...grants.values()].filter((grant) => project === undefined || grant.project === project).sort(grantOrder)
    }),
    add: Effect.fn("Grants.add")(function* (grant: PermissionGrant) {
      // Checked in this order so that it matches SQLite's ON CONFLICT on the unique index.
      const key = grantKey(grant)
      if ([...grants.values()].some((stored) => grantKey(stored) === key)) return
      if (grants.has(grant.id)) {
        return yield* new StoreError({
          reason: "io",
          message: `Could not save permission grant ${grant.id} in memory: one with that id is already stored.`
        })
      }
      grants.set(grant.id, grant)
    }),
    revoke: Effect.fn("Grants.revoke")(function* (ids: ReadonlyArray<string>) {
      let deleted = 0
      for (const id of new Set(ids)) if (grants.delete(id)) deleted++
      return deleted
    })
  })
}
