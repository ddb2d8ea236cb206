// The "Composing your own runtime" example of docs/library-use.md, run against the scripted server.
import { afterAll, expect, test } from "bun:test"
import { Effect } from "effect"
import { startScriptedServer } from "@reins/testkit"
import { SessionService } from "@reins/session"
import { Storage } from "@reins/storage"
import { builtins, Tool, ToolError } from "@reins/tool"
import { Schema } from "effect"
import { makeRuntime } from "../src/Runtime.ts"

const server = await startScriptedServer([{ toolCalls: [{ name: "shout", arguments: { text: "hi" } }] }, { text: "hello" }])
afterAll(() => server.stop())

test("a custom runtime with the memory store and an extra tool", async () => {
  const shout = Tool.define("shout", {
    description: "Upper-cases text",
    parameters: Schema.Struct({ text: Schema.String }),
    execute: (args) =>
      args.text ? Effect.succeed({ title: "shout", output: args.text.toUpperCase() }) : Effect.fail(new ToolError({ reason: "failed", message: "empty" }))
  })
  const runtime = makeRuntime({
    cwd: process.cwd(),
    dataDir: "/tmp/my-agent",
    config: { provider: { local: { type: "openai-compatible", baseURL: server.url } } },
    store: Storage.layerMemory,
    tools: [...builtins, shout],
    permission: { nonInteractive: "deny" }
  })
  const program = Effect.gen(function* () {
    const sessions = yield* SessionService
    const session = yield* sessions.create({ directory: process.cwd() })
    return yield* sessions.prompt({ sessionID: session.id, text: "hello", model: { providerID: "local", modelID: "qwen2.5-coder:14b" } })
  })
  const turn = await Effect.runPromise(program.pipe(Effect.provide(runtime), Effect.scoped))
  expect(turn.text).toBe("hello")
  expect(JSON.stringify(server.requests[1]!.body.messages)).toContain("HI")
  expect(server.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("shout")
})
