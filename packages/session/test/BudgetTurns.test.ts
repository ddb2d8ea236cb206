// Budgets through real turns (scripted model, memory store): a compaction that reaches the cap keeps its summary,
// a child session prompted on its own has the session's caps, an interrupted step's cost stays counted.
import { describe, expect, test } from "bun:test"
import { Compaction } from "@reins/compaction"
import { Effect, Fiber, Layer, Stream } from "effect"
import { emptyUsage, type AssistantMessage } from "@reins/domain"
import type { ModelEvent, ProviderRequest } from "@reins/provider"
import { SessionStore } from "@reins/storage"
import { eventually } from "@reins/testkit"
import { BudgetSettings, SessionProcessor, SessionRuns, SessionService, Turn } from "../src/index.ts"
import { gate, model, sessionsLayer } from "./sessions-support.ts"
import { scripted, tmp, toolsLayer } from "./support.ts"

const finish = (reason: string, cost: number, input = 100): ModelEvent => ({
  type: "finish-step",
  finishReason: reason,
  usage: { ...emptyUsage, input, output: 5 },
  cost
})
const text = (t: string, cost: number): ReadonlyArray<ModelEvent> => [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", text: t },
  { type: "text-end", id: "t" },
  finish("stop", cost)
]
const bash = (n: number, cost: number, input = 100): ReadonlyArray<ModelEvent> => [
  { type: "tool-call", callID: `c${n}`, name: "bash", input: { command: `echo step${n}`, description: "e" } },
  finish("tool-calls", cost, input)
]

describe("budgets in real turns", () => {
  test("a compaction that reaches the turn's cap keeps its summary; the stop goes on a message of its own", async () => {
    const requests: Array<ProviderRequest> = []
    // step 1 overflows (cost 0.01), the summary costs 0.05: the cap is reached before the turn steps again
    const { cwd, layer: tools } = toolsLayer(scripted([bash(1, 0.01, 9_900), text("SUMMARY OF THE PAST", 0.05), text("never", 0.01)], requests))
    const layer = Layer.mergeAll(Turn.layer.pipe(Layer.provide(SessionProcessor.layer)), SessionRuns.layer).pipe(
      Layer.provideMerge(Compaction.layer.pipe(Layer.provideMerge(tools))),
      Layer.provide(Layer.succeed(BudgetSettings, { turn: 0.05 }))
    )
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const turn = yield* Turn
        const runs = yield* SessionRuns
        const session = { id: "ses_turn", title: "t", directory: cwd, time: { created: 0, updated: 0 } }
        yield* store.createSession(session)
        // earlier turns, for the summary to have a head
        for (let i = 0; i < 8; i++) {
          const { message, part } = yield* turn.userMessage(session.id, `old question ${i} ${"x".repeat(2000)}`)
          yield* store.putMessage(message)
          yield* store.putPart(part)
          const id = `${message.id}a`
          const answer: AssistantMessage = {
            id,
            sessionID: session.id,
            role: "assistant",
            parentID: message.id,
            model: { providerID: "p", modelID: "m" },
            time: { created: 0, completed: 1 },
            usage: emptyUsage,
            cost: 0,
            finish: "stop"
          }
          yield* store.putMessage(answer)
          yield* store.putPart({
            id: `prt_${id}`,
            sessionID: session.id,
            messageID: id,
            type: "text",
            text: `old answer ${"y".repeat(2000)}`,
            time: { start: 0, end: 1 }
          })
        }
        const { message, part } = yield* turn.userMessage(session.id, "go")
        yield* store.putMessage(message)
        yield* store.putPart(part)
        const held = yield* runs.hold(session.id, undefined, (run) =>
          Stream.runCollect(turn.steps(session, { info: message, parts: [part] }, { providerID: "p", modelID: "m" }, run, new Set()))
        )
        if (held._tag !== "ran") return yield* Effect.die("not held")
        return { steps: held.value, latest: yield* store.latestSummary(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const tags = [...out.steps].map((s) => s._tag)
    expect(tags).toEqual(["Stepped", "Compacted", "Finished"])
    const finished = [...out.steps].at(-1)!
    if (finished._tag !== "Finished") throw new Error("no result")
    expect(finished.result.assistant.error?.reason).toBe("budget")
    expect(finished.result.assistant.summary).toBeUndefined()
    expect(finished.result.text).toBe("")
    // the summary stands: the next turn starts from it
    expect(out.latest).toBeDefined()
    expect(requests).toHaveLength(2)
  })

  test.each([false, true])("the session's caps hold for a session with a parent prompted on its own (parented: %p)", async (parented) => {
    const dir = tmp()
    const { requests, layer } = sessionsLayer([bash(1, 1), bash(2, 1), bash(3, 1), text("done", 1)])
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const service = yield* SessionService
        const parent = yield* service.create({ directory: dir })
        const session = parented ? yield* service.create({ directory: dir, parentID: parent.id }) : parent
        return yield* service.prompt({ sessionID: session.id, text: "go", model })
      }).pipe(Effect.provide(layer), Effect.provide(Layer.succeed(BudgetSettings, { session: 1.5, turn: 1.5 })), Effect.scoped)
    )
    expect(result.assistant.error?.reason).toBe("budget")
    expect(requests).toHaveLength(2)
  })

  test("a step interrupted while its tools run keeps the model call's cost in the store", async () => {
    const dir = tmp()
    const g = gate(dir)
    const step: ReadonlyArray<ModelEvent> = [
      { type: "tool-call", callID: "c1", name: "bash", input: { command: g.command, description: "wait" } },
      finish("tool-calls", 3)
    ]
    const { layer } = sessionsLayer([step])
    const totals = await Effect.runPromise(
      Effect.gen(function* () {
        const service = yield* SessionService
        const store = yield* SessionStore
        const session = yield* service.create({ directory: dir })
        const fiber = yield* Effect.forkChild(service.prompt({ sessionID: session.id, text: "go", model }))
        yield* eventually(
          Effect.map(store.messages(session.id), (ms) => ms.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "running")),
          "the command running"
        )
        yield* Fiber.interrupt(fiber)
        return (yield* store.totals([session.id])).get(session.id)
      }).pipe(Effect.provide(layer), Effect.provide(Layer.succeed(BudgetSettings, { session: 10 })), Effect.scoped)
    )
    expect(totals?.cost).toBe(3)
  })
})
