// The body of `reins serve` (commands/serve.ts): loaded only when the server runs, so that the HTTP
// server, its API and the server package are not loaded (parsed, evaluated, kept in memory) by every
// other command — \`reins run\` among them.
import * as fs from "node:fs"
import { Context, Effect, Layer, Option, Predicate } from "effect"
import * as BunHttpServer from "./BunHttpServer.ts"
import { sandboxOption } from "./SandboxFlag.ts"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Ids } from "@reins/domain"
import type { Prompter } from "@reins/permission"
import { makeRuntime } from "@reins/runtime"
import { HubLimits, ReinsApi, ServerEvents, ServerInfo, ServerTurns, layerGuard, layerHandlers } from "@reins/server"
import { fromRuntimeError, usage } from "./CliError.ts"
import { loadSetup, resolveModel, runtimeProject } from "./Setup.ts"
import { withVariant } from "./Variant.ts"
import { VERSION } from "./version.ts"
import { redact } from "./Redact.ts"
import { newToken, removeServerRecord, writeServerRecord } from "./ServerToken.ts"
import { modelsJson } from "./commands/models.ts"

/** The parsed flags of `reins serve`. */
export interface ServeInput {
  readonly port: number
  readonly hostname: string
  readonly token: Option.Option<string>
  readonly cors: ReadonlyArray<string>
  readonly maxClients: number
  readonly maxBody: number
  readonly permission: Option.Option<"allow" | "deny">
  readonly yolo: boolean
  readonly sandbox: Option.Option<"auto" | "required" | "off">
  readonly trust: boolean
  readonly runner: Option.Option<string>
}

/** Why the server could not listen, and what to pass instead. */
const listenFailure = (cause: unknown, hostname: string, port: number): string => {
  const code = Predicate.hasProperty(cause, "code") ? cause.code : undefined
  switch (code) {
    case "EADDRINUSE":
      return `port ${port} is in use (another reins serve?): pick another with --port, or --port 0 for any free one.`
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return `${hostname} is not an address of this machine: pass one of its own with --hostname (127.0.0.1 by default).`
    case "EACCES":
      return `not allowed to listen on port ${port} (ports below 1024 need privileges): pick another with --port.`
    default:
      return Predicate.hasProperty(cause, "message") && typeof cause.message === "string" && cause.message !== "" ? cause.message : String(cause)
  }
}

/** A runner's settings: its address, and the cluster's secret (from the environment only: never a file a project ships). */
const clusterOptions = (runner: string, env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function* () {
    const secret = env.REINS_CLUSTER_SECRET ?? ""
    if (secret === "")
      return yield* usage(
        "--runner needs the cluster's secret in REINS_CLUSTER_SECRET (the same on every runner, at least 16 characters: e.g. the output of openssl rand -hex 32): runners sign their traffic with it."
      )
    const tls = yield* clusterTls(env)
    return { runner, secret, ...(tls !== undefined ? { tls } : {}) }
  })

/** The runners' mutual TLS from REINS_CLUSTER_TLS_CERT, _KEY and _CA (PEM files): all three, or none (signed frames only). */
const clusterTls = (env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function* () {
    const names = ["REINS_CLUSTER_TLS_CERT", "REINS_CLUSTER_TLS_KEY", "REINS_CLUSTER_TLS_CA"] as const
    const given = names.filter((name) => (env[name] ?? "") !== "")
    if (given.length === 0) return undefined
    if (given.length < names.length)
      return yield* usage(
        `TLS between runners needs all of ${names.join(", ")} (this runner's certificate and key, and the CA that signed every runner's, as PEM files); ${names.filter((n) => !given.includes(n)).join(", ")} ${given.length === 2 ? "is" : "are"} not set.`
      )
    const texts: Array<string> = []
    for (const name of names) {
      const file = env[name]!
      const text = yield* Effect.try({ try: () => fs.readFileSync(file, "utf8"), catch: (error) => error }).pipe(
        Effect.catch((error) => usage(`${name}: cannot read ${file} (${error instanceof Error ? error.message : String(error)}).`))
      )
      if (!text.includes("-----BEGIN ")) return yield* usage(`${name}: ${file} is not a PEM file (no -----BEGIN line).`)
      texts.push(text)
    }
    return { cert: texts[0]!, key: texts[1]!, ca: texts[2]! }
  })

/**
 * Questions wait for a reply over HTTP (`POST /session/{id}/permissions/{permissionID}`, which the
 * Permission service settles): the prompter itself never answers, so "ask" waits until the reply,
 * `permission_timeout` (then the --permission policy), or the turn's end.
 */
const waitForHttp: Prompter = { ask: () => Effect.never }

/** `reins serve`: sessions and turns over HTTP, with their events as Server-Sent Events. */
export const serveMain = (input: ServeInput) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ trust: input.trust ? "flag" : "stored" })
    const given = Option.getOrUndefined(input.token) ?? (setup.env.REINS_SERVER_TOKEN || undefined)
    // a client sends it as `Bearer <token>`: an empty one, or one with spaces, could never be matched
    if (given !== undefined && !/^[\x21-\x7e]+$/.test(given)) {
      return yield* usage(
        "The server's token (--token or REINS_SERVER_TOKEN) must be printable characters without spaces, e.g. the output of `openssl rand -hex 32`."
      )
    }
    // always a token: loopback is reachable by every local user's processes
    const token = given ?? newToken()
    if (input.port < 0 || input.port > 65535) return yield* usage(`--port must be 0–65535, got ${input.port}`)
    if (input.maxBody < 1) return yield* usage(`--max-body must be a positive number of bytes, got ${input.maxBody}`)
    if (input.maxClients < 1) return yield* usage(`--max-clients must be at least 1, got ${input.maxClients}`)
    const chosen =
      setup.config.model ??
      (yield* resolveModel(setup, undefined).pipe(
        Effect.map((m) => `${m.providerID}/${m.modelID}`),
        Effect.orElseSucceed(() => undefined)
      ))

    // a runner of a cluster: --runner, else the user's config (a project's is a setting trust must allow)
    const runner = Option.getOrUndefined(input.runner) ?? setup.config.cluster?.runner
    const cluster = runner === undefined ? undefined : yield* clusterOptions(runner, setup.env)
    const runtime = makeRuntime({
      cwd: setup.cwd,
      dataDir: setup.dataDir,
      config: setup.config,
      env: setup.env,
      storedKeys: setup.storedKeys,
      version: VERSION,
      project: runtimeProject(setup),
      ...sandboxOption(input.sandbox),
      ...(cluster !== undefined ? { cluster } : {}),
      permission: { yolo: input.yolo, nonInteractive: Option.getOrElse(input.permission, () => "deny" as const), prompter: waitForHttp }
    })
    const info = Layer.succeed(ServerInfo, {
      directory: setup.cwd,
      version: VERSION,
      config: redact(setup.config),
      models: modelsJson(setup.config, chosen),
      resolveModel: ({ model, variant }) =>
        resolveModel(setup, model).pipe(
          Effect.flatMap((m) => withVariant(setup, m, variant)),
          Effect.mapError((e) => e.message)
        )
    })
    // the server's own services over the runtime: the event hub on its bus, the turns in their FiberMap
    const services = ServerTurns.layer.pipe(
      Layer.provideMerge(ServerEvents.layer.pipe(Layer.provide(Layer.succeed(HubLimits, { ...HubLimits.defaultValue(), clients: input.maxClients })))),
      Layer.provideMerge(Layer.mergeAll(info, Ids.layer))
    )
    const routes = Layer.mergeAll(
      HttpApiBuilder.layer(ReinsApi).pipe(Layer.provide(layerHandlers)),
      layerGuard({ token, maxBody: input.maxBody, cors: input.cors })
    )
    const http = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true })
    const announce = Layer.effectDiscard(
      Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const port = "port" in server.address ? server.address.port : input.port
        const host = input.hostname.includes(":") ? `[${input.hostname}]` : input.hostname
        const url = `http://${host}:${port}`
        // the token where this user's clients find it (reins run --attach reads it), gone when the server stops
        const file = yield* Effect.acquireRelease(
          Effect.sync(() => writeServerRecord(setup.dataDir, port, { url, token, pid: process.pid, directory: setup.cwd })),
          () => Effect.sync(() => removeServerRecord(setup.dataDir, port))
        )
        yield* Effect.sync(() =>
          process.stdout.write(
            `reins server listening on ${url}\n` +
              (given === undefined
                ? `token: in ${file} (reins run --attach ${url} reads it; other clients send Authorization: Bearer <token>)\n`
                : "token: the one given (--token or REINS_SERVER_TOKEN)\n")
          )
        )
      })
    )
    const app = Layer.merge(http, announce).pipe(
      Layer.provide(BunHttpServer.layer({ port: input.port, hostname: input.hostname, gracefulShutdownMs: 2000 })),
      Layer.provideMerge(services),
      Layer.provide(runtime)
    )
    yield* Effect.scoped(
      Effect.gen(function* () {
        const built = yield* Layer.build(app)
        const turns = Context.get(built, ServerTurns)
        const events = Context.get(built, ServerEvents)
        // SIGINT and SIGTERM interrupt it: the turns are stopped first (parts interrupted, process groups killed),
        // then the event streams are ended, so that the server closes without waiting for its clients. A cluster
        // runner's turns are the cluster's: it leaves the cluster first (as its layers close), which stops them
        // unanswered, so that their prompts go to the runners that own their sessions next, which resume them
        const closeStreams = Effect.sync(() => events.closeAll("the server is shutting down"))
        yield* Effect.never.pipe(Effect.onInterrupt(() => (cluster !== undefined ? closeStreams : Effect.andThen(turns.stopAll, closeStreams))))
      })
    ).pipe(
      Effect.mapError((e) =>
        e._tag === "ServeError"
          ? usage(`Cannot listen on ${input.hostname}:${input.port}: ${listenFailure(e.cause, input.hostname, input.port)}`)
          : fromRuntimeError(e)
      ),
      // then reins exits 0: a server asked to stop has done what it was asked
      Effect.onInterrupt(() => Effect.sync(() => process.exit(0)))
    )
  })
