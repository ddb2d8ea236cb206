import type { Message, Part, PermissionGrant, Session, TextPart, ToolPart, UserMessage } from "@reins/domain"
import { Effect, type Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { ClaimRequest, ClaimResult } from "../src/RunClaims.ts"
import * as Storage from "../src/Storage.ts"
import type { StoreError } from "../src/StoreError.ts"

/** Both databases, each fresh, with every storage service over it: the same behaviour is asked of each. */
export const implementations: ReadonlyArray<readonly [string, () => Layer.Layer<Storage.Services, StoreError>]> = [
  ["memory", () => Storage.layerMemory],
  ["sqlite", () => Storage.layerSqlite(path.join(tempDir(), "reins.db"))]
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
