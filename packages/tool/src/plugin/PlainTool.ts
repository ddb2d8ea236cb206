import { Effect, Schema } from "effect"
import { define, invalidArgumentsMessage, withFullOutput, ToolError, type Info, type ToolContext } from "../Tool.ts"
import { describeError } from "./Hooks.ts"

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

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Whether an export looks like a plain tool. */
export const isPlainTool = (v: unknown): v is PlainTool => isRecord(v) && typeof v.description === "string" && typeof v.execute === "function"

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  array: Array.isArray,
  object: isRecord,
  null: (v) => v === null
}

/** The checks a model's mistakes usually need (required keys, top-level types); the tool checks the rest. */
const checkJsonSchema = (schema: Record<string, unknown>, args: unknown) => {
  if (!isRecord(args)) return [{ message: "Expected an object of arguments" }]
  const issues: Array<{ path?: ReadonlyArray<string>; message: string }> = []
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : []
  for (const key of required) if (!(key in args)) issues.push({ path: [key], message: "Missing key" })
  const properties = isRecord(schema.properties) ? schema.properties : {}
  for (const [key, value] of Object.entries(args)) {
    const prop = properties[key]
    if (!isRecord(prop) || typeof prop.type !== "string") continue
    const ok = JSON_TYPES[prop.type]
    if (ok && !ok(value)) issues.push({ path: [key], message: `Expected ${prop.type}, got ${JSON.stringify(value)}` })
  }
  return issues
}

const toRaw = (id: string, got: unknown) => {
  if (typeof got === "string") return { title: id, output: got }
  if (isRecord(got) && typeof got.output === "string") {
    return { title: typeof got.title === "string" ? got.title : id, output: got.output, ...(isRecord(got.metadata) ? { metadata: got.metadata } : {}) }
  }
  return { title: id, output: got === undefined ? "" : JSON.stringify(got, null, 2) }
}

/** Makes a plain tool an ordinary one: the same pipeline (permission as its id, truncation, spans). */
export const fromPlain = (id: string, plain: PlainTool) => {
  const run = (args: unknown, ctx: ToolContext) =>
    Effect.tryPromise({
      try: async (signal) => toRaw(id, await plain.execute(args as never, { ...ctx, abort: signal })),
      catch: (e) => new ToolError({ reason: "failed", message: `The ${id} tool failed: ${describeError(e)}` })
    })
  if (plain.parameters !== undefined && Schema.isSchema(plain.parameters)) {
    return define(id, { description: plain.description, parameters: plain.parameters as Schema.Top & { readonly DecodingServices: never }, execute: run })
  }
  const json = isRecord(plain.parameters) ? plain.parameters : { type: "object", properties: {} }
  return define(id, {
    description: plain.description,
    parameters: Schema.Unknown,
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const issues = checkJsonSchema(json, args)
        if (issues.length > 0) return yield* new ToolError({ reason: "invalid-arguments", message: invalidArgumentsMessage(id, issues) })
        return yield* run(args, ctx)
      })
  }).pipe(Effect.map((info): Info => ({ ...info, parameters: withFullOutput(json, true) })))
}
