import { describe, expect, test } from "bun:test"
import type { AssistantMessage } from "@reins/domain"
import { Effect } from "effect"
import { SessionStore } from "../src/SessionStore.ts"
import { assistantMessage, implementations, run, session, textPart, userMessage } from "./support.ts"

const step = (id: string, sessionID: string, usage: AssistantMessage["usage"], cost: number, modelID = "scripted"): AssistantMessage => ({
  ...(assistantMessage(id, sessionID, "msg_u1") as AssistantMessage),
  model: { providerID: "test", modelID },
  usage,
  cost
})

// Both implementations: the counts and sums of `sessions list` must not differ between them.
for (const [name, makeLayer] of implementations) {
  describe(`SessionStore.totals (${name})`, () => {
    test("per session: messages, steps, summed usage and cost, the newest step's model; none for a session without messages", async () => {
      const totals = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          for (const id of ["ses_a", "ses_b", "ses_empty", "ses_other"]) yield* store.createSession(session(id))
          yield* store.putMessage(userMessage("msg_u1", "ses_a"))
          const first = step("msg_a1", "ses_a", { input: 100, output: 20, reasoning: 5, cacheRead: 300, cacheWrite: 7 }, 0.25)
          yield* store.putMessage(first)
          // parts are not read (nor counted)
          yield* store.putPart(textPart("prt_a1", first, "x".repeat(10_000)))
          yield* store.putMessage(step("msg_a2", "ses_a", { input: 50, output: 10, reasoning: 0, cacheRead: 100, cacheWrite: 0 }, 0.5, "newer"))
          yield* store.putMessage(userMessage("msg_u2", "ses_a"))
          yield* store.putMessage(userMessage("msg_b1", "ses_b"))
          yield* store.putMessage(step("msg_o1", "ses_other", { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, 9))
          return yield* store.totals(["ses_a", "ses_b", "ses_empty", "ses_missing"])
        })
      )
      expect([...totals.keys()].sort()).toEqual(["ses_a", "ses_b"])
      expect(totals.get("ses_a")).toEqual({
        messages: 4,
        steps: 2,
        usage: { input: 150, output: 30, reasoning: 5, cacheRead: 400, cacheWrite: 7 },
        cost: 0.75,
        model: { providerID: "test", modelID: "newer" }
      })
      expect(totals.get("ses_b")).toEqual({ messages: 1, steps: 0, usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 })
    })
  })
}
