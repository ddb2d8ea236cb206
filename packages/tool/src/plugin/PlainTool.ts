import { Effect, Schema } from "effect"
import { define, defineJson, ToolError, type PermissionNeed, type ToolContext } from "../Tool.ts"
import { describeError } from "./Hooks.ts"
import { objectSchema, schemaProblem, validateJsonSchema } from "./JsonSchema.ts"
import { isRecord } from "./Values.ts"

/** What a plain tool's `execute` is given besides its arguments. */
export interface PlainContext extends ToolContext {
  /** Aborted when the call is interrupted (the user pressed Ctrl+C, the turn ended). */
  readonly abort: AbortSignal
}

/**
 * A tool for people who do not use Effect: parameters as an Effect Schema or a JSON Schema, and
 * `execute` returning a string or `{ output, title?, metadata? }` (or a Promise of one).
 */
export interface PlainTool {
  readonly description: string
  readonly parameters?: Schema.Top | Record<string, unknown>
  readonly execute: (args: never, ctx: PlainContext) => unknown
}

/** Whether an export looks like a plain tool. */
export const isPlainTool = (v: unknown): v is PlainTool => isRecord(v) && typeof v.description === "string" && typeof v.execute === "function"

/** Why a plain tool cannot be used (its `parameters` are neither a Schema nor an object JSON Schema); undefined when it can. */
export const plainToolProblem = (plain: PlainTool): string | undefined =>
  plain.parameters === undefined || Schema.isSchema(plain.parameters)
    ? undefined
    : isRecord(plain.parameters)
      ? schemaProblem(plain.parameters)
      : "`parameters` must be an Effect Schema or a JSON Schema object"

const toRaw = (id: string, got: unknown) => {
  if (typeof got === "string") return { title: id, output: got }
  if (isRecord(got) && typeof got.output === "string") {
    return { title: typeof got.title === "string" ? got.title : id, output: got.output, ...(isRecord(got.metadata) ? { metadata: got.metadata } : {}) }
  }
  return { title: id, output: got === undefined ? "" : JSON.stringify(got, null, 2) }
}

/**
 * Makes a plain tool an ordinary one: the same pipeline as a built-in — arguments checked against
 * its schema (an invalid call is answered with what to fix), permission as its id (`"deploy": "ask"`
 * asks), truncation, spans. Check `plainToolProblem` first.
 */
export const fromPlain = (id: string, plain: PlainTool) => {
  const permissions = (): ReadonlyArray<PermissionNeed> => [{ permission: id, patterns: ["*"], always: ["*"], title: id }]
  const execute = (args: unknown, ctx: ToolContext) =>
    Effect.tryPromise({
      try: async (signal) => toRaw(id, await plain.execute(args as never, { ...ctx, abort: signal })),
      catch: (e) => new ToolError({ reason: "failed", message: `The ${id} tool failed: ${describeError(e)}` })
    })
  if (plain.parameters !== undefined && Schema.isSchema(plain.parameters)) {
    return define(id, {
      description: plain.description,
      parameters: plain.parameters as Schema.Top & { readonly DecodingServices: never },
      permissions,
      execute
    })
  }
  const schema = objectSchema(isRecord(plain.parameters) ? plain.parameters : {})
  return defineJson(id, {
    description: plain.description,
    parameters: { jsonSchema: schema, validate: (args) => validateJsonSchema(schema, args) },
    permissions,
    execute
  })
}
