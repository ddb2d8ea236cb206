import type { Message, Part, PermissionGrant, Session, TextPart, ToolPart, UserMessage } from "@reins/domain"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ClaimRequest, ClaimResult } from "../src/RunClaims.ts"
import * as Storage from "../src/Storage.ts"
import type { StoreError } from "../src/StoreError.ts"

/** The PostgreSQL server the tests may use (scripts/pg-test.sh starts one); without it the PostgreSQL tests skip. */
export const pgUrl = process.env.REINS_TEST_PG_URL || undefined

/**
 * PostgreSQL at `pgUrl` in a schema of its own (its search_path set through the URL's `options`), created empty
 * when the layer is built and dropped with everything in it when the layer closes: tests never see each other.
 */
export const layerPostgresFresh = (url: string): Layer.Layer<Storage.Services, StoreError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const schema = yield* freshSchema(url)
      return Storage.layerPostgres(withSearchPath(url, schema))
    })
  )

/** A new empty schema on the server at `url`, dropped (with its tables) when the scope closes. */
export const freshSchema = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const schema = `t_${crypto.randomUUID().replaceAll("-", "")}`
      await admin(url, `CREATE SCHEMA ${schema}`)
      return schema
    }),
    (schema) => Effect.promise(() => admin(url, `DROP SCHEMA ${schema} CASCADE`))
  )

/** `url` with its connections' search_path set to `schema`. */
export const withSearchPath = (url: string, schema: string) => {
  const parsed = new URL(url)
  parsed.searchParams.set("options", `-c search_path=${schema}`)
  return parsed.toString()
}

/** Runs one statement on its own short-lived connection. */
export const admin = (url: string, statement: string): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(Reactivity.layer), Effect.scoped, Effect.orDie)
  )

/** Every database, each fresh, with every storage service over it: the same behaviour is asked of each. */
export const implementations: ReadonlyArray<readonly [string, () => Layer.Layer<Storage.Services, StoreError>]> = [
  ["memory", () => Storage.layerMemory],
  ["sqlite", () => Storage.layerSqlite(path.join(tempDir(), "reins.db"))],
  ...(pgUrl === undefined ? [] : [["postgres", () => layerPostgresFresh(pgUrl)] as const])
]

/** A claim of the session by process `pid` on `host` (its holder names both), for a lease of `ttlMs`. */
export const claim = (
  sessionID: string,
  pid: number,
  options: { readonly host?: string; readonly ttlMs?: number; readonly takesMessages?: boolean } = {}
): ClaimRequest => {
  const host = options.host ?? "box"
  return { sessionID, holder: `${host}/${pid}/test`, host, pid, takesMessages: options.takesMessages ?? true, ttlMs: options.ttlMs ?? 600_000 }
}

/** The lease a claim took; dies (failing the test) when the session was held. */
export const claimed = (result: ClaimResult) => (result._tag === "claimed" ? Effect.succeed(result.run) : Effect.die(new Error(`held by ${result.run.holder}`)))

/** Runs an effect against a layer, building and closing the layer around it. */
export const run = <A, E, LE, S extends Storage.Services>(layer: Layer.Layer<S, LE>, effect: Effect.Effect<A, E, S>) =>
  Effect.runPromise(effect.pipe(Effect.provide(layer)))

/** A fresh temporary directory. */
export const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "reins-storage-"))

export const session = (id: string, options: Partial<Omit<Session, "id">> & { updated?: number } = {}): Session => ({
  id,
  title: options.title ?? `title of ${id}`,
  directory: options.directory ?? "/work/project",
  ...(options.parentID === undefined ? {} : { parentID: options.parentID }),
  time: options.time ?? { created: 1_000, updated: options.updated ?? 1_000 }
})

export const userMessage = (id: string, sessionID: string, created = 1_000): UserMessage => ({
  id,
  sessionID,
  role: "user",
  time: { created }
})

export const assistantMessage = (id: string, sessionID: string, parentID: string): Message => ({
  id,
  sessionID,
  role: "assistant",
  parentID,
  model: { providerID: "test", modelID: "scripted" },
  time: { created: 2_000 },
  usage: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: 0
})

export const textPart = (id: string, message: Message, text: string): TextPart => ({
  id,
  sessionID: message.sessionID,
  messageID: message.id,
  type: "text",
  text
})

export const toolPart = (id: string, message: Message): ToolPart => ({
  id,
  sessionID: message.sessionID,
  messageID: message.id,
  type: "tool",
  callID: `call-${id}`,
  tool: "bash",
  state: { status: "completed", input: { command: "ls" }, output: "a\nb", title: "ls", metadata: {}, time: { start: 1, end: 2 } }
})

/** Part ids of each message, to compare orderings compactly. */
export const shape = (rows: ReadonlyArray<{ info: Message; parts: ReadonlyArray<Part> }>) =>
  rows.map((row) => [row.info.id, row.parts.map((part) => part.id)] as const)

/** A permission grant; `project` defaults to the same directory as `session`. */
export const grant = (id: string, options: Partial<Omit<PermissionGrant, "id" | "time">> & { created?: number } = {}): PermissionGrant => ({
  id,
  project: options.project ?? "/work/project",
  permission: options.permission ?? "bash",
  pattern: options.pattern ?? `pattern of ${id}`,
  time: { created: options.created ?? 1_000 }
})
