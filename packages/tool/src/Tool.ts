import { Effect, Schema, SchemaIssue } from "effect"
import { type ChangePreview, GenAiAttr, GenAiOperation, GenAiTracing, jsonAttribute, toolSpanName, type Attachment } from "@reins/domain"
import { Permission, type PermissionError, type AskRequest } from "@reins/permission"
import { Reducers } from "@reins/reduce"
import { Truncate, type Capture, type Direction } from "@reins/truncate"
import { shapeOutput } from "./Output.ts"
import { capPreview } from "./Preview.ts"
import { ToolHooks, type HookCall } from "./plugin/Hooks.ts"

/** What a tool call knows about where it runs. */
export interface ToolContext {
  readonly sessionID: string
  readonly messageID: string
  readonly callID: string
  /** Directory relative paths resolve against. */
  readonly cwd: string
  /**
   * Reports progress while the call runs (stored on the running part); tools throttle it. `quiet`: stored, not
   * announced to viewers (what a later reins needs, such as the process group to stop; the next report carries it).
   */
  readonly progress?: (metadata: Record<string, unknown>, options?: { readonly quiet?: boolean }) => Effect.Effect<void>
}

/** What a tool returns; `output` is what the model sees. */
export interface ToolResult {
  readonly title: string
  readonly output: string
  readonly metadata?: Record<string, unknown>
  /** Files for the model besides the text (read of an image); never truncated. */
  readonly attachments?: ReadonlyArray<Attachment>
}

/** What a tool's own code returns: define reduces and truncates it into a ToolResult. */
export interface RawResult extends ToolResult {
  /** A streamed output (bash): used instead of `output`. */
  readonly capture?: Capture
  /** Appended after reduction and truncation, so it is never cut (e.g. the exit code). */
  readonly trailer?: string
  /** The shell command behind the output: reducers are chosen by it. */
  readonly command?: string
  readonly exitCode?: number | null
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
  /** Which end of long output to keep (default head); `false` when the tool bounds its own output. */
  readonly truncate?: Direction | false
  /** Whether reducers may compact the output (default: when it is truncated). */
  readonly reduce?: boolean
  /** Whether `full_output` is offered when the output is cut (default true; every request carries the parameter). */
  readonly fullOutput?: boolean
  /** Offered to a session only while this holds (job_output once it has jobs); default always. */
  readonly offered?: (sessionID: string) => boolean
  /** What the call needs; an Effect when finding out takes work (the bash scan loads a parser). */
  readonly permissions?: (args: P["Type"], ctx: ToolContext) => ReadonlyArray<PermissionNeed> | Effect.Effect<ReadonlyArray<PermissionNeed>>
  /**
   * What the call would change, per file, shown with its permission question (the edit tools); worked
   * out only when a question is asked, and left out when it fails (execute then reports the problem).
   */
  readonly preview?: (args: P["Type"], ctx: ToolContext) => Effect.Effect<ReadonlyArray<ChangePreview>, unknown, R>
  readonly execute: (args: P["Type"], ctx: ToolContext) => Effect.Effect<RawResult, ToolError, R>
}

/** How long working out a question's diff may take before the question is asked without it. */
const PREVIEW_TIMEOUT = "2 seconds"

/**
 * The diff shown with a call's permission question: worked out only when the call will be asked about (not when it is
 * allowed or denied), never for a path outside the project or one the rules do not let the model read (its content
 * would be shown, and stored with the question), and never failing the call.
 */
const previewFor = (
  preview: Effect.Effect<ReadonlyArray<ChangePreview>, unknown>,
  requests: ReadonlyArray<AskRequest>,
  permission: Permission["Service"]
): Effect.Effect<ReadonlyArray<ChangePreview> | undefined> =>
  Effect.gen(function* () {
    if (requests.length === 0 || requests.some((r) => r.permission === "external_directory")) return undefined
    const judged = yield* permission.judge(requests[0]!.sessionID)
    const checks = requests.map((r) => judged(r).action)
    if (!checks.includes("ask") || checks.includes("deny")) return undefined
    const readable = requests.filter((r) => r.permission === "edit").every((r) => judged({ permission: "read", patterns: r.patterns }).action === "allow")
    if (!readable) return undefined
    const found = yield* preview.pipe(
      Effect.timeoutOption(PREVIEW_TIMEOUT),
      Effect.map((o) => (o._tag === "Some" ? capPreview(o.value) : undefined)),
      Effect.orElseSucceed(() => undefined),
      Effect.catchDefect(() => Effect.succeed(undefined))
    )
    return found !== undefined && found.length > 0 ? found : undefined
  })

/** A ready tool: all of define's wrapping applied, dependencies resolved. */
export interface Info {
  readonly id: string
  readonly description: string
  /** JSON Schema of the parameters, as sent to the model. */
  readonly parameters: Record<string, unknown>
  /** Offered to a session only while this holds (the registry asks before each step); absent: always. */
  readonly offered?: (sessionID: string) => boolean
  execute(args: unknown, ctx: ToolContext): Effect.Effect<ToolResult & { truncated: boolean; outputPath?: string }, ToolError>
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** T16: a bad-arguments message the model can act on. */
export const invalidArgumentsMessage = (tool: string, issues: ReadonlyArray<{ path?: ReadonlyArray<unknown>; message: string }>) =>
  `The ${tool} tool was called with invalid arguments: ` +
  issues
    .map(
      (i) =>
        `${i.path && i.path.length > 0 ? i.path.map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p))).join(".") : "(root)"}: ${i.message}`
    )
    .join("; ") +
  ". Please rewrite the input so it satisfies the schema."

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

type Checked<A> = { readonly ok: true; readonly args: A } | { readonly ok: false; readonly issues: ReadonlyArray<ArgumentIssue> }

/**
 * Models often send `null` for an optional field: it counts as absent. When the arguments without
 * their nulls do not fit, each null is given back in turn and kept where it fits better (a required
 * field that may be null).
 */
const checkDroppingNulls = <A>(check: (input: unknown) => Checked<A>, sent: unknown): Checked<A> => {
  if (!isRecord(sent)) return check(sent)
  const nulls = Object.keys(sent).filter((k) => sent[k] === null)
  let args: Record<string, unknown> = Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== null))
  let checked = check(args)
  for (const key of nulls) {
    if (checked.ok) break
    const tried = { ...args, [key]: null }
    const again = check(tried)
    if (again.ok || again.issues.length < checked.issues.length) {
      args = tried
      checked = again
    }
  }
  return checked
}

/** Offered on every tool whose output is cut: the model may ask for all of it. */
export const FULL_OUTPUT = "full_output"
const fullOutputSchema = {
  type: "boolean",
  description: "Return the complete output, without reduction or truncation. Only when you need every byte: large outputs cost context."
}

/** Splits `full_output` off the arguments before they are decoded by the tool's schema. */
const takeFullOutput = (raw: unknown): { args: unknown; full: boolean } => {
  if (!isRecord(raw) || !(FULL_OUTPUT in raw)) return { args: raw, full: false }
  const { [FULL_OUTPUT]: full, ...rest } = raw
  return { args: rest, full: full === true }
}

/** A problem with a call's arguments: where (a path into them) and what. */
export interface ArgumentIssue {
  readonly path?: ReadonlyArray<unknown>
  readonly message: string
}

/** Parameters given as a JSON Schema (MCP tools, plain custom tools) with the validator that checks them. */
export interface JsonParameters {
  readonly jsonSchema: Record<string, unknown>
  /** The problems with some arguments; empty when they are valid. */
  readonly validate: (args: unknown) => ReadonlyArray<ArgumentIssue>
}

/** A tool whose parameters are a JSON Schema: the same pipeline as `define`, arguments checked by `validate`. */
export interface JsonSpec<R> extends Omit<Spec<Schema.Top, R>, "parameters" | "permissions" | "preview" | "execute"> {
  readonly parameters: JsonParameters
  readonly permissions?: (args: Record<string, unknown>, ctx: ToolContext) => ReadonlyArray<PermissionNeed> | Effect.Effect<ReadonlyArray<PermissionNeed>>
  readonly execute: (args: Record<string, unknown>, ctx: ToolContext) => Effect.Effect<RawResult, ToolError, R>
}

/**
 * T14: wraps a tool once — decode arguments → permission → execute → truncate — inside a
 * `Tool.execute` span. Permission and Truncate are resolved when the tool is built.
 */
export const define = <P extends Schema.Top & { readonly DecodingServices: never }, R>(id: string, spec: Spec<P, R>) => {
  const decode = Schema.decodeUnknownExit(spec.parameters as Schema.Top & { readonly DecodingServices: never }, { errors: "all" })
  const check = (input: unknown): { readonly ok: true; readonly args: P["Type"] } | { readonly ok: false; readonly issues: ReadonlyArray<ArgumentIssue> } => {
    const decoded = decode(input)
    if (decoded._tag === "Success") return { ok: true, args: decoded.value as P["Type"] }
    const reason = decoded.cause.reasons.find((r) => r._tag === "Fail")
    return { ok: false, issues: reason && reason._tag === "Fail" ? formatIssue(reason.error.issue).issues : [{ message: "could not decode" }] }
  }
  return pipeline<P["Type"], R>(id, spec, check, Schema.toJsonSchemaDocument(spec.parameters).schema as Record<string, unknown>)
}

/** `define` for parameters given as a JSON Schema: invalid arguments get the same answer as a built-in's. */
export const defineJson = <R>(id: string, spec: JsonSpec<R>) => {
  const check = (
    input: unknown
  ): { readonly ok: true; readonly args: Record<string, unknown> } | { readonly ok: false; readonly issues: ReadonlyArray<ArgumentIssue> } => {
    const args = input === undefined ? {} : input
    const issues = spec.parameters.validate(args)
    if (issues.length > 0) return { ok: false, issues }
    return isRecord(args) ? { ok: true, args } : { ok: false, issues: [{ message: "expected an object" }] }
  }
  return pipeline<Record<string, unknown>, R>(id, spec, check, spec.parameters.jsonSchema)
}

const pipeline = <A, R>(
  id: string,
  spec: Omit<Spec<Schema.Top, R>, "parameters" | "permissions" | "preview" | "execute"> & {
    readonly permissions?: (args: A, ctx: ToolContext) => ReadonlyArray<PermissionNeed> | Effect.Effect<ReadonlyArray<PermissionNeed>>
    readonly preview?: (args: A, ctx: ToolContext) => Effect.Effect<ReadonlyArray<ChangePreview>, unknown, R>
    readonly execute: (args: A, ctx: ToolContext) => Effect.Effect<RawResult, ToolError, R>
  },
  check: (input: unknown) => { readonly ok: true; readonly args: A } | { readonly ok: false; readonly issues: ReadonlyArray<ArgumentIssue> },
  jsonSchema: Record<string, unknown>
) =>
  Effect.gen(function* () {
    const permission = yield* Permission
    const truncate = yield* Truncate
    const reducers = yield* Reducers
    const tracing = yield* GenAiTracing
    const services = yield* Effect.context<R>()
    const hooks = yield* ToolHooks
    const shaped = spec.truncate !== false
    const offerFull = shaped && spec.fullOutput !== false
    const parameters = withFullOutput(jsonSchema, offerFull)

    const run = (raw: unknown, ctx: ToolContext) =>
      Effect.gen(function* () {
        const { args: sent, full } = offerFull ? takeFullOutput(raw) : { args: raw, full: false }
        const checked = checkDroppingNulls(check, sent)
        if (!checked.ok) return yield* new ToolError({ reason: "invalid-arguments", message: invalidArgumentsMessage(id, checked.issues) })
        const args = checked.args
        const needs = spec.permissions?.(args, ctx) ?? []
        // with the context the tool was built in, as execute: settings the runtime provides (HomeDir)
        const list = Effect.isEffect(needs) ? yield* needs.pipe(Effect.provideContext(services)) : needs
        const requests = list.map((need) => ({ ...need, sessionID: ctx.sessionID, callID: ctx.callID }))
        const diffs = spec.preview ? yield* previewFor(spec.preview(args, ctx).pipe(Effect.provideContext(services)), requests, permission) : undefined
        yield* permission
          .authorize(diffs && diffs.length > 0 ? requests.map((r) => ({ ...r, diffs })) : requests)
          .pipe(Effect.mapError((e: PermissionError) => new ToolError({ reason: "permission", message: e.message })))
        const result = yield* spec.execute(args, ctx).pipe(Effect.provideContext(services))
        const trailer = (text: string) => {
          if (!result.trailer) return text
          const body = text.replace(/\n$/, "")
          return body.length > 0 ? `${body}\n\n${result.trailer}` : result.trailer
        }
        const attachments = result.attachments && result.attachments.length > 0 ? { attachments: result.attachments } : {}
        if (!shaped) return { title: result.title, output: trailer(result.output), metadata: result.metadata ?? {}, truncated: false, ...attachments }
        const cut = yield* shapeOutput(truncate, reducers, {
          tool: id,
          sessionID: ctx.sessionID,
          callID: ctx.callID,
          direction: spec.truncate ?? "head",
          reduce: spec.reduce ?? true,
          fullOutput: full,
          output: result.capture ?? result.output,
          ...(result.command !== undefined ? { command: result.command } : {}),
          ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
          ...(result.trailer !== undefined ? { trailer: result.trailer } : {})
        }).pipe(Effect.mapError((e) => new ToolError({ reason: "failed", message: trailer(e.message) })))
        if (cut.reduction) {
          const e = cut.reduction
          yield* Effect.annotateCurrentSpan({
            "reins.tool.reducer": e.reducer,
            "reins.tool.reduce.original_bytes": e.originalBytes,
            "reins.tool.reduce.compacted_bytes": e.compactedBytes,
            "reins.tool.reduce.reasons": e.reasons.join(",")
          })
        }
        yield* Effect.annotateCurrentSpan({ "reins.tool.truncated": cut.truncated, ...(cut.outputPath ? { "reins.tool.output_path": cut.outputPath } : {}) })
        return {
          title: result.title,
          output: trailer(cut.content),
          truncated: cut.truncated,
          ...attachments,
          ...(cut.outputPath ? { outputPath: cut.outputPath } : {}),
          metadata: {
            ...result.metadata,
            ...(cut.truncated ? { truncated: true, outputPath: cut.outputPath } : {}),
            ...(cut.reduction ? { reduction: cut.reduction } : {}),
            ...(full ? { fullOutput: true } : {})
          }
        }
      })

    // Plugin hooks (T20) around the pipeline: `tool.before` may rewrite the arguments (decoded and
    // permission-checked after it) or deny; `tool.after` may rewrite what the model sees.
    const execute = (raw: unknown, ctx: ToolContext) =>
      (hooks.length === 0
        ? run(raw, ctx)
        : Effect.gen(function* () {
            const call: HookCall = { tool: id, sessionID: ctx.sessionID, callID: ctx.callID, cwd: ctx.cwd, args: raw }
            let args = raw
            for (const hook of hooks) {
              if (!hook.before) continue
              const decision = yield* hook
                .before({ ...call, args })
                .pipe(
                  Effect.mapError(
                    (e) => new ToolError({ reason: "failed", message: `The ${id} call was not run: the hook ${hook.name} (tool.before) failed: ${e.message}` })
                  )
                )
              if (decision?.deny !== undefined) {
                return yield* new ToolError({ reason: "permission", message: `The ${id} call was denied by the hook ${hook.name}: ${decision.deny}` })
              }
              if (decision && "args" in decision) args = decision.args
            }
            let result: Effect.Success<ReturnType<typeof run>> = yield* run(args, ctx)
            for (const hook of hooks) {
              if (!hook.after) continue
              const decision = yield* hook
                .after({ ...call, args, result: { title: result.title, output: result.output, metadata: result.metadata ?? {} } })
                .pipe(
                  // the call already ran: a failed after-hook keeps its output and is reported
                  Effect.catch((e) =>
                    Effect.as(Effect.logWarning(`The hook ${hook.name} (tool.after) failed on ${id}: ${e.message}`), {
                      hookError: `${hook.name}: ${e.message}`
                    } as const)
                  )
                )
              if (decision && "hookError" in decision) {
                const metadata: Record<string, unknown> = result.metadata ?? {}
                const errors: ReadonlyArray<unknown> = Array.isArray(metadata.hookErrors) ? metadata.hookErrors : []
                result = { ...result, metadata: { ...result.metadata, hookErrors: [...errors, decision.hookError] } }
              } else if (decision?.output !== undefined) result = { ...result, output: decision.output }
            }
            return result
          })
      ).pipe((run) => traced(id, spec.description, raw, ctx, tracing.captureContent, run))

    return { id, description: spec.description, parameters, execute, ...(spec.offered ? { offered: spec.offered } : {}) } satisfies Info
  })

/**
 * The `execute_tool {tool}` span (INTERNAL) of one call, per the OpenTelemetry GenAI conventions; a
 * permission question it asks is its child. Arguments and result only when content capture is on.
 */
const traced = <A extends { readonly output: string }>(
  id: string,
  description: string,
  raw: unknown,
  ctx: ToolContext,
  captureContent: boolean,
  run: Effect.Effect<A, ToolError>
) =>
  Effect.gen(function* () {
    if (captureContent) yield* Effect.annotateCurrentSpan(GenAiAttr.toolArguments, jsonAttribute(raw))
    return yield* run.pipe(
      Effect.tap((result) => (captureContent ? Effect.annotateCurrentSpan(GenAiAttr.toolResult, result.output) : Effect.void)),
      Effect.tapError((error) => Effect.annotateCurrentSpan(GenAiAttr.errorType, error.reason))
    )
  }).pipe(
    Effect.withSpan(toolSpanName(id), {
      attributes: {
        [GenAiAttr.operation]: GenAiOperation.executeTool,
        [GenAiAttr.toolName]: id,
        [GenAiAttr.toolCallId]: ctx.callID,
        [GenAiAttr.toolType]: "function",
        [GenAiAttr.toolDescription]: firstLine(description),
        [GenAiAttr.conversationId]: ctx.sessionID
      }
    })
  )

/** A tool's description is its whole manual; the span carries its first line. */
const firstLine = (text: string) => text.split("\n", 1)[0]!.slice(0, 200)

/** Offers `full_output` on a JSON Schema of parameters (when the output is shaped). */
export const withFullOutput = (schema: Record<string, unknown>, offer: boolean) =>
  offer && isRecord(schema.properties) ? { ...schema, properties: { ...schema.properties, [FULL_OUTPUT]: fullOutputSchema } } : schema

/** Renders `{{name}}` placeholders in a `.txt` description. */
export const render = (template: string, vars: Record<string, string | number>) =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole)).trim()
