import { Effect, Schema, SchemaIssue } from "effect"
import { Permission, PermissionError, type AskRequest } from "@reins/permission"
import { Truncate, type Direction } from "@reins/truncate"

/** What a tool call knows about where it runs. */
export interface ToolContext {
  readonly sessionID: string
  readonly messageID: string
  readonly callID: string
  /** Directory relative paths resolve against. */
  readonly cwd: string
}

/** What a tool returns; `output` is what the model sees. */
export interface ToolResult {
  readonly title: string
  readonly output: string
  readonly metadata?: Record<string, unknown>
}

/** A tool call that failed; the message is written for the model. */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  reason: Schema.Literals(["invalid-arguments", "permission", "failed", "timeout"]),
  message: Schema.String
}) {}

/** A permission a call needs: the tool decides the subjects (paths, commands). */
export type PermissionNeed = Omit<AskRequest, "sessionID" | "callID">

/** How a tool is written: schema, description, permission needs and the work itself. */
export interface Spec<P extends Schema.Top, R> {
  readonly description: string
  readonly parameters: P
  /** Which end of long output to keep; `false` when the tool bounds its own output. */
  readonly truncate?: Direction | false
  readonly permissions?: (args: P["Type"], ctx: ToolContext) => ReadonlyArray<PermissionNeed>
  readonly execute: (args: P["Type"], ctx: ToolContext) => Effect.Effect<ToolResult, ToolError, R>
}

/** A ready tool: all of define's wrapping applied, dependencies resolved. */
export interface Info {
  readonly id: string
  readonly description: string
  /** JSON Schema of the parameters, as sent to the model. */
  readonly parameters: Record<string, unknown>
  execute(args: unknown, ctx: ToolContext): Effect.Effect<ToolResult & { truncated: boolean; outputPath?: string }, ToolError>
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** T16: a bad-arguments message the model can act on. */
export const invalidArgumentsMessage = (tool: string, issues: ReadonlyArray<{ path?: ReadonlyArray<unknown>; message: string }>) =>
  `The ${tool} tool was called with invalid arguments: ` +
  issues.map((i) => `${i.path && i.path.length > 0 ? i.path.map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p))).join(".") : "(root)"}: ${i.message}`).join("; ") +
  ". Please rewrite the input so it satisfies the schema."

// Models often send `null` for an optional field; treat it as absent.
const dropNulls = (args: unknown) =>
  typeof args === "object" && args !== null && !Array.isArray(args)
    ? Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null))
    : args

/**
 * T14: wraps a tool once — decode arguments → permission → execute → truncate — inside a
 * `Tool.execute` span. Permission and Truncate are resolved when the tool is built.
 */
export const define = <P extends Schema.Top & { readonly DecodingServices: never }, R>(id: string, spec: Spec<P, R>) =>
  Effect.gen(function* () {
    const permission = yield* Permission
    const truncate = yield* Truncate
    const services = yield* Effect.context<R>()
    const decode = Schema.decodeUnknownExit(spec.parameters as Schema.Top & { readonly DecodingServices: never }, { errors: "all" })
    const parameters = Schema.toJsonSchemaDocument(spec.parameters).schema as Record<string, unknown>

    const execute = (raw: unknown, ctx: ToolContext) =>
      Effect.gen(function* () {
        const decoded = decode(dropNulls(raw))
        if (decoded._tag === "Failure") {
          const reason = decoded.cause.reasons.find((r) => r._tag === "Fail")
          const issues = reason && reason._tag === "Fail" ? formatIssue(reason.error.issue).issues : [{ message: "could not decode" }]
          return yield* new ToolError({ reason: "invalid-arguments", message: invalidArgumentsMessage(id, issues) })
        }
        const args = decoded.value as P["Type"]
        for (const need of spec.permissions?.(args, ctx) ?? []) {
          yield* permission.ask({ ...need, sessionID: ctx.sessionID, callID: ctx.callID }).pipe(
            Effect.mapError((e: PermissionError) => new ToolError({ reason: "permission", message: e.message }))
          )
        }
        const result = yield* spec.execute(args, ctx).pipe(Effect.provideContext(services))
        if (spec.truncate === false) return { ...result, truncated: false }
        const cut = yield* truncate
          .apply(result.output, { direction: spec.truncate ?? "head", sessionID: ctx.sessionID, callID: ctx.callID })
          .pipe(Effect.mapError((e) => new ToolError({ reason: "failed", message: e.message })))
        return {
          ...result,
          output: cut.content,
          truncated: cut.truncated,
          ...(cut.outputPath ? { outputPath: cut.outputPath } : {}),
          metadata: { ...result.metadata, ...(cut.truncated ? { truncated: true, outputPath: cut.outputPath } : {}) }
        }
      }).pipe(
        Effect.withSpan("Tool.execute", {
          attributes: { "tool.name": id, "tool.call_id": ctx.callID, "session.id": ctx.sessionID }
        })
      )

    return { id, description: spec.description, parameters, execute } satisfies Info
  })

/** Renders `{{name}}` placeholders in a `.txt` description. */
export const render = (template: string, vars: Record<string, string | number>) =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole)).trim()
