// A client of `reins serve`'s HTTP API (issue 19) for `reins run --attach`: JSON requests carrying the token,
// every failure as one line saying what to do, and the server's event stream as decoded SSE frames.
import { Effect, Schema, Stream } from "effect"
import { Sse } from "effect/encoding"
import { CliError, failure, usage } from "./CliError.ts"

/** A server to talk to: its base URL (no trailing slash) and the bearer token, if any. */
export interface Remote {
  readonly base: string
  readonly token: string | undefined
}

/** The `--attach` URL checked: http(s) only, without a trailing slash; a bad one is a usage error (exit 2). */
export const remote = (url: string, token: string | undefined): Effect.Effect<Remote, CliError> => {
  const parsed = URL.parse(url)
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return Effect.fail(usage(`--attach wants the URL of a reins server, like http://127.0.0.1:4096 (got "${url}")`))
  }
  const base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`
  return Effect.succeed({ base, token: token === "" ? undefined : token })
}

const ErrorBody = Schema.Struct({ error: Schema.String, message: Schema.String })
const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))
const decodeErrorBody = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

/** Why a connection failed, in a few words (Bun's fetch names the errno in `code`). */
const networkReason = (error: unknown) => {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : ""
  if (code === "ConnectionRefused" || code === "ECONNREFUSED") return "connection refused"
  if (code === "ConnectionClosed" || code === "ECONNRESET") return "the connection was closed"
  if (code === "FailedToOpenSocket" || code === "ENOTFOUND") return "no such host"
  return error instanceof Error ? error.message : String(error)
}

export const unreachable = (r: Remote, error: unknown) =>
  failure(`cannot reach a reins server at ${r.base} (${networkReason(error)}): start one with \`reins serve\`, or check the --attach URL`)

const headers = (r: Remote, extra: Record<string, string> = {}) => ({ ...extra, ...(r.token === undefined ? {} : { authorization: `Bearer ${r.token}` }) })

/** A response that is not a success, as one line: 401 asks for the token, a 400 or 404 is the caller's (exit 2). */
const refused = (r: Remote, status: number, text: string): CliError => {
  if (status === 401) {
    return usage(
      r.token === undefined
        ? `the server at ${r.base} wants a token, and none of yours was found for it: pass --token TOKEN or set REINS_SERVER_TOKEN (reins serve prints where it left its token)`
        : `the server at ${r.base} refused the token: pass the one it was started with (--token or REINS_SERVER_TOKEN)`
    )
  }
  const body = decodeErrorBody(text)
  const message = body._tag === "Some" ? body.value.message : text.trim().slice(0, 200) || `HTTP ${status}`
  return status === 400 || status === 404 || status === 413
    ? usage(`the server at ${r.base}: ${message}`)
    : failure(`the server at ${r.base} answered ${status}: ${message}`)
}

/**
 * One JSON request: the response's status and parsed body; a network failure or an error status is a CliError,
 * except the statuses in `accept` (their body is then returned as it is).
 */
export const request = (
  r: Remote,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown,
  accept: ReadonlyArray<number> = []
): Effect.Effect<{ readonly status: number; readonly json: unknown }, CliError> =>
  Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(`${r.base}${path}`, {
          method,
          signal,
          headers: headers(r, body === undefined ? {} : { "content-type": "application/json" }),
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }),
      catch: (e) => unreachable(r, e)
    })
    const text = yield* Effect.tryPromise({ try: () => response.text(), catch: (e) => unreachable(r, e) })
    if (!response.ok && !accept.includes(response.status)) return yield* refused(r, response.status, text)
    if (text === "" || !response.ok) return { status: response.status, json: undefined }
    const json = decodeJson(text)
    if (json._tag === "None") return yield* failure(`the server at ${r.base} answered ${method} ${path} with something that is not JSON: is it a reins server?`)
    return { status: response.status, json: json.value }
  })

/** One request's body decoded by `schema`; a body of another shape says the server is not (this version of) reins. */
export const requestAs = <S extends Schema.Top & { readonly DecodingServices: never }>(
  r: Remote,
  schema: S,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown
): Effect.Effect<S["Type"], CliError> =>
  Effect.flatMap(request(r, method, path, body), ({ json }) =>
    Schema.decodeUnknownEffect(schema)(json).pipe(
      Effect.mapError(() => failure(`the server at ${r.base} answered ${method} ${path} with an unexpected body: is it a reins server of this version?`))
    )
  )

/**
 * `GET /event?sessionID=…`: the frames as the server sends them (`event` name, `id`, JSON `data`). The stream ends
 * when the server closes it; a connection that breaks once open fails with `lost` (why, in a few words).
 * Interrupting the stream closes the connection.
 */
export const events = (r: Remote, sessionID: string, lost: (why: string) => CliError): Stream.Stream<Sse.Event, CliError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const response = yield* Effect.tryPromise({
        try: (signal) => fetch(`${r.base}/event?sessionID=${encodeURIComponent(sessionID)}`, { signal, headers: headers(r, { accept: "text/event-stream" }) }),
        catch: (e) => unreachable(r, e)
      })
      if (!response.ok || response.body === null) {
        const text = yield* Effect.promise(() => response.text().catch(() => ""))
        return yield* refused(r, response.status, text)
      }
      const body = response.body
      return Stream.fromReadableStream({ evaluate: () => body, onError: (e) => lost(networkReason(e)) }).pipe(
        Stream.decodeText,
        Stream.pipeThroughChannel(Sse.decode()),
        // reins sends no `retry:` directive (the decoder fails with one) and no event over the decoder's 10 MiB
        Stream.mapError((e) =>
          e instanceof CliError
            ? e
            : failure(`the event stream of ${r.base} could not be read: ${e._tag === "Retry" ? "an unexpected retry directive" : e.message}`)
        )
      )
    })
  )
