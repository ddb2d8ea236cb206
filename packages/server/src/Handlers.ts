// The handlers of the API's routes, over the runtime's services and the server's own (turns, events, info).
import { Cause, Effect, Exit, Fiber, Layer, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { realPath } from "@reins/domain"
import { Permission } from "@reins/permission"
import {
  Agents,
  SessionRouting,
  SessionService,
  Sessions,
  agentModel,
  type PromptError,
  type PromptInput,
  type RoutedFailure,
  type ForkFailure,
  type SessionBusyError,
  type UndoError
} from "@reins/session"
import { SessionStore, runnerOfHolder, sessionNotFound, type StoreError } from "@reins/storage"
import type { RestoreConflict } from "@reins/workspace"
import { BadRequest, Conflict, FilesChanged, NotFound, ReinsApi, ServerFailure } from "./Api.ts"
import { errorResponse } from "./Guard.ts"
import type { Subscriber } from "./EventHub.ts"
import { ServerEvents } from "./ServerEvents.ts"
import { ServerInfo } from "./ServerInfo.ts"
import { ServerTurns } from "./ServerTurns.ts"

/** A comment line every 5 s keeps proxies and clients from closing an idle stream. */
const HEARTBEAT_MS = 5_000

/**
 * A client's event stream as the response body: a web stream the server reads with promises, so each batch of frames
 * goes to the socket as soon as the hub has it (as an effect Stream, each frame waited at every fiber hop behind the
 * sessions' work under load), and a ping every HEARTBEAT_MS. The client going away, or the hub ending it, closes it.
 */
const sseBody = (client: Subscriber) => {
  let ping: ReturnType<typeof setInterval> | undefined
  const stop = () => {
    clearInterval(ping)
    client.close()
  }
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      // started by the first read: a body never handed to the server (the request cut short) leaves no timer behind
      ping ??= setInterval(() => {
        try {
          controller.enqueue(encoder.encode(": ping\n\n"))
        } catch {
          stop()
        }
      }, HEARTBEAT_MS)
      const batch = await client.next()
      if (batch === undefined) {
        stop()
        controller.close()
      } else controller.enqueue(encoder.encode(batch.join("")))
    },
    cancel: stop
  })
}

const fromStore = (e: StoreError) => (e.reason === "not-found" ? new NotFound({ message: e.message }) : new ServerFailure({ message: e.message }))

/** A use case's failure as the API answers it, from its tag and reason: here, or as the session's cluster runner said it. */
const fromFailure = (e: RoutedFailure) => {
  switch (e.tag) {
    case "StoreError":
      return e.reason === "not-found" ? new NotFound({ message: e.message }) : new ServerFailure({ message: e.message })
    case "SessionBusyError":
      return new Conflict({ message: e.message })
    case "CompactionError":
      return e.reason === "template" || e.reason === "config" || e.reason === "nothing-to-summarise"
        ? new BadRequest({ message: e.message })
        : e.reason === "undo-pending"
          ? new Conflict({ message: e.message })
          : new ServerFailure({ message: e.message })
    case "ProviderError":
      return e.reason === "invalid" ? new BadRequest({ message: e.message }) : new ServerFailure({ message: e.message })
    case "Interrupted":
      return new Conflict({ message: e.message })
    default:
      return new ServerFailure({ message: e.message })
  }
}

const fromPrompt = (e: PromptError) => fromFailure({ tag: e._tag, ...("reason" in e ? { reason: e.reason } : {}), message: e.message })

/** An undo's or redo's failure: files changed since (409, named), a busy session (409), nothing to undo or a bad message (400). */
const fromUndo = (e: StoreError | SessionBusyError | UndoError | RestoreConflict) => {
  switch (e._tag) {
    case "RestoreConflict":
      return new FilesChanged({ message: e.message, paths: [...e.paths] })
    case "UndoError":
      return new BadRequest({ message: e.message })
    case "SessionBusyError":
      return new Conflict({ message: e.message })
    default:
      return fromStore(e)
  }
}

/** A fork's failure: as an undo's, and a copy refused (never asked for here) a bad request. */
const fromFork = (e: ForkFailure | SessionBusyError) => (e._tag === "CopyError" ? new BadRequest({ message: e.message }) : fromUndo(e))

/** The cluster could not reach the session's runner: the request can be sent again. */
const unavailable = (e: { readonly message: string }) => new ServerFailure({ message: e.message })

const encoder = new TextEncoder()

const system = HttpApiBuilder.group(ReinsApi, "system", (handlers) =>
  Effect.gen(function* () {
    const info = yield* ServerInfo
    const hub = yield* ServerEvents
    // the token is checked for every route by the server's guard (before any route is matched): one scheme for all
    const generated = OpenApi.fromApi(ReinsApi)
    const paths = Object.fromEntries(
      Object.entries(generated.paths).map(([path, item]) => [
        path,
        // an operation's empty `security` would say it needs none
        Object.fromEntries(
          Object.entries(item).map(([method, op]) => [method, typeof op === "object" && op !== null && "security" in op ? { ...op, security: undefined } : op])
        )
      ])
    )
    const doc = {
      ...generated,
      paths,
      components: { ...generated.components, securitySchemes: { ...generated.components.securitySchemes, bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }]
    }
    return handlers
      .handle("health", () =>
        Effect.sync(() => ({ ok: true, version: info.version, directory: info.directory, events: { clients: hub.clients(), lastEventId: hub.latest() } }))
      )
      .handle("doc", () => Effect.succeed(HttpServerResponse.jsonUnsafe(doc)))
      .handle("config", () => Effect.succeed(HttpServerResponse.jsonUnsafe(info.config)))
      .handle("models", () => Effect.succeed(HttpServerResponse.jsonUnsafe(info.models)))
      .handle("event", ({ query, request }) =>
        Effect.gen(function* () {
          const header = request.headers["last-event-id"]?.trim()
          // an id that is not one would replay nothing and say nothing of what was missed
          if (header !== undefined && header !== "" && !/^\d+$/.test(header)) {
            return errorResponse(
              400,
              "bad_request",
              `Invalid Last-Event-ID "${header}": send the id of the last event received (a whole number), or none to start from now.`
            )
          }
          // thousands of open streams would hold as many sockets and queues: past the limit, one must close first
          if (hub.full()) {
            return errorResponse(
              503,
              "too_many_clients",
              `${hub.clients()} event streams are open, the server's limit: close one (or reconnect later), or start reins serve with a larger --max-clients.`
            )
          }
          const lastEventId = header !== undefined && header !== "" ? Number(header) : query.lastEventId
          const subscribed = yield* Effect.result(hub.subscribe({ sessionID: query.sessionID, lastEventId }))
          // a session of another project is not this server's: 404, as the session routes answer
          if (subscribed._tag === "Failure" && subscribed.failure.reason === "not-found") return errorResponse(404, "not_found", subscribed.failure.message)
          if (subscribed._tag === "Failure")
            return errorResponse(503, "unavailable", `${subscribed.failure.message} Reconnect with the same Last-Event-ID to try again.`)
          const client = subscribed.success
          return HttpServerResponse.raw(sseBody(client), {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
        })
      )
  })
)

const sessionsGroup = HttpApiBuilder.group(ReinsApi, "session", (handlers) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const service = yield* SessionService
    const sessions = yield* Sessions
    const permission = yield* Permission
    const turns = yield* ServerTurns
    const info = yield* ServerInfo
    const agents = yield* Agents
    // on a runner of a cluster (`reins serve --runner`): the session's use cases run on the runner owning it
    const routing = Option.getOrUndefined(yield* Effect.serviceOption(SessionRouting))
    /** The questions waiting in a session and its sub-agents' sessions: stored by any process, and this process's own. */
    const waitingIn = (sessionID: string) =>
      Effect.map(permission.waiting(sessionID), (stored) => {
        const inSession = agents.within(sessionID)
        const ids = new Set(stored.map((p) => p.id))
        return [...stored, ...permission.asked().filter((p) => !ids.has(p.id) && inSession(p.sessionID))]
      })

    // a session of another project (another directory sharing the data dir) is not this server's: 404, as for no session at all
    const project = realPath(info.directory)
    const session = (id: string) =>
      store.getSession(id).pipe(
        Effect.flatMap((found) => (realPath(found.directory) === project ? Effect.succeed(found) : Effect.fail(sessionNotFound(id)))),
        Effect.mapError(fromStore)
      )

    /** The prompt's turn input: the model, agent and variant checked before anything is stored. */
    const promptInput = (
      sessionID: string,
      body: { readonly text: string; readonly model?: string | undefined; readonly agent?: string | undefined; readonly variant?: string | undefined }
    ) =>
      Effect.gen(function* () {
        yield* session(sessionID)
        const agent = body.agent === undefined ? undefined : agents.get(body.agent)
        if (body.agent !== undefined && (agent === undefined || agent.mode === "subagent")) {
          const primaries = agents.catalog.agents.filter((a) => a.mode !== "subagent").map((a) => a.name)
          return yield* new BadRequest({
            message: `${agent === undefined ? `No agent named "${body.agent}"` : `"${body.agent}" is a sub-agent (the task tool runs it)`}: "agent" must be one of ${primaries.join(", ")}.`
          })
        }
        const chosen = yield* info.resolveModel({ model: body.model, variant: body.variant }).pipe(Effect.mapError((message) => new BadRequest({ message })))
        const model = agent !== undefined && body.model === undefined ? agentModel(agent, chosen) : chosen
        return { sessionID, text: body.text, model, ...(agent !== undefined ? { agent: agent.name } : {}) } satisfies PromptInput
      })

    const start = (input: PromptInput) => Effect.mapError(turns.start(input), fromPrompt)
    /** A prompt for a cluster runner: its id chosen here, once, so that the owner stores and answers it once however often it is delivered. */
    const routed = (input: PromptInput) => ({ ...input, requestID: `req_${globalThis.crypto.randomUUID()}` })

    /** A copy of the session's history up to and including `messageID` (all of it without one), under new ids; the files too when asked. */
    const fork = (id: string, payload: { readonly messageID?: string; readonly files?: boolean; readonly force?: boolean } | null) =>
      Effect.andThen(
        session(id),
        sessions.fork({ sessionID: id, at: payload?.messageID, files: payload?.files === true ? { force: payload.force === true } : undefined }).pipe(
          Effect.map((forked) => forked.session),
          Effect.mapError(fromFork)
        )
      )

    return (
      handlers
        // the sessions of the server's project, as its turns run there
        .handle("list", ({ query }) => Effect.mapError(store.listSessions({ directory: info.directory, limit: query.limit ?? 100 }), fromStore))
        .handle("create", ({ payload: body }) =>
          Effect.gen(function* () {
            const payload = body ?? {}
            if (payload.parentID !== undefined) yield* session(payload.parentID)
            return yield* Effect.mapError(
              service.create({
                directory: info.directory,
                ...(payload.title !== undefined ? { title: payload.title } : {}),
                ...(payload.parentID !== undefined ? { parentID: payload.parentID } : {})
              }),
              fromStore
            )
          })
        )
        .handle("get", ({ params }) =>
          Effect.gen(function* () {
            const found = yield* session(params.id)
            const totals = (yield* Effect.mapError(store.totals([params.id]), fromStore)).get(params.id)
            // the runner a turn runs on: this one, or the one its lease names
            const status = routing === undefined ? undefined : yield* Effect.mapError(sessions.status(params.id), fromStore)
            const runner = status?.running === "here" ? routing?.self : status?.run === undefined ? undefined : runnerOfHolder(status.run.holder)
            return {
              ...found,
              ...(runner !== undefined ? { runner } : {}),
              totals: {
                messages: totals?.messages ?? 0,
                steps: totals?.steps ?? 0,
                usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, ...totals?.usage },
                cost: totals?.cost ?? 0
              }
            }
          })
        )
        // a running turn is stopped first, here or in the reins process running it, then the session deleted
        .handle("remove", ({ params }) => Effect.andThen(session(params.id), Effect.asVoid(Effect.mapError(sessions.remove(params.id), fromPrompt))))
        .handle("fork", ({ params, payload }) => fork(params.id, payload))
        .handle("messages", ({ params }) => Effect.andThen(session(params.id), Effect.mapError(store.messages(params.id), fromStore)))
        .handle("export", ({ params }) =>
          Effect.gen(function* () {
            const found = yield* session(params.id)
            const messages = yield* Effect.mapError(store.messages(params.id), fromStore)
            return { version: 1, session: found, messages }
          })
        )
        .handle("prompt", ({ params, payload }) =>
          Effect.gen(function* () {
            const input = yield* promptInput(params.id, payload)
            if (routing !== undefined) {
              const reply = yield* Effect.mapError(routing.prompt(routed(input)), unavailable)
              if (reply.outcome === "queued") return { queued: true as const, messageID: reply.messageID ?? "" }
              if (reply.result !== undefined) return reply.result
              return yield* fromFailure(reply.failure ?? { tag: "Interrupted", message: `The turn on session ${params.id} was aborted.` })
            }
            const started = yield* start(input)
            if (started._tag === "queued") return { queued: true as const, messageID: started.messageID }
            // the turn runs in the server's scope: a client that goes away does not stop it (POST abort does)
            const exit = yield* Fiber.await(started.turn)
            if (Exit.isSuccess(exit)) return exit.value
            const error = Cause.findErrorOption(exit.cause)
            if (error._tag === "Some") return yield* fromPrompt(error.value)
            return yield* new Conflict({ message: `The turn on session ${params.id} was aborted.` })
          })
        )
        .handle("promptAsync", ({ params, payload }) =>
          Effect.gen(function* () {
            const input = yield* promptInput(params.id, payload)
            if (routing !== undefined) {
              // queued when a turn runs now (the owner may finish it before the prompt arrives, and start one then)
              const status = yield* Effect.mapError(sessions.status(params.id), fromStore)
              yield* Effect.mapError(routing.post(routed(input)), unavailable)
              return { sessionID: params.id, queued: status.running !== false }
            }
            const started = yield* start(input)
            return started._tag === "queued" ? { sessionID: params.id, queued: true, messageID: started.messageID } : { sessionID: params.id, queued: false }
          })
        )
        .handle("abort", ({ params }) =>
          Effect.andThen(
            session(params.id),
            routing !== undefined
              ? Effect.map(Effect.mapError(routing.abort(params.id), unavailable), (reply) => ({ aborted: reply.aborted }))
              : Effect.map(Effect.mapError(sessions.abort(params.id), fromStore), (where) => ({ aborted: where !== "idle" }))
          )
        )
        .handle("permissions", ({ params }) =>
          Effect.gen(function* () {
            yield* session(params.id)
            return yield* waitingIn(params.id)
          })
        )
        .handle("permission", ({ params, payload }) =>
          Effect.gen(function* () {
            yield* session(params.id)
            // a question of one of its sub-agents' sessions is the session's too: a client following the session answers it there;
            // one asked by another process on the same database is answered through the question store
            const waiting = (yield* waitingIn(params.id)).some((p) => p.id === params.permissionID)
            const answer = { reply: payload.response, ...(payload.message ? { message: payload.message } : {}) }
            const answered = waiting && (yield* permission.reply(params.permissionID, answer))
            if (!answered)
              return yield* new NotFound({
                message: `No permission question ${params.permissionID} is waiting in session ${params.id}: it was answered, timed out, or its turn ended.`
              })
            return { ok: true }
          })
        )
        .handle("revert", ({ params, payload }) =>
          Effect.andThen(
            session(params.id),
            Effect.mapError(
              sessions.undo({
                sessionID: params.id,
                to: payload?.messageID,
                files: payload?.files ?? true,
                conversation: payload?.conversation ?? true,
                force: payload?.force ?? false
              }),
              fromUndo
            )
          )
        )
        .handle("unrevert", ({ params, payload }) =>
          Effect.andThen(session(params.id), Effect.mapError(sessions.redo({ sessionID: params.id, force: payload?.force ?? false }), fromUndo))
        )
        .handle("summarize", ({ params, payload }) =>
          Effect.gen(function* () {
            yield* session(params.id)
            const model = yield* info.resolveModel({ model: payload?.model }).pipe(Effect.mapError((message) => new BadRequest({ message })))
            if (routing !== undefined) {
              const reply = yield* Effect.mapError(routing.compact(params.id, model), unavailable)
              if (reply.result !== undefined) return { sessionID: params.id, ...reply.result }
              return yield* fromFailure(reply.failure ?? { tag: "CompactionError", message: `The session ${params.id} was not summarised.` })
            }
            const result = yield* Effect.mapError(sessions.compact({ sessionID: params.id, model }), (e) =>
              e._tag === "ProviderError" || e._tag === "StoreError" || e._tag === "SessionBusyError" || e._tag === "CompactionError" ? fromPrompt(e) : e
            )
            return { sessionID: params.id, ...result }
          })
        )
    )
  })
)

/** Every route's handler, over the runtime (SessionService, SessionStore, Permission, Ids), `ServerInfo`, `ServerTurns` and `ServerEvents`. */
export const layerHandlers = Layer.mergeAll(system, sessionsGroup)
