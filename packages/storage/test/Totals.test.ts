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

    test("sub-agents: the sessions a session's tasks started, at any depth, summed apart from its own; a child's own totals are its own", async () => {
      const u = (input: number, output: number) => ({ input, output, reasoning: 1, cacheRead: 2, cacheWrite: 3 })
      const totals = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_top"))
          // two children, one with a grandchild; one child with no messages yet; an unrelated session
          yield* store.createSession({ ...session("ses_c1"), parentID: "ses_top" })
          yield* store.createSession({ ...session("ses_c2"), parentID: "ses_top" })
          yield* store.createSession({ ...session("ses_g1"), parentID: "ses_c1" })
          yield* store.createSession({ ...session("ses_idle"), parentID: "ses_top" })
          yield* store.createSession(session("ses_else"))
          yield* store.createSession({ ...session("ses_noown"), parentID: "ses_bare" })
          yield* store.createSession(session("ses_bare"))
          yield* store.putMessage(step("msg_t1", "ses_top", u(100, 10), 1))
          yield* store.putMessage(userMessage("msg_c1u", "ses_c1"))
          yield* store.putMessage(step("msg_c1", "ses_c1", u(20, 2), 0.5))
          yield* store.putMessage(step("msg_c2", "ses_c2", u(30, 3), 0.25))
          yield* store.putMessage(step("msg_g1", "ses_g1", u(40, 4), 0.125))
          yield* store.putMessage(step("msg_e1", "ses_else", u(999, 999), 9))
          yield* store.putMessage(step("msg_n1", "ses_noown", u(5, 5), 0.5))
          return yield* store.totals(["ses_top", "ses_c1", "ses_g1", "ses_else", "ses_bare"])
        })
      )
      const top = totals.get("ses_top")!
      expect(top.usage).toEqual(u(100, 10))
      expect(top.cost).toBe(1)
      expect(top.subAgents).toEqual({ sessions: 4, usage: { input: 90, output: 9, reasoning: 3, cacheRead: 6, cacheWrite: 9 }, cost: 0.875 })
      expect(totals.get("ses_c1")!.usage).toEqual(u(20, 2))
      expect(totals.get("ses_c1")!.subAgents).toEqual({ sessions: 1, usage: u(40, 4), cost: 0.125 })
      expect(totals.get("ses_g1")!.subAgents).toBeUndefined()
      expect(totals.get("ses_else")!.subAgents).toBeUndefined()
      // a session with no message of its own but a sub-agent that has some
      expect(totals.get("ses_bare")).toEqual({
        messages: 0,
        steps: 0,
        usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        cost: 0,
        subAgents: { sessions: 1, usage: u(5, 5), cost: 0.5 }
      })
    })
  })
}
