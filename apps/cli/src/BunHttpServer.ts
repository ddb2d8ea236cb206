// effect's HttpServer over Bun.serve, for `reins serve`: the web-standard handler effect/http makes,
// served by Bun's own server. (@effect/platform-node's server pulled `redis` in as a peer; the
// 4.x @effect/platform-bun does not load against effect 4.1.0.)
import { Effect, Layer, Result } from "effect"
import { HttpEffect, HttpServer, HttpServerError } from "effect/http"
import * as NetAddress from "effect/net/NetAddress"

/** Where to listen, and how long open requests may go on once the server stops. */
export interface Options {
  readonly port: number
  readonly hostname: string
  readonly gracefulShutdownMs: number
}

type Handler = (request: Request) => Promise<Response>

const notServing: Handler = async () => new Response("not serving yet", { status: 503 })

/**
 * An HttpServer listening with Bun.serve until its scope closes. Listening fails with a ServeError
 * carrying Bun's error (its `code`: EADDRINUSE, EACCES…). No idle limit: event streams stay open.
 */
export const layerServer = (options: Options): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError> =>
  Layer.effect(
    HttpServer.HttpServer,
    Effect.gen(function* () {
      let handler: Handler = notServing
      const server = yield* Effect.acquireRelease(
        Effect.try({
          try: () => Bun.serve({ port: options.port, hostname: options.hostname, idleTimeout: 0, fetch: (request) => handler(request) }),
          catch: (cause) => new HttpServerError.ServeError({ cause })
        }),
        // open requests get the grace period, then every connection is closed
        (server) =>
          Effect.promise(() => server.stop(false)).pipe(
            Effect.timeout(options.gracefulShutdownMs),
            Effect.ignore,
            Effect.andThen(Effect.promise(() => server.stop(true)))
          )
      )
      const port = server.port ?? options.port
      // a host name (localhost) is no IP address: the port is what callers read, the host is as given
      const address = Result.getOrElse(NetAddress.inetAddressFromIpString(server.hostname ?? options.hostname, port), () =>
        NetAddress.inetAddressFromIpString("0.0.0.0", port).pipe(Result.getOrThrow)
      )
      return HttpServer.make({
        address,
        serve: (app, middleware) =>
          Effect.gen(function* () {
            // each request runs with the services the server was given (its Scope and request are its own)
            const context = yield* Effect.context<never>()
            handler = HttpEffect.toWebHandlerWith(context)(app as Parameters<ReturnType<typeof HttpEffect.toWebHandlerWith<never>>>[0], middleware)
            yield* Effect.addFinalizer(() => Effect.sync(() => void (handler = notServing)))
          })
      })
    })
  )

/** The server with the HTTP services a router needs (platform, ETags, path; no file serving). */
export const layer = (options: Options) => Layer.mergeAll(layerServer(options), HttpServer.layerServices)
