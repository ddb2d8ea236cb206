// Undo against compaction: a turn that compacted the session, undone, leaves the model's view as before that turn —
// from the summary before it (or the whole history), never from the undone summary; the loop's own message after a
// compaction stays hidden with its turn; redo brings the summary back, and a new prompt makes it undone for good.
import { describe, expect, test } from "bun:test"
import { Bus, emptyUsage, type AssistantMessage, type Message, type Part, type Session } from "@reins/domain"
import { modelView, readWindow } from "@reins/compaction"
import { SessionStore, Storage, type MessageWithParts } from "@reins/storage"
import { Effect, Layer } from "effect"
import { finalizeUndo, redoSession, undoSession } from "../src/SessionUndo.ts"

const SESSION = "ses_undo"

/** Stores messages with ascending ids, each with one text part. */
const writer = () => {
  let seq = 0
  let lastUser = ""
  const next = (prefix: string) => `${prefix}_${String(++seq).padStart(4, "0")}`
  const put = (info: Message, text: string) =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.putMessage(info)
      const part: Part = { id: next("prt"), sessionID: SESSION, messageID: info.id, type: "text", text }
      yield* store.putParts([part])
      return info.id
    })
  return {
    user: (text: string, metadata?: Record<string, unknown>) => {
      const id = next("msg")
      lastUser = id
      return put({ id, sessionID: SESSION, role: "user", time: { created: seq }, ...(metadata ? { metadata } : {}) }, text)
    },
    assistant: (text: string, summary?: AssistantMessage["summary"]) =>
      put(
        {
          id: next("msg"),
          sessionID: SESSION,
          role: "assistant",
          parentID: lastUser,
          model: { providerID: "local", modelID: "m" },
          time: { created: seq, completed: seq },
          finish: "stop",
          usage: emptyUsage,
          cost: 0,
          ...(summary ? { summary } : {})
        },
        text
      )
  }
}

const texts = (messages: ReadonlyArray<MessageWithParts>) => messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])))

const run = <A, E>(body: Effect.Effect<A, E, SessionStore | Bus>) =>
  Effect.runPromise(body.pipe(Effect.provide(Layer.mergeAll(Storage.layerMemory, Bus.layer))) as Effect.Effect<A, never, never>)

const view = Effect.gen(function* () {
  return texts(modelView(yield* readWindow(yield* SessionStore, SESSION)))
})

describe("a window read in pieces after an undo made final", () => {
  test("an undone first prompt pinned before a tail that starts mid-turn: the summary and the tail are seen, the undone prompt not", async () => {
    const out = await run(
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.createSession({ id: SESSION, directory: "/tmp", title: "t", time: { created: 1, updated: 1 } })
        const w = writer()
        yield* w.user("UNDONE-FIRST")
        yield* w.assistant("undone answer")
        yield* undoSession({ sessionID: SESSION, files: false, conversation: true, force: false }, undefined)
        yield* finalizeUndo(SESSION)
        const two = yield* w.user("TWO")
        yield* w.assistant("step one of two")
        const tail = yield* w.assistant("step two of two")
        // a summary (made before the fix, or by any path) that pinned the undone prompt and starts its tail mid-turn
        const first = (yield* store.messages(SESSION))[0]!.info.id
        yield* w.assistant("SUMMARY", { tailStart: tail, summarised: [two], pinned: [first], auto: false })
        yield* w.user("NEXT")
        return yield* view
      })
    )
    expect(out[0]).toContain("SUMMARY")
    expect(out.slice(1)).toEqual(["step two of two", "NEXT"])
    expect(out.join(" ")).not.toContain("UNDONE")
  })
})

describe("undo of a turn that compacted the session", () => {
  test("the view is as before the turn: from the earlier summary, the undone one and the loop's message after it left out", async () => {
    const out = await run(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const session: Session = { id: SESSION, directory: "/tmp", title: "t", time: { created: 1, updated: 1 } }
        yield* store.createSession(session)
        const w = writer()
        const one = yield* w.user("ONE")
        yield* w.assistant("answer one")
        const two = yield* w.user("TWO")
        yield* w.assistant("answer two")
        yield* w.assistant("SUMMARY-A", { tailStart: two, summarised: [one], pinned: [], auto: true })
        yield* w.user("continue after A", { compaction_continue: true })
        yield* w.assistant("after A")
        const three = yield* w.user("THREE")
        yield* w.assistant("answer three")
        yield* w.assistant("SUMMARY-B", { summarised: [two, three], pinned: [], auto: true })
        yield* w.user("continue after B", { compaction_continue: true })
        yield* w.assistant("after B")
        const beforeUndo = yield* view
        yield* undoSession({ sessionID: SESSION, files: false, conversation: true, force: false }, undefined)
        const undone = yield* view
        yield* redoSession({ sessionID: SESSION, force: false }, undefined)
        const redone = yield* view
        yield* undoSession({ sessionID: SESSION, to: two, files: false, conversation: true, force: false }, undefined)
        const backToOne = yield* view
        yield* finalizeUndo(SESSION)
        const final = yield* view
        const summaries = (yield* store.messages(SESSION)).flatMap((m) => (m.info.role === "assistant" && m.info.summary ? [m.info.reverted ?? "kept"] : []))
        return { three, beforeUndo, undone, redone, backToOne, final, summaries }
      })
    )
    expect(out.beforeUndo[0]).toContain("SUMMARY-B")
    expect(out.beforeUndo.slice(1)).toEqual(["continue after B", "after B"])
    // turn three (with its compaction) undone: summary A, the tail from TWO, what followed A; nothing of turn three
    expect(out.undone[0]).toContain("SUMMARY-A")
    expect(out.undone.slice(1)).toEqual(["TWO", "answer two", "continue after A", "after A"])
    expect(out.redone).toEqual(out.beforeUndo)
    // back to before TWO: both summaries undone, the whole first turn verbatim
    expect(out.backToOne).toEqual(["ONE", "answer one"])
    expect(out.final).toEqual(["ONE", "answer one"])
    expect(out.summaries).toEqual(["final", "final"])
  })
})
