// reins as a library: the runtime's layers with one custom tool and the in-memory store, one turn against an
// OpenAI-compatible server. MODEL_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) and MODEL choose the model.
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Schema } from "effect"
import { makeRuntime } from "@reins/runtime"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { builtins, Tool } from "@reins/tool"

const shout = Tool.define("shout", {
  description: "Upper-cases text",
  parameters: Schema.Struct({ text: Schema.String }),
  execute: (args) => Effect.succeed({ title: "shout", output: args.text.toUpperCase() })
})

const baseURL = process.env.MODEL_BASE_URL ?? "http://127.0.0.1:11434/v1"
const model = process.env.MODEL ?? "qwen2.5-coder:14b"
const runtime = makeRuntime({
  cwd: process.cwd(),
  dataDir: path.join(os.tmpdir(), "reins-embed-example"),
  config: { provider: { local: { type: "openai-compatible", baseURL, models: { [model]: { context: 32768, output: 8192 } } } } },
  store: Storage.layerMemory, // sessions in memory: swap one layer, keep the rest
  tools: [...builtins, shout],
  permission: { nonInteractive: "deny" }
})

const program = Effect.gen(function* () {
  const sessions = yield* SessionService
  const session = yield* sessions.create({ directory: process.cwd() })
  const turn = yield* sessions.prompt({ sessionID: session.id, text: process.argv[2] ?? "Shout hello", model: { providerID: "local", modelID: model } })
  console.log(turn.text)
})

await Effect.runPromise(program.pipe(Effect.provide(runtime), Effect.scoped))
