import { Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { sandboxFlag, sandboxOption } from "../SandboxFlag.ts"
import * as os from "node:os"
import { Readable, Writable } from "node:stream"
import { makeRuntime } from "@reins/runtime"
import { discoverCommands } from "@reins/tool"
import { resolveModel, runtimeProject, setupAt } from "../Setup.ts"
import { withVariant } from "../Variant.ts"
import { VERSION } from "../version.ts"

const flags = {
  model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withDescription("Model as <provider>/<model> (default: the project's config)"), Flag.optional),
  variant: Flag.String("variant").pipe(
    Flag.withDescription("A named variant of the model's options: low, medium, high, … or one from reins.json"),
    Flag.optional
  ),
  yolo: Flag.Boolean("yolo").pipe(Flag.withDescription("Allow every tool call without asking the editor"), Flag.withDefault(false)),
  sandbox: sandboxFlag,
  trust: Flag.Boolean("trust").pipe(
    Flag.withDescription("Trust the editor's project directories for this run: their hooks, MCP servers, plugins, tools and agents run (reins trust keeps it)"),
    Flag.withDefault(false)
  )
}

/**
 * `reins acp`: the agent as an Agent Client Protocol server on stdin/stdout, for editors (Zed,
 * JetBrains, Neovim plugins). stdout carries only the protocol; logs and warnings go to stderr.
 * Each project directory a session names gets its own runtime (its reins.json, rules and tools),
 * made on its first session and closed when the editor disconnects.
 */
export const acp = Command.make("acp", flags, (input) =>
  Effect.gen(function* () {
    // the ACP SDK (and zod) load only for this command, not for every reins command
    const { acpPrompter, clientRef, serveAcp } = yield* Effect.promise(() => import("@reins/acp"))
    if (process.stdin.isTTY) {
      process.stderr.write(
        "reins acp speaks the Agent Client Protocol on stdin and stdout: an editor starts it (Zed: agent_servers in settings.json). Ctrl+C to quit.\n"
      )
    }
    const client = clientRef()
    const prompter = acpPrompter(client)
    const runtime = (cwd: string) =>
      Effect.gen(function* () {
        // no terminal to ask on (stdio is the protocol): the store, or --trust
        const setup = yield* setupAt(cwd, { trust: input.trust ? "flag" : "stored" })
        const model = yield* withVariant(setup, yield* resolveModel(setup, Option.getOrUndefined(input.model)), Option.getOrUndefined(input.variant))
        const layer = makeRuntime({
          cwd,
          dataDir: setup.dataDir,
          config: setup.config,
          env: setup.env,
          storedKeys: setup.storedKeys,
          version: VERSION,
          project: runtimeProject(setup),
          ...sandboxOption(input.sandbox),
          permission: { yolo: input.yolo, nonInteractive: "deny", prompter }
        })
        const { commands } = yield* discoverCommands({ cwd, home: os.homedir(), trusted: setup.project.trusted })
        return { context: yield* Layer.build(layer), model, commands }
      })
    yield* serveAcp({
      input: Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
      output: Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
      client,
      version: VERSION,
      runtime
    })
  })
).pipe(Command.withDescription("Serve the agent over the Agent Client Protocol on stdio (for editors such as Zed)"))
