import { Schema } from "effect"

/** An "always" reply kept for a project: allow `permission` on `pattern` in `project` (a directory). */
export const PermissionGrant = Schema.Struct({
  id: Schema.String,
  project: Schema.String,
  permission: Schema.String,
  pattern: Schema.String,
  time: Schema.Struct({ created: Schema.Number })
})
export type PermissionGrant = typeof PermissionGrant.Type
