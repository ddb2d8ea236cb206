// The interactive session's controller while the runtime is still being built behind the first
// frame: a second message sent before the first turn has its session is queued into that turn (one
// session, one turn), and Ctrl+C then stops a turn that has no session yet, without waiting for the runtime.
import { afterEach, expect, test } from "bun:test"
import { Effect, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeRuntime } from "@reins/runtime"
import { SessionStore, Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { makeController } from "../src/tui/Controller.ts"
import { gate } from "./support.ts"

let server: ScriptedServer | undefined
let scope: Scope.Closeable | undefined
afterEach(async () => {
  if (scope) await Effect.runPromise(Scope.close(scope, Effect.void as never))
  await server?.stop()
  server = undefined
  scope = undefined
})

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-ctl-")))

/**
 * A controller whose runtime arrives only once the test calls `arrive()`, as the interactive session builds it
 * behind its first frame.
 */
const setUp = async (steps: ReadonlyArray<ScriptedStep>) => {
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
  let arrive = () => {}
  const services = new Promise<Awaited<typeof built>>((resolve) => (arrive = () => resolve(built)))
  const controller = makeController(services as never, { cwd, model: { providerID: "local", modelID: "m" }, sessionID: undefined })
  let ended = () => {}
  const idle = () => new Promise<void>((resolve) => (ended = resolve))
  controller.on.running = (running) => void (running ? undefined : ended())
  return { controller, built, idle, arrive, cwd }
}

test("a message sent while the first turn still waits for the runtime is queued into that turn: one session, one turn", async () => {
  // the turn's command runs until the second message is in
  const held = gate()
  const { controller, built, idle, arrive, cwd } = await setUp([
    { toolCalls: [{ name: "bash", arguments: { command: held.command, description: "wait" } }] },
    { text: "both answered" }
  ])
  const done = idle()
  await controller.send("first message")
  expect(controller.running).toBe(true)
  // the runtime is not there yet, so neither is the turn's session
  expect(controller.sessionID).toBeUndefined()
  // sent before the runtime arrives: it waits for the turn to hold its session, then joins that turn
  const second = controller.send("second message")
  arrive()
  await second
  held.open({ cwd })
  await done
  const sessions = await Effect.runPromise(Effect.flatMap(SessionStore, (store) => store.listSessions()).pipe(Effect.provide(await built)))
  expect(sessions.length).toBe(1)
  // one turn of two steps (its tool step, then the answer), and the model saw both messages in it
  expect(server!.requests.length).toBe(2)
  const last = JSON.stringify(server!.requests[1]!.body)
  expect(last).toContain("first message")
  expect(last).toContain("second message")
})

test("Ctrl+C on a turn that has no session yet stops it; nothing reaches the model", async () => {
  const { controller, built, idle, arrive } = await setUp([{ text: "never asked" }])
  const done = idle()
  await controller.send("hello")
  expect(controller.running).toBe(true)
  // the runtime has not arrived: the interrupt does not wait for it (it did, so Ctrl+C during a slow start did nothing until then)
  await controller.interrupt()
  await done
  expect(controller.running).toBe(false)
  // and once it arrives, the stopped turn stays stopped
  arrive()
  await built
  expect(controller.running).toBe(false)
  expect(server!.requests.length).toBe(0)
})
