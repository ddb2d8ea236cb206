import { Console, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { PermissionGrant } from "@reins/domain"
import { Grants } from "@reins/storage"
import { usage } from "../CliError.ts"
import { time, withStore } from "../Store.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
const ids = Argument.String("id").pipe(Argument.withDescription("Grant ids to revoke (see reins permissions list)"), Argument.variadic())

const grantLine = (grant: PermissionGrant) => `${grant.id}  ${grant.permission}  ${grant.pattern}  (${time(grant.time.created)})`

const header = (project: string) => `Saved permission grants for ${project}:`

const PERSIST_HINT = '"always" replies are kept per session unless reins.json sets "permission_persist": "project".'

/** Grants grouped under one header per project; the store already orders them by project. */
const renderGrants = (grants: ReadonlyArray<PermissionGrant>) => {
  const lines: Array<string> = []
  let project: string | undefined
  for (const grant of grants) {
    if (grant.project !== project) {
      if (project !== undefined) lines.push("")
      project = grant.project
      lines.push(header(project))
    }
    lines.push(`  ${grantLine(grant)}`)
  }
  return lines.join("\n")
}

const list = Command.make(
  "list",
  {
    all: Flag.Boolean("all").pipe(Flag.withDescription("Grants of every project, not only this directory"), Flag.withDefault(false)),
    format
  },
  ({ all, format }) =>
    withStore((setup) =>
      Effect.gen(function* () {
        const grants = yield* (yield* Grants).list(all ? undefined : setup.cwd)
        if (format === "json") return yield* Console.log(JSON.stringify(grants, null, 2))
        if (grants.length === 0) {
          const where = all ? "in any project" : `for ${setup.cwd}`
          return yield* Console.log(`No saved permission grants ${where}. ${PERSIST_HINT}`)
        }
        yield* Console.log(renderGrants(grants))
      })
    )
).pipe(Command.withDescription('List the "always" permission grants saved for this project'))

const plural = (n: number) => (n === 1 ? "grant" : "grants")

const revoke = Command.make(
  "revoke",
  {
    ids,
    all: Flag.Boolean("all").pipe(Flag.withDescription("Revoke every grant of this directory"), Flag.withDefault(false))
  },
  ({ ids, all }) =>
    Effect.gen(function* () {
      if (all && ids.length > 0) return yield* usage("Pass grant ids or --all, not both; `reins permissions list` shows the ids")
      if (!all && ids.length === 0) {
        return yield* usage("Nothing to revoke: pass grant ids or --all; `reins permissions list` shows the ids")
      }
      return yield* withStore((setup) =>
        Effect.gen(function* () {
          const grants = yield* Grants
          // Every id must exist before any is revoked: a typo revokes nothing.
          const known = yield* grants.list(all ? setup.cwd : undefined)
          const byId = new Map(known.map((grant) => [grant.id, grant]))
          const unknown = [...new Set(ids)].filter((id) => !byId.has(id))
          if (unknown.length > 0) {
            return yield* usage(
              `Unknown permission ${plural(unknown.length)} ${unknown.join(", ")}; \`reins permissions list\` shows the ids (--all for every project)`
            )
          }
          const targets = all ? known : [...new Set(ids)].flatMap((id) => byId.get(id) ?? [])
          if (targets.length === 0) return yield* Console.log(`No saved permission grants for ${setup.cwd}; nothing to revoke.`)
          const revoked = yield* grants.revoke(targets.map((grant) => grant.id))
          for (const grant of targets) yield* Console.log(`Revoked ${grantLine(grant)}  ${grant.project}`)
          yield* Console.log(`${revoked} permission ${plural(revoked)} revoked.`)
        })
      )
    })
).pipe(Command.withDescription("Revoke saved permission grants by id, or --all of this directory"))

/** `reins permissions list|revoke`: the "always" grants kept per project. */
export const permissions = Command.make("permissions").pipe(
  Command.withDescription('List and revoke the "always" permission grants saved per project'),
  Command.withSubcommands([list, revoke])
)
