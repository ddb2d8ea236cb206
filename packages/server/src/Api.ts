// The HTTP API of `reins serve`: its routes, inputs and outputs as schemas (those of `domain` where they exist).
// The OpenAPI document at /doc is generated from this definition.
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Message, Part, PermissionAsked, Session, TurnResult } from "@reins/domain"

/** 400: an input the schema refused (the message names the field), or a request that cannot be done as asked. */
export class BadRequest extends Schema.Error<BadRequest>("reins/server/BadRequest")(
  { error: Schema.tag("bad_request"), message: Schema.String },
  { httpApiStatus: 400 }
) {}
/** 404: no such session, message or waiting permission question. */
export class NotFound extends Schema.Error<NotFound>("reins/server/NotFound")(
  { error: Schema.tag("not_found"), message: Schema.String },
  { httpApiStatus: 404 }
) {}
/** 409: the session's turn is running where that is not allowed (delete, compact). */
export class Conflict extends Schema.Error<Conflict>("reins/server/Conflict")({ error: Schema.tag("busy"), message: Schema.String }, { httpApiStatus: 409 }) {}
/** 409: an undo or redo would overwrite files changed since the turns it takes back (named; `force` overwrites them). */
export class FilesChanged extends Schema.Error<FilesChanged>("reins/server/FilesChanged")(
  { error: Schema.tag("files_changed"), message: Schema.String, paths: Schema.Array(Schema.String) },
  { httpApiStatus: 409 }
) {}
/** 500: the store, the provider or the runtime failed; the message says what. */
export class ServerFailure extends Schema.Error<ServerFailure>("reins/server/ServerFailure")(
  { error: Schema.tag("failed"), message: Schema.String },
  { httpApiStatus: 500 }
) {}

/** A message with its parts, as the store and `reins sessions export` have it. */
export const MessageWithParts = Schema.Struct({ info: Message, parts: Schema.Array(Part) })

const Totals = Schema.Struct({
  messages: Schema.Number,
  steps: Schema.Number,
  usage: Schema.Struct({ input: Schema.Number, output: Schema.Number, reasoning: Schema.Number, cacheRead: Schema.Number, cacheWrite: Schema.Number }),
  cost: Schema.Number
})

/** A session with what it has cost so far. */
export const SessionWithTotals = Schema.Struct({
  ...Session.fields,
  totals: Totals,
  /** The cluster runner (HOST:PORT) running the session's turn, while one runs on a runner (`reins serve --runner`). */
  runner: Schema.optional(Schema.String)
})

/** A prompt: the message, and optionally the model (`provider/model`), agent and variant of its turn. */
export const PromptBody = Schema.Struct({
  text: Schema.String.check(Schema.isMinLength(1)),
  model: Schema.optional(Schema.String),
  agent: Schema.optional(Schema.String),
  variant: Schema.optional(Schema.String)
})

/** What an undo (revert) or redo (unrevert) did: the user messages taken back or restored, the files restored. */
export const Reverted = Schema.Struct({
  sessionID: Schema.String,
  /** The first user message undone (for a redo: the one the undo had started at). */
  messageID: Schema.String,
  messages: Schema.Array(Schema.String),
  files: Schema.Array(Schema.String),
  /** Paths left as they are, and why (over the size cap, a directory holding files not checkpointed). */
  skipped: Schema.Array(Schema.Struct({ path: Schema.String, reason: Schema.String }))
})

/** A message queued into the session's running turn (T5): the model reads it at that turn's next step. */
export const Queued = Schema.Struct({ queued: Schema.Literal(true), messageID: Schema.String })

const errors = [BadRequest, NotFound, ServerFailure] as const
const id = { id: Schema.String }

const system = HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", {
    success: Schema.Struct({
      ok: Schema.Boolean,
      version: Schema.String,
      directory: Schema.String,
      /** Clients connected to /event now, and the id of the last event. */
      events: Schema.Struct({ clients: Schema.Number, lastEventId: Schema.Number })
    })
  }),
  HttpApiEndpoint.get("doc", "/doc", { success: Schema.Unknown }).annotate(OpenApi.Description, "This OpenAPI 3.1 document."),
  HttpApiEndpoint.get("config", "/config", { success: Schema.Unknown }).annotate(
    OpenApi.Description,
    "The merged config; API keys and header values redacted."
  ),
  HttpApiEndpoint.get("models", "/models", { success: Schema.Unknown }).annotate(
    OpenApi.Description,
    "The model catalogue, as `reins models --format json` prints it."
  ),
  HttpApiEndpoint.get("event", "/event", {
    query: {
      sessionID: Schema.optional(Schema.String),
      lastEventId: Schema.optional(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))),
      token: Schema.optional(Schema.String)
    },
    success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))
  }).annotate(
    OpenApi.Description,
    "Server-Sent Events: every SessionEvent of every turn, then turn.finished / turn.failed. `id:` is a server-wide increasing integer; " +
      "reconnect with Last-Event-ID (or ?lastEventId=) to replay from the bounded buffer (server.gap when too old). " +
      "A client that falls behind its bounded queue gets server.disconnected and the stream ends. " +
      "Past the server's limit of open streams (--max-clients), 503 too_many_clients."
  )
)

const sessions = HttpApiGroup.make("session", { topLevel: true }).add(
  HttpApiEndpoint.get("list", "/session", {
    query: { limit: Schema.optional(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThan(0))) },
    success: Schema.Array(Session),
    error: errors
  }),
  HttpApiEndpoint.post("create", "/session", {
    // no body at all (or null) is no field set
    payload: [Schema.Struct({ title: Schema.optional(Schema.String), parentID: Schema.optional(Schema.String) }), Schema.Null],
    success: Session.pipe(HttpApiSchema.status(201)),
    error: errors
  }),
  HttpApiEndpoint.get("get", "/session/:id", { params: id, success: SessionWithTotals, error: errors }),
  HttpApiEndpoint.delete("remove", "/session/:id", { params: id, success: HttpApiSchema.NoContent, error: [...errors, Conflict] }),
  HttpApiEndpoint.post("fork", "/session/:id/fork", {
    params: id,
    payload: [
      Schema.Struct({ messageID: Schema.optional(Schema.String), files: Schema.optional(Schema.Boolean), force: Schema.optional(Schema.Boolean) }),
      Schema.Null
    ],
    success: Session.pipe(HttpApiSchema.status(201)),
    error: [...errors, Conflict, FilesChanged]
  }).annotate(
    OpenApi.Description,
    "A new session with a copy of the conversation up to and including messageID (all of it without one); files: true also brings the session's files back to that point, in place (the later turns' changes undone; 409 files_changed names files changed since, which force: true overwrites; 409 while a turn runs)."
  ),
  HttpApiEndpoint.get("messages", "/session/:id/message", { params: id, success: Schema.Array(MessageWithParts), error: errors }),
  HttpApiEndpoint.get("export", "/session/:id/export", {
    params: id,
    success: Schema.Struct({ version: Schema.Number, session: Session, messages: Schema.Array(MessageWithParts) }),
    error: errors
  }),
  HttpApiEndpoint.post("prompt", "/session/:id/message", {
    params: id,
    payload: PromptBody,
    success: [TurnResult, Queued.pipe(HttpApiSchema.status(202))],
    error: [...errors, Conflict]
  }).annotate(OpenApi.Description, "Runs a turn and answers with its result; to a session whose turn is running, the message is queued into it (202)."),
  HttpApiEndpoint.post("promptAsync", "/session/:id/prompt_async", {
    params: id,
    payload: PromptBody,
    success: Schema.Struct({ sessionID: Schema.String, queued: Schema.Boolean, messageID: Schema.optional(Schema.String) }).pipe(HttpApiSchema.status(202)),
    error: [...errors, Conflict]
  }).annotate(OpenApi.Description, "Starts a turn (or queues the message into the running one) and answers at once; the turn's progress is on /event."),
  HttpApiEndpoint.post("abort", "/session/:id/abort", { params: id, success: Schema.Struct({ aborted: Schema.Boolean }), error: errors }),
  HttpApiEndpoint.get("permissions", "/session/:id/permissions", { params: id, success: Schema.Array(PermissionAsked), error: errors }).annotate(
    OpenApi.Description,
    "The permission questions waiting in the session and its sub-agents' sessions, asked by any reins process on the same database; answer one with POST /session/{id}/permissions/{permissionID}."
  ),
  HttpApiEndpoint.post("permission", "/session/:id/permissions/:permissionID", {
    params: { id: Schema.String, permissionID: Schema.String },
    payload: Schema.Struct({ response: Schema.Literals(["once", "always", "reject"]), message: Schema.optional(Schema.String) }),
    success: Schema.Struct({ ok: Schema.Boolean }),
    error: errors
  }),
  HttpApiEndpoint.post("revert", "/session/:id/revert", {
    params: id,
    payload: [
      Schema.Struct({
        messageID: Schema.optional(Schema.String),
        files: Schema.optional(Schema.Boolean),
        conversation: Schema.optional(Schema.Boolean),
        force: Schema.optional(Schema.Boolean)
      }),
      Schema.Null
    ],
    success: Reverted,
    error: [...errors, Conflict, FilesChanged]
  }).annotate(
    OpenApi.Description,
    "Undoes the session back to before a user message (messageID; default the last one not undone): the files its turns changed restored (files: false to leave them) and its messages kept but no longer sent to the model (conversation: false to leave them); 409 files_changed names files changed since, which force: true overwrites."
  ),
  HttpApiEndpoint.post("unrevert", "/session/:id/unrevert", {
    params: id,
    payload: [Schema.Struct({ force: Schema.optional(Schema.Boolean) }), Schema.Null],
    success: Reverted,
    error: [...errors, Conflict, FilesChanged]
  }).annotate(OpenApi.Description, "Takes back the session's undo: its files and messages as its turns left them."),
  HttpApiEndpoint.post("summarize", "/session/:id/summarize", {
    params: id,
    payload: [Schema.Struct({ model: Schema.optional(Schema.String) }), Schema.Null],
    success: Schema.Struct({
      sessionID: Schema.String,
      summaryMessageID: Schema.String,
      tokensBefore: Schema.Number,
      tokensAfter: Schema.Number,
      pruned: Schema.Array(Schema.String),
      summarised: Schema.Array(Schema.String),
      summary: Schema.String
    }),
    error: [...errors, Conflict]
  })
)

/** The API `reins serve` serves. */
export class ReinsApi extends HttpApi.make("reins")
  .add(system)
  .add(sessions)
  .annotateMerge(
    OpenApi.annotations({
      title: "reins server",
      description:
        "Sessions, turns and their live events. Every route needs `Authorization: Bearer <token>` when the server has a token (else 401). " +
        "A server without one answers only requests whose Host is a loopback name (localhost, 127.0.0.1, [::1]) and that carry no Origin " +
        "or one given with --cors (else 403 forbidden)."
    })
  ) {}
