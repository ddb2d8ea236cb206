import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { sandboxFlag } from "../SandboxFlag.ts"

const flags = {
  port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (0: any free port)"), Flag.withDefault(4096)),
  hostname: Flag.String("hostname").pipe(Flag.withDescription("Address to listen on; any other than loopback needs a token"), Flag.withDefault("127.0.0.1")),
  token: Flag.String("token").pipe(
    Flag.withDescription(
      "The token every route requires as Authorization: Bearer <token> (default REINS_SERVER_TOKEN; else a new one, left in <data dir>/servers/<port>.json for reins run --attach)"
    ),
    Flag.optional
  ),
  cors: Flag.String("cors").pipe(Flag.withDescription("An origin browsers may call the server from (repeatable; none: CORS off)"), Flag.atLeast(0)),
  maxClients: Flag.Int("max-clients").pipe(Flag.withDescription("Most event streams (GET /event) open at once (default 100)"), Flag.withDefault(100)),
  maxBody: Flag.Int("max-body").pipe(Flag.withDescription("Largest request body in bytes (default 1 MiB)"), Flag.withDefault(1024 * 1024)),
  permission: Flag.Literals("permission", ["allow", "deny"]).pipe(
    Flag.withDescription('What a permission "ask" becomes when nobody answers it over HTTP within permission_timeout (default deny)'),
    Flag.optional
  ),
  yolo: Flag.Boolean("yolo").pipe(Flag.withDescription("Allow every tool call without asking"), Flag.withDefault(false)),
  runner: Flag.String("runner").pipe(
    Flag.withDescription(
      "Join the cluster of runners on the --database PostgreSQL database as HOST:PORT (the address the other runners reach this one at; config cluster.runner): sessions spread over the runners, any of them serves any session"
    ),
    Flag.optional
  ),
  sandbox: sandboxFlag,
  trust: Flag.Boolean("trust").pipe(
    Flag.withDescription("Trust this directory for this run: its hooks, MCP servers, plugins, tools and agents run (reins trust keeps it)"),
    Flag.withDefault(false)
  )
}

/** `reins serve`: sessions and turns over HTTP, with their events as Server-Sent Events (the body in ServeMain.ts, loaded only here). */
export const serve = Command.make("serve", flags, (input) =>
  Effect.promise(() => import("../ServeMain.ts")).pipe(Effect.flatMap(({ serveMain }) => serveMain(input)))
).pipe(Command.withDescription("Serve sessions over HTTP: an API with live events (Server-Sent Events) for editors, web front-ends and bots"))
