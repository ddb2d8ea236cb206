// Reading from a compaction boundary and finding summaries — the same behaviour from both stores.
import { describe, expect, test } from "bun:test"
import type { AssistantMessage, Message } from "@reins/domain"
import { Effect } from "effect"
import { SessionStore } from "../src/SessionStore.ts"
import { assistantMessage, implementations, run, session, shape, textPart, userMessage } from "./support.ts"

const summary = (id: string, sessionID: string, tailStart?: string): AssistantMessage => ({
  ...(assistantMessage(id, sessionID, "msg_001") as AssistantMessage),
  time: { created: 2_000, completed: 2_500 },
  summary: { ...(tailStart ? { tailStart } : {}), summarised: [], pinned: [], auto: true }
})

for (const [name, makeLayer] of implementations) {
  describe(`SessionStore windows (${name})`, () => {
    test("messages from a boundary: later messages, listed earlier ones, their parts; other sessions untouched", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          const messages: Array<Message> = ["msg_001", "msg_002", "msg_003", "msg_004", "msg_005"].map((id) => userMessage(id, "ses_a"))
          for (const m of [...messages, userMessage("msg_0035", "ses_b")]) yield* store.putMessage(m)
          for (const [i, m] of messages.entries()) yield* store.putPart(textPart(`prt_00${i}`, m, `text ${i}`))
          return {
            window: yield* store.messages("ses_a", { from: "msg_003", include: ["msg_001"] }),
            fromOnly: yield* store.messages("ses_a", { from: "msg_004" }),
            beyond: yield* store.messages("ses_a", { from: "msg_999", include: ["msg_002", "msg_0035"] }),
            all: yield* store.messages("ses_a")
          }
        })
      )
      expect(shape(result.window)).toEqual([
        ["msg_001", ["prt_000"]],
        ["msg_003", ["prt_002"]],
        ["msg_004", ["prt_003"]],
        ["msg_005", ["prt_004"]]
      ])
      expect(shape(result.fromOnly).map(([id]) => id)).toEqual(["msg_004", "msg_005"])
      // an included id of another session is not read
      expect(shape(result.beyond)).toEqual([["msg_002", ["prt_001"]]])
      expect(result.all).toHaveLength(5)
    })

    test("latestSummary: the newest summary that finished without error and is not undone", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          yield* store.putMessage(userMessage("msg_001", "ses_a"))
          yield* store.putMessage(summary("msg_002", "ses_a"))
          yield* store.putMessage(assistantMessage("msg_003", "ses_a", "msg_001"))
          yield* store.putMessage(summary("msg_004", "ses_a", "msg_003"))
          // newer, but failed or unfinished
          yield* store.putMessage({ ...summary("msg_005", "ses_a"), error: { reason: "x", message: "failed" } })
          const { completed: _c, ...unfinished } = summary("msg_006", "ses_a").time as { created: number; completed?: number }
          yield* store.putMessage({ ...summary("msg_006", "ses_a"), time: unfinished })
          // newer, but made in turns undone (for now, or for good)
          yield* store.putMessage({ ...summary("msg_0065", "ses_a"), reverted: true })
          yield* store.putMessage({ ...summary("msg_0066", "ses_a"), reverted: "final" })
          yield* store.putMessage(summary("msg_007", "ses_b"))
          return { a: yield* store.latestSummary("ses_a"), none: yield* store.latestSummary("ses_zzz") }
        })
      )
      expect(result.a?.id).toBe("msg_004")
      expect(result.a?.summary?.tailStart).toBe("msg_003")
      expect(result.none).toBeUndefined()
    })
  })
}
