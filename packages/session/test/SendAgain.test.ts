// A prompt sent again under its id (PromptInput.requestID, as a cluster node redelivers a prompt whose runner died
// or whose session moved): stored once; answered already, its own answer without a model call; stopped or cut off
// by a dead process, its turn goes on from what is stored (the steps done are not run again; the command left
// running is closed as interrupted).
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { SessionStore } from "@reins/storage"
import { eventually } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunSettings, Sessions, SessionService } from "../src/index.ts"
import { bashStep, gate, model, sessionsLayer, textStep } from "./sessions-support.ts"
import { tmp } from "./support.ts"

const children: Array<{ kill(signal?: number): void }> = []
// a test that fails before its command was stopped opens its gate: the command ends with it
const gates: Array<string> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill(9)
  for (const file of gates.splice(0)) fs.writeFileSync(file, "")
})

const stores: ReadonlyArray<readonly [string, () => string | undefined]> = [
  ["memory", () => undefined],
  ["sqlite", () => path.join(tmp(), "reins.db")]
]

describe.each(stores)("a prompt sent again under its id, on %s", (_name, file) => {
  test("is stored once; once answered, sending it again gives its own answer without asking the model, also after a later prompt", async () => {
    const sqlite = file()
    const { requests, layer } = sessionsLayer(
      [textStep("the first answer"), textStep("the second answer"), textStep("never asked")],
      sqlite === undefined ? {} : { sqlite }
    )
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: tmp() })
        const sessions = yield* Sessions
        const run = (text: string, requestID: string) =>
          Effect.flatMap(sessions.send({ sessionID: session.id, text, model, requestID }), (sent) =>
            sent._tag === "started" ? Fiber.join(sent.turn) : Effect.die(`expected a turn, got ${sent._tag}`)
          )
        const first = yield* run("answer once", "prm_first")
        const again = yield* run("answer once", "prm_first")
        const second = yield* run("then this", "prm_second")
        const firstAgain = yield* run("answer once", "prm_first")
        const messages = yield* (yield* SessionStore).messages(session.id)
        return { first, again, second, firstAgain, messages }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(value.first.text).toBe("the first answer")
    expect(value.again).toMatchObject({ text: "the first answer", steps: 0 })
    expect(value.second.text).toBe("the second answer")
    // its own answer, not the latest one
    expect(value.firstAgain).toMatchObject({ text: "the first answer", steps: 0 })
    expect(requests).toHaveLength(2)
    expect(value.messages.flatMap((m) => (m.info.role === "user" ? [m.info.metadata?.request] : []))).toEqual(["prm_first", "prm_second"])
  })

  test("a compaction's summary after the answer is not taken for it", async () => {
    const sqlite = file()
    const { requests, layer } = sessionsLayer([textStep("the real answer"), textStep("never asked")], sqlite === undefined ? {} : { sqlite })
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: tmp() })
        const sessions = yield* Sessions
        const store = yield* SessionStore
        const run = Effect.flatMap(sessions.send({ sessionID: session.id, text: "answer", model, requestID: "prm_summed" }), (sent) =>
          sent._tag === "started" ? Fiber.join(sent.turn) : Effect.die(`expected a turn, got ${sent._tag}`)
        )
        const first = yield* run
        // a summary written after it, its tail from the prompt on (as a manual compaction that keeps the last turn does)
        const summary = {
          ...first.assistant,
          id: `${first.assistant.id}z`,
          summary: { tailStart: first.assistant.parentID, summarised: [], pinned: [], auto: false }
        }
        yield* store.putMessage(summary)
        yield* store.putPart({ id: "prt_summary", sessionID: session.id, messageID: summary.id, type: "text", text: "SUMMARY TEXT" })
        return yield* run
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(value).toMatchObject({ text: "the real answer", steps: 0 })
    expect(requests).toHaveLength(1)
  })

  test("a turn stopped by an interrupt (its session moved, its runner stopped) is resumed when its prompt comes again, not taken as answered", async () => {
    const sqlite = file()
    const dir = tmp()
    gates.push(path.join(dir, "go"))
    const { requests, layer } = sessionsLayer([bashStep(gate(dir).command), textStep("answered after the move")], sqlite === undefined ? {} : { sqlite })
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: dir })
        const sessions = yield* Sessions
        const store = yield* SessionStore
        const sent = yield* sessions.send({ sessionID: session.id, text: "long job", model, requestID: "prm_moved" })
        if (sent._tag !== "started") return yield* Effect.die("expected a turn")
        yield* eventually(
          Effect.map(store.messages(session.id), (messages) => messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "running")),
          "the command to run"
        )
        yield* Fiber.interrupt(sent.turn)
        const again = yield* sessions.send({ sessionID: session.id, text: "long job", model, requestID: "prm_moved" })
        const result = again._tag === "started" ? yield* Fiber.join(again.turn) : undefined
        return { result, messages: yield* store.messages(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(value.result?.text).toBe("answered after the move")
    expect(requests).toHaveLength(2)
    expect(value.messages.filter((m) => m.info.role === "user")).toHaveLength(1)
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
    gates.push(gateFile)
    const { requests, layer } = sessionsLayer([textStep("resumed after the crash")], { sqlite: db })
    const value = await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionService).create({ directory: dir })
        const sessions = yield* Sessions
        const store = yield* SessionStore
        const requestID = "prm_cut_off"
        // taken over, the dead process's lease is still live (a minute) when the message is sent again
        const ttl = takeOver ? "60000" : "800"
        const child = Bun.spawn(
          ["bun", path.join(import.meta.dir, "fixtures", "die-mid-turn.ts"), db, session.id, requestID, marker, gateFile, ttl, takeOver ? "runner" : "process"],
          {
            stdout: "pipe",
            stderr: "pipe"
          }
        )
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
        const sent = yield* sessions.send({ sessionID: session.id, text: "do the two steps", model, requestID, takeOver })
        const result = sent._tag === "started" ? yield* Fiber.join(sent.turn) : undefined
        return { sent: sent._tag, result, messages: yield* store.messages(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped, Effect.provideService(RunSettings, { heartbeatMs: 100, ttlMs: 800 }))
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
    expect(value.messages.flatMap((m) => (m.info.role === "user" ? [m.info.metadata?.request] : []))).toEqual(["prm_cut_off"])
  }, 60_000)
})
