// Races around queued messages and compaction, found in review: a message queued between the claim
// and the first read, the continuation after a second compaction in one turn, and a message sent
// while `compact` holds the session.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer } from "effect"
import { userFlag } from "@reins/domain"
import { SessionService } from "@reins/session"
import { Database, Grants, RunClaims, SessionStore, Storage } from "@reins/storage"
import { eventually, type ScriptedServer } from "@reins/testkit"
import * as path from "node:path"
import { scriptedRuntimes, tmp } from "./support.ts"

const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }

describe("queued messages and compaction, racing", () => {
  test("a message queued right after the claim, before the loop's first read, is in the first request; the turn ends", async () => {
    let releases = 0
    // The memory RunClaims with a hook, over the same Database as the other storage services.
    const claims = Layer.effect(
      RunClaims,
      Effect.gen(function* () {
        const inner = yield* RunClaims
        return RunClaims.of({
          ...inner,
          // another process queues the moment the claim is stored
          claim: (request) =>
            inner.claim(request).pipe(
              Effect.tap((claimed) =>
                claimed._tag !== "claimed"
                  ? Effect.void
                  : Effect.asVoid(
                      inner.queue(
                        { id: "msg_000000000000queued", sessionID: request.sessionID, role: "user", time: { created: 1 }, metadata: { queued: true } },
                        [
                          {
                            id: "prt_000000000000queued",
                            sessionID: request.sessionID,
                            messageID: "msg_000000000000queued",
                            type: "text",
                            text: "QUEUED-EARLY"
                          }
                        ]
                      )
                    )
              )
            ),
          release: (run, seen) =>
            Effect.suspend(() => {
              releases++
              return inner.release(run, seen)
            })
        })
      })
    ).pipe(Layer.provide(RunClaims.layer))
    const store = Layer.mergeAll(SessionStore.layer, Grants.layer, claims).pipe(Layer.provide(Database.layerMemory))
    const { server, cwd, layer } = await runtime([{ text: "answer" }, { text: "never" }], { store })
    const turn = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "hello", model })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(turn.text).toBe("answer")
    expect(server.requests).toHaveLength(1)
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain("QUEUED-EARLY")
    // released at the first try (and once more, a no-op, when the hold ends)
    expect(releases).toBeLessThanOrEqual(2)
  })

  test("a second compaction in one turn keeps that turn's request verbatim and continues it, without replaying any request", async () => {
    const big = { name: "bash", arguments: { command: "seq 100000 103000" } }
    const echo = (c: string) => ({ name: "bash", arguments: { command: `echo ${c}` } })
    const overflow = { usage: { prompt_tokens: 15_000, completion_tokens: 10 } }
    const { server, cwd, layer } = await runtime(
      [
        { text: "answer one" },
        { toolCalls: [big] },
        { toolCalls: [big] },
        { toolCalls: [echo("a")], ...overflow },
        { text: "## Objective\nSUMMARY ONE" },
        { toolCalls: [echo("b")] },
        { toolCalls: [echo("c")], ...overflow },
        { text: "## Objective\nSUMMARY TWO" },
        { text: "done" }
      ],
      { models: { m: { context: 16_000, output: 2_000 } } }
    )
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "FIRST-TASK do x", model })
        const turn = yield* sessions.prompt({ sessionID: session.id, text: "SECOND-TASK do y", model })
        return { turn, all: yield* (yield* SessionStore).messages(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.turn.text).toBe("done")
    const continuations = out.all.filter((m) => m.info.role === "user" && userFlag(m.info, "compaction_continue"))
    expect(continuations).toHaveLength(2)
    // The turn had made steps: a replayed request would make a model start over and re-run them.
    for (const c of continuations) expect(c.info.role === "user" && c.info.metadata?.continuation).toBe("continue")
    // The request after the second compaction still shows the turn's own request verbatim.
    const last = JSON.stringify(server.requests.at(-1)!.body.messages)
    expect(last).toContain("SECOND-TASK do y")
    expect(last).toContain("SUMMARY TWO")
  })

  test("a message sent while `compact` holds the session is not queued (nobody would answer it)", async () => {
    let server: ScriptedServer | undefined
    // the summary is answered once the message has been sent: it is sent while `compact` runs
    const sent = Promise.withResolvers<void>()
    const made = await runtime([{ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "## Objective\nSUMMARY", holdUntil: sent.promise }], {
      config: { compaction: { tail_turns: 1 } },
      store: Storage.layerSqlite(path.join(tmp(), "reins.db"))
    })
    server = made.server
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: made.cwd })
        for (const text of ["one", "two", "three"]) yield* sessions.prompt({ sessionID: session.id, text, model })
        const compacting = yield* Effect.forkChild(sessions.compact({ sessionID: session.id, model }))
        yield* eventually(
          Effect.suspend(() =>
            compacting.pollUnsafe()
              ? Effect.die(new Error(`compact ended early: ${JSON.stringify(compacting.pollUnsafe())}`))
              : Effect.succeed(server!.requests.length === 4)
          ),
          "compact's request for the summary"
        )
        const queued = yield* sessions.queue({ sessionID: session.id, text: "SENT-DURING-COMPACT" })
        sent.resolve()
        yield* Fiber.join(compacting)
        return { queued, messages: yield* (yield* SessionStore).messages(session.id) }
      }).pipe(Effect.provide(made.layer), Effect.scoped)
    )
    expect(out.queued).toBeUndefined()
    expect(JSON.stringify(out.messages)).not.toContain("SENT-DURING-COMPACT")
  })
})
