// The interactive session's controller while the runtime is still being built behind the first
// frame: a second message sent before the first turn has its session is queued into that turn (one
// session, one turn), and Ctrl+C then stops a turn that has no session yet.
import { afterEach, expect, test } from "bun:test"
import { Effect, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeRuntime } from "@reins/runtime"
import { SessionStore, Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { makeController } from "../src/tui/Controller.ts"

let server: ScriptedServer | undefined
let scope: Scope.Closeable | undefined
afterEach(async () => {
  if (scope) await Effect.runPromise(Scope.close(scope, Effect.void as never))
  await server?.stop()
  server = undefined
  scope = undefined
})

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-ctl-")))

/** A controller whose runtime arrives only after `delayMs`, as the interactive session builds it behind its first frame. */
const setUp = async (steps: ReadonlyArray<ScriptedStep>, delayMs: number) => {
  server = await startScriptedServer(steps)
  const cwd = tmp()
  const layer = makeRuntime({
    cwd,
    dataDir: tmp(),
    env: {},
    config: { provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } } },
    store: Storage.layerMemory,
    permission: { yolo: true }
  })
  scope = Effect.runSync(Scope.make())
  const built = Effect.runPromise(Layer.buildWithScope(layer, scope))
  const services = new Promise<Awaited<typeof built>>((resolve) => setTimeout(() => resolve(built), delayMs))
  const controller = makeController(services as never, { cwd, model: { providerID: "local", modelID: "m" }, sessionID: undefined })
  let ended = () => {}
  const idle = () => new Promise<void>((resolve) => (ended = resolve))
  controller.on.running = (running) => void (running ? undefined : ended())
  return { controller, built, idle }
}

test("a message sent while the first turn still waits for the runtime is queued into that turn: one session, one turn", async () => {
  const { controller, built, idle } = await setUp(
    [{ toolCalls: [{ name: "bash", arguments: { command: "sleep 0.3", description: "wait" } }] }, { text: "both answered" }],
    300
  )
  const done = idle()
  await controller.send("first message")
  expect(controller.running).toBe(true)
  // the runtime is not there yet, so neither is the turn's session
  expect(controller.sessionID).toBeUndefined()
  await controller.send("second message")
  await done
  const sessions = await Effect.runPromise(Effect.flatMap(SessionStore, (store) => store.listSessions()).pipe(Effect.provide(await built)))
  expect(sessions.length).toBe(1)
  // one turn of two steps (its tool step, then the answer), and the model saw both messages in it
  expect(server!.requests.length).toBe(2)
  const last = JSON.stringify(server!.requests[1]!.body)
  expect(last).toContain("first message")
  expect(last).toContain("second message")
}, 30_000)

test("Ctrl+C on a turn that has no session yet stops it; nothing reaches the model", async () => {
  const { controller, idle } = await setUp([{ text: "never asked" }], 300)
  const done = idle()
  await controller.send("hello")
  expect(controller.running).toBe(true)
  await controller.interrupt()
  await done
  expect(controller.running).toBe(false)
  expect(server!.requests.length).toBe(0)
}, 30_000)
