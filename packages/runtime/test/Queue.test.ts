// T5: a message sent to a session while a turn runs joins that turn: stored unchanged, shown to the
// model at the next step inside a system reminder. A live lease of another process makes prompt
// refuse (queue stores the message for it); a lapsed one is taken over.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { userFlag } from "@reins/domain"
import { modelView, readWindow } from "@reins/compaction"
import { SessionService } from "@reins/session"
import { RunClaims, SessionStore, Storage, type ClaimRequest } from "@reins/storage"
import { eventually, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import * as path from "node:path"
import { scriptedRuntimes, tmp } from "./support.ts"

const runtime = scriptedRuntimes()
let server: ScriptedServer | undefined

const model = { providerID: "local", modelID: "m" }

/** A lease request of another process (`pid` on another machine) lasting `ttlMs`. */
const lease = (sessionID: string, pid: number, ttlMs: number): ClaimRequest => ({
  sessionID,
  holder: `other-box/${pid}/test`,
  host: "other-box",
  pid,
  takesMessages: true,
  ttlMs
})

// The SQLite store: the claim and the queue are its transactions.
const setup = async (steps: ReadonlyArray<ScriptedStep>) => {
  const made = await runtime(steps, { store: Storage.layerSqlite(path.join(tmp(), "reins.db")) })
  server = made.server
  return made
}

describe("messages sent to a running session", () => {
  test("a second prompt in the same process joins the running turn and gets its result", async () => {
    // the first step is answered once the second prompt has joined the turn: it arrives while the step runs
    const joined = Promise.withResolvers<void>()
    const { cwd, layer } = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo first" } }], holdUntil: joined.promise },
      { text: "ANSWER to both" }
    ])
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const first = yield* Effect.forkChild(sessions.prompt({ sessionID: session.id, text: "start the work", model }))
        yield* eventually(
          Effect.sync(() => server!.requests.length === 1),
          "the first step's request"
        )
        const waiting = yield* Effect.forkChild(sessions.prompt({ sessionID: session.id, text: "QUEUED-MARKER also check the docs", model }))
        yield* eventually(
          Effect.map(store.messages(session.id), (messages) => messages.some((m) => m.info.role === "user" && userFlag(m.info, "queued"))),
          "the second prompt to be queued"
        )
        joined.resolve()
        const second = yield* Fiber.join(waiting)
        const firstResult = yield* Fiber.join(first)
        const messages = yield* store.messages(session.id)
        return { second, firstResult, messages, run: yield* (yield* RunClaims).get(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.second.text).toBe("ANSWER to both")
    expect(out.second.assistant.id).toBe(out.firstResult.assistant.id)
    expect(server!.requests).toHaveLength(2)
    const next = JSON.stringify(server!.requests[1]!.body.messages)
    expect(next).toContain("<system-reminder>")
    expect(next).toContain("QUEUED-MARKER also check the docs")
    // the first request did not have it; the stored message is the user's text as written
    expect(JSON.stringify(server!.requests[0]!.body.messages)).not.toContain("QUEUED-MARKER")
    const queued = out.messages.find((m) => m.info.role === "user" && userFlag(m.info, "queued"))!
    expect(queued.parts.map((p) => (p.type === "text" ? p.text : ""))).toEqual(["QUEUED-MARKER also check the docs"])
    // the turn released the session when it ended
    expect(out.run).toBeUndefined()
  })

  test("a live lease of another process: prompt refuses, queue stores the message for that run", async () => {
    const { cwd, layer } = await setup([{ text: "never asked" }])
    const other = { pid: 4242 }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        yield* (yield* RunClaims).claim(lease(session.id, other.pid, 600_000))
        const refused = yield* Effect.flip(sessions.prompt({ sessionID: session.id, text: "hello", model }))
        const queued = yield* sessions.queue({ sessionID: session.id, text: "for the other process" })
        const compactRefused = yield* Effect.flip(sessions.compact({ sessionID: session.id, model }))
        return { refused, queued, compactRefused, messages: yield* store.messages(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.refused._tag).toBe("SessionBusyError")
    expect(out.refused.message).toContain(`pid ${other.pid}`)
    expect(out.compactRefused._tag).toBe("SessionBusyError")
    expect(out.queued?.run.pid).toBe(other.pid)
    expect(out.queued?.run.queued).toBe(1)
    // the refused prompt stored nothing; the queued message is there, flagged
    expect(out.messages).toHaveLength(1)
    expect(out.messages[0]!.info.role === "user" && userFlag(out.messages[0]!.info, "queued")).toBe(true)
    expect(server!.requests).toHaveLength(0)
  })

  test("a lease that lapsed (its process died and renews no more) is taken over; queue on an idle session stores nothing", async () => {
    const { cwd, layer } = await setup([{ text: "done" }])
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const idle = yield* sessions.queue({ sessionID: session.id, text: "anyone?" })
        // a lease of no time: lapsed as soon as it is taken
        yield* (yield* RunClaims).claim(lease(session.id, 4343, 0))
        const turn = yield* sessions.prompt({ sessionID: session.id, text: "hello", model })
        return { idle, turn, messages: yield* store.messages(session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.idle).toBeUndefined()
    expect(out.turn.text).toBe("done")
    expect(out.messages.map((m) => m.info.role)).toEqual(["user", "assistant"])
  })
})

describe("the loop reads from the last summary", () => {
  test("the window gives the model the same view as the whole session, with fewer messages", async () => {
    const big = { name: "bash", arguments: { command: "seq 100000 103000" } }
    const overflow = { usage: { prompt_tokens: 31_000, completion_tokens: 10 } }
    const steps: Array<ScriptedStep> = [
      { toolCalls: [big] },
      { toolCalls: [big] },
      { toolCalls: [big] },
      { toolCalls: [{ name: "bash", arguments: { command: "echo x" } }], ...overflow },
      { text: "## Objective\nsummary one" },
      { toolCalls: [big] },
      { toolCalls: [big] },
      { toolCalls: [big] },
      { toolCalls: [{ name: "bash", arguments: { command: "echo y" } }], ...overflow },
      { text: "## Objective\nsummary two" },
      { text: "finished" }
    ]
    const { cwd, layer } = await setup(steps)
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const turn = yield* sessions.prompt({ sessionID: session.id, text: "TASK: long work", model })
        return { turn, all: yield* store.messages(session.id), window: yield* readWindow(store, session.id) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.turn.text).toBe("finished")
    expect(out.all.filter((m) => m.info.role === "assistant" && m.info.summary)).toHaveLength(2)
    expect(out.window.length).toBeLessThan(out.all.length)
    expect(modelView(out.window)).toEqual(modelView(out.all))
    // the pinned task is in the window although it is older than the boundary
    expect(JSON.stringify(modelView(out.window))).toContain("TASK: long work")
  })
})
