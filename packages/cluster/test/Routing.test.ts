import { afterAll, describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer } from "effect"
import { clientLayer, SessionEntity } from "../src/index.ts"
import { testTiming } from "../src/Testing.ts"
import { freePort, freshDatabase, pgLayer, pgUrl, settled, startRunner } from "./support.ts"

const model = { providerID: "local", modelID: "scripted" }
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

describe.skipIf(pgUrl === undefined)("the Session entity on two runners over PostgreSQL", () => {
  test("any session's messages go to the one runner that owns it; a prompt is said once per message id; a killed owner's prompt is taken by the other", async () => {
    const db = await freshDatabase(pgUrl!)
    cleanups.push(db.drop)
    const a = startRunner(db.url, freePort(), "hang")
    const b = startRunner(db.url, freePort())
    cleanups.push(
      () => a.proc.kill(9),
      () => b.proc.kill(9)
    )
    await Promise.all([a.said((l) => l.ready === true), b.said((l) => l.ready === true)])
    // the second runner to join takes its share of the shards from the first: a session is owned once that is done
    await settled(db.url, [a.address, b.address], 300, testTiming.lockRefreshMs)

    const client = Layer.fresh(clientLayer(testTiming)).pipe(Layer.provide(pgLayer(db.url)))
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sessions = yield* SessionEntity.client
          const prompt = (sessionID: string, promptID: string, text = "hello") => sessions(sessionID).Prompt({ sessionID, promptID, text, model })

          // probes until each runner owns one of them
          const owners = new Map<string, string>()
          for (let i = 0; i < 200 && new Set(owners.values()).size < 2; i++) {
            const reply = yield* prompt(`ses_${i}`, `msg_${i}_a`)
            expect(reply.outcome).toBe("finished")
            owners.set(`ses_${i}`, reply.runner)
          }
          expect(new Set(owners.values())).toEqual(new Set([a.address, b.address]))
          // each was handled where the reply says (its line may come after the reply: another channel)
          for (const [sessionID, runner] of owners) {
            const handled = yield* Effect.promise(() => (runner === a.address ? a : b).said((l) => l.sessionID === sessionID && l.handling === "Prompt"))
            expect(handled.runner).toBe(runner)
          }

          // the same session again goes to the same runner; volatile messages too
          for (const [sessionID, runner] of owners) {
            expect((yield* prompt(sessionID, `${sessionID}_b`)).runner).toBe(runner)
            expect((yield* sessions(sessionID).Abort({ sessionID })).runner).toBe(runner)
          }

          // a message sent again (a retry after a lost connection) is the same prompt: handled once, the same reply
          const [first, firstRunner] = [...owners][0]!
          const again = yield* prompt(first, `msg_0_a`)
          expect(again).toEqual({ outcome: "finished", runner: firstRunner })
          expect([...a.lines, ...b.lines].filter((l) => l.promptID === "msg_0_a")).toHaveLength(1)

          // a prompt running on A when A is killed -9 is delivered again to B, which answers it (A, the first to start,
          // usually runs the health check too: then it is the lock expiry, not a ping, that frees its sessions)
          const onA = [...owners].find(([, runner]) => runner === a.address)![0]
          const pending = yield* Effect.forkChild(prompt(onA, "msg_hang", "hang"))
          yield* Effect.promise(() => a.said((l) => l.promptID === "msg_hang"))
          const killed = performance.now()
          a.proc.kill(9)
          const taken = yield* Effect.promise(() => b.said((l) => l.promptID === "msg_hang"))
          const moved = performance.now() - killed
          const reply = yield* Fiber.join(pending)
          expect(taken.runner).toBe(b.address)
          expect(reply).toEqual({ outcome: "finished", runner: b.address })
          // and the session stays on B afterwards
          expect((yield* prompt(onA, "msg_after")).runner).toBe(b.address)
          // at the end, every prompt was handled once, on one runner: none twice, none on both (msg_hang: once by A, which died, once by B)
          const handled = [...a.lines, ...b.lines].filter((l) => l.handling === "Prompt")
          const counts = new Map<string | undefined, number>()
          for (const line of handled) counts.set(line.promptID, (counts.get(line.promptID) ?? 0) + 1)
          for (const [promptID, count] of counts) expect([promptID, count]).toEqual([promptID, promptID === "msg_hang" ? 2 : 1])
          expect(counts.get("msg_0_a")).toBe(1)
          console.log(
            `failover of a running prompt: kill -9 → handled on the other runner in ${(moved / 1000).toFixed(1)} s (lock expiry ${testTiming.lockExpiryMs / 1000} s)`
          )
        }).pipe(Effect.provide(client))
      )
    )
  }, 60_000)
})
