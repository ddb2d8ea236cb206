// What every request passes before its route: the token (or, without one, the Host and Origin checks), the body
// limit, CORS; and every failure as one JSON shape.
import { ByteSize, Cause, Effect, Layer, Predicate, type Schema } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"

export interface GuardOptions {
  /** Required as `Authorization: Bearer <token>` on every route (`?token=` also on GET /event) when set. */
  readonly token?: string | undefined
  /** The largest request body accepted, in bytes (413 beyond). */
  readonly maxBody: number
  /** Origins allowed to call the server from a browser; none: no CORS headers at all. */
  readonly cors: ReadonlyArray<string>
}

/** The JSON error every failing request gets: a tag and what to do. */
export const errorResponse = (status: number, error: string, message: string) => HttpServerResponse.jsonUnsafe({ error, message }, { status })

// node:crypto loads at the first request with a token, not at startup
const crypto = () => process.getBuiltinModule("node:crypto")
const digest = (text: string) => crypto().createHash("sha256").update(text).digest()

/** Compares in constant time: digests of equal length, whatever the lengths of the inputs. */
export const sameToken = (given: string, expected: string) => crypto().timingSafeEqual(digest(given), digest(expected))

/** A Host header's name without its port: `[::1]:4096` → `[::1]`, `localhost.:4096` → `localhost`, lower case. */
export const hostnameOf = (host: string) => {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "")
  return name.toLowerCase().replace(/\.$/, "")
}

/** Names that reach this machine's loopback whatever public DNS says: `localhost` (and `*.localhost`), 127.x.x.x, [::1]. */
export const isLoopbackName = (name: string) =>
  name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(name)

/**
 * Why a request to a server without a token is refused, or undefined. Loopback alone does not keep a
 * browser out: a page on evil.example whose name is rebound to 127.0.0.1 reaches the server as its own
 * origin (`Host: evil.example`), and any page can send it a POST that needs no preflight. So such a server
 * answers only requests addressed to a loopback name, from no web page or one of the `--cors` origins.
 */
export const refusedWithoutToken = (request: HttpServerRequest.HttpServerRequest, cors: ReadonlyArray<string>): string | undefined => {
  const host = request.headers.host
  if (host !== undefined && !isLoopbackName(hostnameOf(host.trim()))) {
    return (
      `Host "${host}" is not a loopback name: a server without a token answers only requests to localhost, 127.0.0.1 or [::1] ` +
      "(a web page could otherwise reach it by DNS rebinding). Use http://127.0.0.1:<port>, or start reins serve with --token."
    )
  }
  const origin = request.headers.origin
  if (origin !== undefined && !cors.includes(origin)) {
    return (
      `Requests from the web page at ${origin} are refused: this server has no token. ` +
      `Allow that origin with reins serve --cors ${origin === "null" ? "<origin>" : origin}, or start it with --token.`
    )
  }
  return undefined
}

/** The token a request carries: the bearer header, or `?token=` on GET /event (an EventSource cannot set headers). */
export const tokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers.authorization
  const bearer = header === undefined ? undefined : /^Bearer\s+(.+)$/i.exec(header.trim())?.[1]
  if (bearer !== undefined) return bearer
  if (request.method !== "GET") return undefined
  const url = new URL(request.url, "http://reins")
  return url.pathname === "/event" ? (url.searchParams.get("token") ?? undefined) : undefined
}

/** A schema failure as one line naming the field: `text: Missing key`, `response: Expected "once" | "always" | "reject", got "maybe"`. */
export const describeSchemaError = (kind: string, error: Schema.SchemaError): string => {
  const lines = String(error.message)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
  // the formatter puts the path on an `at [...]` line after the issue
  const parts: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const at = /^at \[(.*)\]$/.exec(lines[i + 1] ?? "")
    if (/^at \[/.test(lines[i]!)) continue
    const field = at
      ? at[1]!
          .split(",")
          .map((s) => s.trim().replace(/^"|"$/g, ""))
          .join(".")
      : undefined
    parts.push(field ? `${field}: ${lines[i]}` : lines[i]!)
  }
  const where = kind === "Payload" ? "request body" : kind === "Params" ? "path" : kind === "Query" ? "query" : kind.toLowerCase()
  return `Invalid ${where}: ${parts.join("; ") || "it does not match the schema"}. See GET /doc for the route's schema.`
}

const bodyTooLarge = (u: unknown): boolean =>
  Predicate.hasProperty(u, "reason") && Predicate.hasProperty(u.reason, "reason") && u.reason.reason === "BodyTooLarge"

/** A failed request's cause as its JSON response; an interruption stays an interruption. */
const respond =
  (maxBody: number) =>
  <E>(cause: Cause.Cause<E>): Effect.Effect<HttpServerResponse.HttpServerResponse, E> => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    const failures = [...cause.reasons.map((r) => (Cause.isFailReason(r) ? r.error : Cause.isDieReason(r) ? r.defect : undefined))]
    for (const failure of failures) {
      if (HttpApiError.HttpApiSchemaError.is(failure)) {
        if (failure.kind === "Body" || failure.kind === "ResponseHeaders") break
        return Effect.succeed(errorResponse(400, "bad_request", describeSchemaError(failure.kind, failure.cause)))
      }
      if (bodyTooLarge(failure) || HttpApiError.HttpApiPayloadTooLarge.is(failure))
        return Effect.succeed(errorResponse(413, "too_large", `The request body is over the server's limit of ${maxBody} bytes (reins serve --max-body).`))
      if (Predicate.isTagged(failure, "RouteNotFound") || (Predicate.hasProperty(failure, "reason") && Predicate.isTagged(failure.reason, "RouteNotFound")))
        return Effect.succeed(errorResponse(404, "not_found", "No such route: GET /doc lists them."))
    }
    const first = failures.find((f) => f !== undefined)
    const message = Predicate.hasProperty(first, "message") && typeof first.message === "string" ? first.message : "The server failed"
    return Effect.as(Effect.logError("reins serve: request failed", cause), errorResponse(500, "failed", message))
  }

/** The guard as global router middleware: CORS (when origins are given) outside the token, Host and Origin checks, so preflights pass. */
export const layerGuard = (options: GuardOptions): Layer.Layer<never, never, HttpRouter.HttpRouter> => {
  const maxBody = ByteSize.bytes(options.maxBody)
  const guard = HttpRouter.middleware(
    <E, R>(
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (options.token === undefined) {
          const refused = refusedWithoutToken(request, options.cors)
          if (refused !== undefined) return errorResponse(403, "forbidden", refused)
        } else {
          const given = tokenOf(request)
          if (given === undefined || !sameToken(given, options.token)) {
            const message =
              given === undefined
                ? "This server needs a token: send Authorization: Bearer <token> (reins serve prints where it left it; reins run --attach reads it there, or takes --token or REINS_SERVER_TOKEN)."
                : "Wrong token: send the token the server was started with (reins serve --token or REINS_SERVER_TOKEN)."
            return errorResponse(401, "unauthorized", message)
          }
        }
        const length = Number(request.headers["content-length"] ?? "0")
        if (length > options.maxBody)
          return errorResponse(
            413,
            "too_large",
            `The request body (${length} bytes) is over the server's limit of ${options.maxBody} bytes (reins serve --max-body).`
          )
        const response = yield* app.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBody), Effect.catchCause(respond(options.maxBody)))
        // the API answers a body it cannot read with plain text: the same JSON shape as every other error
        if (response.status === 415) {
          return errorResponse(
            415,
            "unsupported_media_type",
            `Send the request body as JSON with Content-Type: application/json (got ${request.headers["content-type"] ?? "none"}).`
          )
        }
        return response
      }),
    { global: true }
  )
  if (options.cors.length === 0) return guard
  const cors = HttpRouter.middleware(
    HttpMiddleware.cors({ allowedOrigins: (origin) => options.cors.includes(origin), allowedHeaders: ["authorization", "content-type", "last-event-id"] }),
    { global: true }
  )
  // only a listed origin is echoed back (a predicate: a lone origin would be sent whatever the request's);
  // the first global middleware added runs outermost
  return guard.pipe(Layer.provide(cors))
}
