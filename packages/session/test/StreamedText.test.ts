import { describe, expect, test } from "bun:test"
import { Effect, Layer, Stream } from "effect"
import { Bus, emptyUsage, type AssistantMessage, type Event, type ModelRef } from "@reins/domain"
import { Provider, type ModelEvent } from "@reins/provider"
import { SessionStore, Storage } from "@reins/storage"
import * as path from "node:path"
import { makeProcessor } from "../src/Processor.ts"
import { tmp, toolsLayer } from "./support.ts"

/** A 50 KB answer in 5,000 deltas of 10 characters, as a model streams it. */
const answer = Array.from({ length: 5000 }, (_, i) => `w${String(i).padStart(8, "0")} `).join("")
const model: ModelRef = { providerID: "p", modelID: "m" }

const provider = Layer.succeed(
  Provider,
  Provider.of({
    prepare: () => Effect.void,
    stream: () =>
      Stream.fromIterable<ModelEvent>([
        { type: "start-step" },
        { type: "text-start", id: "t" },
        ...Array.from({ length: 5000 }, (_, i): ModelEvent => ({ type: "text-delta", id: "t", text: answer.slice(i * 10, i * 10 + 10) })),
        { type: "text-end", id: "t" },
        { type: "finish-step", finishReason: "stop", usage: emptyUsage, cost: 0 }
      ]),
    info: () => ({ context: 10_000, output: 1_000 })
  })
)

/** The real SQLite store, counting the characters of text every `putPart` writes. */
const counted = (file: string, written: { chars: number; writes: number }) =>
  Layer.effect(
    SessionStore,
    Effect.gen(function* () {
      const store = yield* SessionStore
      return SessionStore.of({
        ...store,
        putPart: (part) =>
          Effect.suspend(() => {
            if (part.type === "text") {
              written.chars += part.text.length
              written.writes++
            }
            return store.putPart(part)
          })
      })
    })
  ).pipe(Layer.provide(Storage.layerSqlite(file)))

describe("a streamed answer", () => {
  test("is stored and published in linear size: deltas as part.delta, the whole part when it ends", async () => {
    const dataDir = tmp()
    const written = { chars: 0, writes: 0 }
    const { cwd, layer } = toolsLayer(provider, { tools: [], store: counted(path.join(dataDir, "reins.db"), written), dataDir })
    const { stored, published, deltas, whole } = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const bus = yield* Bus
        let published = 0
        const deltas: Array<string> = []
        const whole: Array<string> = []
        yield* bus.listen((e: Event) =>
          Effect.sync(() => {
            published += JSON.stringify(e).length
            if (e.type === "part.delta") deltas.push(e.delta)
            if (e.type === "part.updated" && e.part.type === "text") whole.push(e.part.text)
          })
        )
        yield* store.createSession({ id: "ses_1", title: "t", directory: cwd, time: { created: 0, updated: 0 } })
        yield* store.putMessage({ id: "msg_0", sessionID: "ses_1", role: "user", time: { created: 0 } })
        const assistant: AssistantMessage = {
          id: "msg_1",
          sessionID: "ses_1",
          role: "assistant",
          parentID: "msg_0",
          model,
          time: { created: 1 },
          usage: emptyUsage,
          cost: 0
        }
        yield* store.putMessage(assistant)
        const processor = yield* makeProcessor
        yield* processor.step({ assistant, cwd, request: { model, system: [], messages: [], tools: [] } })
        const messages = yield* store.messages("ses_1")
        const text = messages[1]!.parts.find((p) => p.type === "text")
        return { stored: text?.type === "text" ? text.text : undefined, published, deltas, whole }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(stored).toBe(answer)
    expect(deltas.join("")).toBe(answer)
    expect(whole).toEqual(["", answer])
    // one copy per delta would be 5,000 writes and ~125 MB; growth by a quarter keeps it a few copies
    expect(written.chars).toBeLessThan(6 * answer.length)
    expect(written.writes).toBeLessThan(30)
    // each character about twice (its delta, the whole part at the end) plus ~130 bytes per delta (its session, part and type);
    // the text so far in every event was ~125 MB
    expect(published).toBeLessThan(2 * answer.length + 5000 * 150)
  })
})
