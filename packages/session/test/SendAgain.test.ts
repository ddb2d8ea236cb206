// A message sent again under its id (PromptInput.messageID, as a cluster node redelivers a prompt whose runner
// died): stored once; answered already, its result without a model call; cut off by a dead process, its turn goes
// on from what is stored (the steps done are not run again; the command left running is closed as interrupted).
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { Ids } from "@reins/domain"
import { SessionStore } from "@reins/storage"
import { eventually } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunSettings, Sessions, SessionService, TakeOverLeases } from "../src/index.ts"
import { model, sessionsLayer, textStep } from "./sessions-support.ts"
import { tmp } from "./support.ts"

const children: Array<{ kill(signal?: number): void }> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill(9)
})

const stores: ReadonlyArray<readonly [string, () => string | undefined]> = [
  ["memory", () => undefined],
  ["sqlite", () => path.join(tmp(), "reins.db")]
]

describe.each(stores)("a message sent again under its id, on %s", (_name, file) => {
  test("is stored once; once answered, sending it again gives its result without asking the model", async () => {
    const sqlite = file()
    const { requests, layer } = sessionsLayer([textStep("the one answer"), textStep("never asked")], sqlite === undefined ? {} : { sqlite })
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: tmp() })
        const sessions = yield* Sessions
        const messageID = yield* (yield* Ids).next("msg")
        const first = yield* sessions.send({ sessionID: session.id, text: "answer once", model, messageID })
        const result = first._tag === "started" ? yield* Fiber.join(first.turn) : undefined
        const again = yield* sessions.send({ sessionID: session.id, text: "answer once", model, messageID })
        const second = again._tag === "started" ? yield* Fiber.join(again.turn) : undefined
        const messages = yield* (yield* SessionStore).messages(session.id)
        return { messageID, result, second, messages }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(value.result?.text).toBe("the one answer")
    expect(value.second?.text).toBe("the one answer")
    expect(value.second?.steps).toBe(0)
    expect(requests).toHaveLength(1)
    expect(value.messages.filter((m) => m.info.role === "user").map((m) => m.info.id)).toEqual([value.messageID])
  })
})

describe.each([
  ["once its lease lapsed", false],
  ["at once by a process that takes leases over (a cluster runner owning the session)", true]
] as const)("a turn cut off by a process killed -9, sent again %s", (_name, takeOver) => {
  test("goes on: the step done is not run again, the command left running is closed as interrupted", async () => {
    const db = path.join(tmp(), "reins.db")
    const dir = tmp()
    const marker = path.join(dir, "marker")
    const gateFile = path.join(dir, "never")
    const { requests, layer } = sessionsLayer([textStep("resumed after the crash")], { sqlite: db })
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: dir })
        const sessions = yield* Sessions
        const store = yield* SessionStore
        const messageID = yield* (yield* Ids).next("msg")
        // taken over, the dead process's lease is still live (a minute) when the message is sent again
        const ttl = takeOver ? "60000" : "800"
        const child = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "die-mid-turn.ts"), db, session.id, messageID, marker, gateFile, ttl], {
          stdout: "pipe",
          stderr: "pipe"
        })
        children.push(child)
        // the second step's command runs (the first step's is done and stored)
        yield* eventually(
          Effect.map(store.messages(session.id), (messages) =>
            messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.callID === "c2" && p.state.status === "running")
          ),
          "the other process's second command to run"
        )
        child.kill(9)
        yield* Effect.promise(() => child.exited)
        // its lease lapses (it renewed it every 100 ms, for 800 ms); or is taken over
        if (!takeOver)
          yield* eventually(
            Effect.map(sessions.status(session.id), (status) => (status.running === false ? true : undefined)),
            "the dead process's lease to lapse"
          )
        const sent = yield* sessions.send({ sessionID: session.id, text: "do the two steps", model, messageID })
        const result = sent._tag === "started" ? yield* Fiber.join(sent.turn) : undefined
        return { sent: sent._tag, result, messages: yield* store.messages(session.id), messageID }
      }).pipe(
        Effect.provide(layer),
        Effect.scoped,
        Effect.provideService(RunSettings, { heartbeatMs: 100, ttlMs: 800 }),
        Effect.provideService(TakeOverLeases, takeOver)
      )
    )
    expect(value.sent).toBe("started")
    expect(value.result?.text).toBe("resumed after the crash")
    // the first step ran once, in the process that died
    expect(fs.readFileSync(marker, "utf8")).toBe("STEP-ONE\n")
    // one request, here: it carried the done step's output and the cut-off command, closed as interrupted
    expect(requests).toHaveLength(1)
    const sent = JSON.stringify(requests[0]!.messages)
    expect(sent).toContain("STEP-ONE")
    const tools = value.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool")
    expect(tools.map((p) => [p.callID, p.state.status])).toEqual([
      ["c1", "completed"],
      ["c2", "error"]
    ])
    expect(value.messages.filter((m) => m.info.role === "user").map((m) => m.info.id)).toEqual([value.messageID])
  }, 60_000)
})
