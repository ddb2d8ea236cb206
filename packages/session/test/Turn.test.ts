// Turn: the step loop as a stream of its steps, over a scripted Provider layer (no HTTP server).
import { Compaction } from "@reins/compaction"
import { describe, expect, test } from "bun:test"
import { Effect, Layer, Stream } from "effect"
import { emptyUsage } from "@reins/domain"
import type { ModelEvent, ProviderRequest } from "@reins/provider"
import { RunClaims, SessionStore } from "@reins/storage"
import { SessionProcessor, SessionRuns, SessionSettings, Turn, type TurnStep } from "../src/index.ts"
import { scripted, toolsLayer } from "./support.ts"

const finish = (reason: string): ModelEvent => ({ type: "finish-step", finishReason: reason, usage: { ...emptyUsage, input: 10, output: 5 }, cost: 0.01 })
const bashStep = (n: number): ReadonlyArray<ModelEvent> => [
  { type: "tool-call", callID: `c${n}`, name: "bash", input: { command: `echo step${n}` } },
  finish("tool-calls")
]
const textStep: ReadonlyArray<ModelEvent> = [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", text: "done" },
  { type: "text-end", id: "t" },
  finish("stop")
]

/** The steps of one turn on a new session, holding it as a turn does. */
const turnSteps = (steps: ReadonlyArray<ReadonlyArray<ModelEvent>>, settings: { readonly maxSteps?: number } = {}) => {
  const requests: Array<ProviderRequest> = []
  const { cwd, layer: tools } = toolsLayer(scripted(steps, requests))
  const layer = Layer.mergeAll(Turn.layer.pipe(Layer.provide(SessionProcessor.layer)), SessionRuns.layer).pipe(
    Layer.provideMerge(Compaction.layer.pipe(Layer.provideMerge(tools))),
    Layer.provide(Layer.succeed(SessionSettings, settings))
  )
  return Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore
      const turn = yield* Turn
      const runs = yield* SessionRuns
      const session = { id: "ses_turn", title: "t", directory: cwd, time: { created: 0, updated: 0 } }
      yield* store.createSession(session)
      const { message, part } = yield* turn.userMessage(session.id, "go")
      yield* store.putMessage(message)
      yield* store.putPart(part)
      const held = yield* runs.hold(session.id, undefined, (run) =>
        Effect.gen(function* () {
          const out = yield* Stream.runCollect(turn.steps(session, { info: message, parts: [part] }, { providerID: "p", modelID: "m" }, run, new Set()))
          // the loop itself let the session go when the turn was done
          return { out, claim: yield* (yield* RunClaims).get(session.id) }
        })
      )
      if (held._tag !== "ran") return yield* Effect.die("not held")
      return { ...held.value, requests, messages: yield* store.messages(session.id) }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

const shape = (steps: ReadonlyArray<TurnStep>) =>
  steps.map((s) =>
    s._tag === "Stepped"
      ? `step ${s.step}: ${s.outcome.finish} (${s.outcome.toolCalls} calls)`
      : s._tag === "Compacted"
        ? `compacted after ${s.step}`
        : `finished after ${s.result.steps}`
  )

describe("Turn.steps", () => {
  test("one element per step, then the end with the result; the session is let go by the loop", async () => {
    const { out, claim, requests, messages } = await turnSteps([bashStep(1), bashStep(2), textStep])
    expect(shape(out)).toEqual(["step 1: tool-calls (1 calls)", "step 2: tool-calls (1 calls)", "step 3: stop (0 calls)", "finished after 3"])
    const first = out[0]!
    expect(first._tag === "Stepped" && first.outcome).toMatchObject({ usage: { input: 10, output: 5 }, cost: 0.01 })
    const last = out.at(-1)!
    expect(last._tag === "Finished" && last.result.text).toBe("done")
    expect(claim).toBeUndefined()
    expect(requests).toHaveLength(3)
    // each step's request carried the tool results before it
    expect(JSON.stringify(requests[2]!.messages)).toContain("step2")
    expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant", "assistant", "assistant"])
  })

  test("the step limit: the last allowed step offers no tools and asks for an answer, and the turn ends there", async () => {
    const { out, requests } = await turnSteps([bashStep(1), bashStep(2), bashStep(3)], { maxSteps: 2 })
    expect(shape(out)).toEqual(["step 1: tool-calls (1 calls)", "step 2: tool-calls (1 calls)", "finished after 2"])
    expect(requests).toHaveLength(2)
    expect(requests[0]!.tools.length).toBeGreaterThan(0)
    expect(requests[1]!.tools).toEqual([])
    expect(requests[1]!.toolChoice).toBe("none")
    expect(requests[1]!.system.join("\n")).toContain("maximum number of steps")
  })

  test("a provider error ends the stream with that error", async () => {
    const exit = await turnSteps([bashStep(1)]).then(
      () => undefined,
      (e: unknown) => String(e)
    )
    expect(exit).toContain("no more steps")
  })
})
