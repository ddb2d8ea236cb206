// The session's use cases against the one Sessions service, on the memory store and on SQLite:
// send (start or queue, here or into another process's turn), abort, status, remove, fork.
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Exit, Fiber, type Scope, Stream } from "effect"
import { Bus, isOpenTool } from "@reins/domain"
import type { ModelEvent } from "@reins/provider"
import { EventLog, SessionStore } from "@reins/storage"
import { eventually } from "@reins/testkit"
import * as path from "node:path"
import { Sessions, SessionService } from "../src/index.ts"
import { bashStep, gate, model, sessionsLayer, textStep } from "./sessions-support.ts"
import { tmp } from "./support.ts"

const children: Array<{ kill(): void }> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

const stores = [
  ["memory", () => undefined],
  ["sqlite", () => path.join(tmp(), "reins.db")]
] as const

/** Runs `body` over Sessions on the store, with a new session in the scripted project. */
const withSessions = <A, E>(
  sqlite: string | undefined,
  steps: (cwd: string) => ReadonlyArray<ReadonlyArray<ModelEvent>>,
  body: (ctx: {
    readonly sessionID: string
    readonly cwd: string
    readonly sessions: Sessions["Service"]
    readonly store: SessionStore["Service"]
  }) => Effect.Effect<A, E, Sessions | SessionStore | EventLog | Bus | Scope.Scope>
) => {
  // the steps name a gate in the project directory: the layer is made once the directory is known
  const dir = tmp()
  const { requests, layer } = sessionsLayer(steps(dir), sqlite === undefined ? {} : { sqlite })
  return Effect.runPromise(
    Effect.gen(function* () {
      const session = yield* (yield* SessionService).create({ directory: dir })
      const value = yield* body({ sessionID: session.id, cwd: dir, sessions: yield* Sessions, store: yield* SessionStore })
      return { value, requests }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
}

/** The session's bash part once its command runs. */
const commandRunning = (store: SessionStore["Service"], sessionID: string) =>
  eventually(
    Effect.map(store.messages(sessionID), (messages) => messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "running")),
    "the turn's command to run"
  )

describe.each(stores)("Sessions on %s", (_name, file) => {
  test("send starts a turn; a send while it runs is queued into it and read at its next step; status says where it runs", async () => {
    const { value, requests } = await withSessions(
      file(),
      (dir) => [bashStep(gate(dir).command), textStep("both answered")],
      ({ sessionID, cwd, sessions, store }) =>
        Effect.gen(function* () {
          const first = yield* sessions.send({ sessionID, text: "start", model })
          yield* commandRunning(store, sessionID)
          const during = yield* sessions.status(sessionID)
          const second = yield* sessions.send({ sessionID, text: "QUEUED-HERE", model })
          gate(cwd).open()
          const turn = first._tag === "started" ? yield* Fiber.join(first.turn) : undefined
          return { first: first._tag, second, during, turn, after: yield* sessions.status(sessionID) }
        })
    )
    expect(value.first).toBe("started")
    expect(value.second).toMatchObject({ _tag: "queued", where: "here", messageID: expect.stringMatching(/^msg_/) })
    expect(value.during).toMatchObject({ running: "here", questions: [] })
    expect(value.turn?.text).toBe("both answered")
    expect(value.after.running).toBe(false)
    // one turn: its second model call read the queued message
    expect(requests).toHaveLength(2)
    expect(JSON.stringify(requests[1]!.messages)).toContain("QUEUED-HERE")
  })

  // listening after the runtime's own listeners (the turns' among them), as a terminal's view does; `yields` times
  // before it takes busy in (a view that writes it somewhere, say)
  for (const yields of [0, 20])
    test(`a send waiting for the turn to claim the session is queued after the turn's busy reached every listener${yields > 0 ? ", one that suspends on it too" : ""}`, async () => {
      const { value } = await withSessions(
        file(),
        () => [textStep("both answered")],
        ({ sessionID, sessions }) =>
          Effect.gen(function* () {
            const seen: Array<string> = []
            yield* (yield* Bus).listen((event) =>
              event.type === "session.status" && event.sessionID === sessionID
                ? Effect.andThen(
                    Effect.forEach(Array.from({ length: yields }), () => Effect.yieldNow, { discard: true }),
                    Effect.sync(() => seen.push(`status ${event.status}`))
                  )
                : Effect.sync(() => {
                    if (event.type === "message.updated" && event.message.sessionID === sessionID) seen.push(`message ${event.message.id}`)
                  })
            )
            const first = yield* sessions.send({ sessionID, text: "start", model })
            // sent before the turn has claimed the session: it waits for the claim, then is queued
            const second = yield* sessions.send({ sessionID, text: "QUEUED-EARLY", model })
            if (first._tag === "started") yield* Fiber.join(first.turn)
            return { second, seen }
          })
      )
      expect(value.second._tag).toBe("queued")
      const queued = value.second._tag === "queued" ? value.second.messageID : ""
      expect(value.seen.indexOf("status busy")).toBeGreaterThanOrEqual(0)
      expect(value.seen.indexOf("status busy")).toBeLessThan(value.seen.indexOf(`message ${queued}`))
    })

  test("events replays the session's log from any position, each event once in order, then follows new turns live", async () => {
    const { value } = await withSessions(
      file(),
      () => [textStep("first answer"), textStep("second answer")],
      ({ sessionID, sessions }) =>
        Effect.gen(function* () {
          const log = yield* EventLog
          const first = yield* sessions.send({ sessionID, text: "one", model })
          if (first._tag === "started") yield* Fiber.join(first.turn)
          const stored = yield* log.read({ after: 0, sessionID })
          const all = yield* Stream.runCollect(sessions.events(sessionID).pipe(Stream.take(stored.length)))
          const from = stored[2]!.id
          const tail = yield* Stream.runCollect(sessions.events(sessionID, from).pipe(Stream.take(stored.length - 3)))
          // live: a follower from the newest position gets the next turn's events as they are appended
          const live = yield* Effect.forkChild(
            sessions.events(sessionID, stored.at(-1)!.id).pipe(
              Stream.takeUntil(
                (logged) => logged.event.type === "part.updated" && logged.event.part.type === "text" && logged.event.part.text === "second answer"
              ),
              Stream.runCollect
            )
          )
          const second = yield* sessions.send({ sessionID, text: "two", model })
          if (second._tag === "started") yield* Fiber.join(second.turn)
          return { stored, all, tail, live: yield* Fiber.join(live) }
        })
    )
    const ids = (events: ReadonlyArray<{ readonly id: number }>) => events.map((e) => e.id)
    expect(value.stored.length).toBeGreaterThan(3)
    expect(ids(value.all)).toEqual(ids(value.stored))
    expect(ids(value.tail)).toEqual(ids(value.stored.slice(3)))
    expect(value.all.map((e) => e.seq)).toEqual(value.stored.map((_, i) => i + 1))
    const last = value.stored.at(-1)!.id
    expect(value.live.length).toBeGreaterThan(0)
    expect(value.live.every((e) => e.id > last)).toBe(true)
    expect(new Set(ids(value.live)).size).toBe(value.live.length)
    expect(JSON.stringify(value.live)).toContain("two")
  })

  test("abort of a turn running here interrupts it: its command's part is closed, the session idle; abort of an idle session says so", async () => {
    const { value } = await withSessions(
      file(),
      (dir) => [bashStep(gate(dir).command), textStep("never")],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          const sent = yield* sessions.send({ sessionID, text: "start", model })
          yield* commandRunning(store, sessionID)
          const aborted = yield* sessions.abort(sessionID)
          const exit = sent._tag === "started" ? yield* Fiber.await(sent.turn) : undefined
          const parts = (yield* store.messages(sessionID)).flatMap((m) => m.parts)
          return { aborted, exit, parts, status: yield* sessions.status(sessionID), again: yield* sessions.abort(sessionID) }
        })
    )
    expect(value.aborted).toBe("here")
    expect(value.exit !== undefined && Exit.hasInterrupts(value.exit)).toBe(true)
    const tool = value.parts.find((p) => p.type === "tool")
    expect(tool !== undefined && !isOpenTool(tool)).toBe(true)
    expect(value.status.running).toBe(false)
    expect(value.again).toBe("idle")
  })

  test("remove of a running session stops its turn first, then deletes it", async () => {
    const { value } = await withSessions(
      file(),
      (dir) => [bashStep(gate(dir).command), textStep("never")],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          const sent = yield* sessions.send({ sessionID, text: "start", model })
          yield* commandRunning(store, sessionID)
          const removed = yield* sessions.remove(sessionID)
          const exit = sent._tag === "started" ? yield* Fiber.await(sent.turn) : undefined
          const after = yield* Effect.flip(store.getSession(sessionID))
          return { removed, exit, after }
        })
    )
    expect(value.removed).toMatchObject({ stopped: "here", messages: 2, session: { title: "start" } })
    expect(value.exit !== undefined && Exit.hasInterrupts(value.exit)).toBe(true)
    expect(value.after.reason).toBe("not-found")
  })

  test("remove takes the session's sub-agent sessions with it, and their followers are told each is deleted", async () => {
    const { value } = await withSessions(
      file(),
      () => [],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          const parent = yield* store.getSession(sessionID)
          const child = { ...parent, id: `${sessionID}_child`, parentID: sessionID, title: "a sub-agent" }
          yield* store.createSession(child)
          yield* store.createSession({ ...child, id: `${sessionID}_grandchild`, parentID: child.id })
          const removed = yield* sessions.remove(sessionID)
          const gone = yield* Effect.forEach([sessionID, child.id, `${sessionID}_grandchild`], (id) => Effect.flip(store.getSession(id)))
          // the appender writes session.deleted after the rows are gone; the log holds one per session, in its tree
          const deleted = yield* eventually(
            Effect.map((yield* EventLog).read({ after: 0 }), (events) => {
              const found = events.filter((e) => e.event.type === "session.deleted")
              return found.length === 3 ? found : undefined
            })
          )
          return { removed, gone: gone.map((e) => e.reason), deleted: deleted.map((e) => [e.sessionID, e.rootSessionID] as const) }
        })
    )
    expect(value.removed).toMatchObject({ stopped: "idle", subAgents: 2 })
    expect(value.gone).toEqual(["not-found", "not-found", "not-found"])
    const root = value.removed.session.id
    expect(value.deleted[0]).toEqual([root, root])
    expect(new Set(value.deleted.map(([id]) => id)).size).toBe(3)
    expect(value.deleted.every(([, r]) => r === root)).toBe(true)
  })

  test("remove of an idle session whose sub-agent session runs a turn of its own stops that turn first", async () => {
    const { value } = await withSessions(
      file(),
      (dir) => [bashStep(gate(dir).command), textStep("never")],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          const parent = yield* store.getSession(sessionID)
          const child = { ...parent, id: `${sessionID}_child`, parentID: sessionID, title: "a sub-agent" }
          yield* store.createSession(child)
          const sent = yield* sessions.send({ sessionID: child.id, text: "start", model })
          yield* commandRunning(store, child.id)
          const removed = yield* sessions.remove(sessionID)
          const exit = sent._tag === "started" ? yield* Fiber.await(sent.turn) : undefined
          return { removed, exit, child: (yield* Effect.flip(store.getSession(child.id))).reason }
        })
    )
    expect(value.removed).toMatchObject({ stopped: "here", subAgents: 1 })
    expect(value.exit !== undefined && Exit.hasInterrupts(value.exit)).toBe(true)
    expect(value.child).toBe("not-found")
  })

  test("fork copies the conversation up to a message into a new session; an unknown message makes nothing", async () => {
    const { value } = await withSessions(
      file(),
      () => [textStep("one"), textStep("two")],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          yield* sessions.send({ sessionID, text: "first", model }).pipe(Effect.flatMap((s) => (s._tag === "started" ? Fiber.join(s.turn) : Effect.die(s))))
          yield* sessions.send({ sessionID, text: "second", model }).pipe(Effect.flatMap((s) => (s._tag === "started" ? Fiber.join(s.turn) : Effect.die(s))))
          const history = yield* store.messages(sessionID)
          const copy = (yield* sessions.fork({ sessionID, at: history[1]!.info.id })).session
          const copied = yield* store.messages(copy.id)
          const unknown = yield* Effect.flip(sessions.fork({ sessionID, at: "msg_nope" }))
          const all = yield* store.listSessions({ limit: 10 })
          return { copy, copied, history, unknown, count: all.length }
        })
    )
    expect(value.copy.title).toBe("first (fork)")
    expect(value.copied.map((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join())).toEqual(["first", "one"])
    expect(value.copied.every((m) => m.info.sessionID === value.copy.id && !value.history.some((h) => h.info.id === m.info.id))).toBe(true)
    expect(value.unknown).toMatchObject({ _tag: "StoreError", reason: "not-found" })
    expect(value.count).toBe(2)
  })
})

describe("Sessions with a turn running in another process (two processes, one SQLite file)", () => {
  const holder = (db: string, sessionID: string, gateFile: string) => {
    const child = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "hold-turn.ts"), db, sessionID, gateFile], { stdout: "pipe", stderr: "inherit" })
    children.push(child)
    const reader = child.stdout.getReader()
    let text = ""
    const lines = async function* () {
      for (;;) {
        const newline = text.indexOf("\n")
        if (newline >= 0) {
          const line = text.slice(0, newline)
          text = text.slice(newline + 1)
          yield line
          continue
        }
        const chunk = await reader.read()
        if (chunk.done) return
        text += new TextDecoder().decode(chunk.value)
      }
    }
    return { child, lines: lines() }
  }

  test("a send is queued into that turn (read at its next step there); status names it elsewhere", async () => {
    const db = path.join(tmp(), "reins.db")
    const gateFile = path.join(tmp(), "go")
    const { value } = await withSessions(
      db,
      () => [textStep("never: the other process runs the turn")],
      ({ sessionID, sessions }) =>
        Effect.gen(function* () {
          const other = holder(db, sessionID, gateFile)
          const first = yield* Effect.promise(() => other.lines.next())
          const status = yield* sessions.status(sessionID)
          const sent = yield* sessions.send({ sessionID, text: "QUEUED-FROM-ANOTHER-PROCESS", model })
          yield* Effect.sync(() => Bun.write(gateFile, ""))
          const last = yield* Effect.promise(() => other.lines.next())
          return { first: first.value, status, sent, end: JSON.parse(String(last.value)) as { ended: string; requests: Array<string> } }
        })
    )
    expect(value.first).toBe("holding")
    expect(value.status).toMatchObject({ running: "elsewhere", run: { pid: expect.any(Number) } })
    expect(value.sent).toMatchObject({ _tag: "queued", where: "elsewhere" })
    expect(value.end.ended).toBe("finished")
    expect(value.end.requests).toHaveLength(2)
    expect(value.end.requests[1]).toContain("QUEUED-FROM-ANOTHER-PROCESS")
  })

  test("abort asks the holder in the other process: its turn stops (interrupted there) and the session is idle", async () => {
    const db = path.join(tmp(), "reins.db")
    const gateFile = path.join(tmp(), "go")
    const { value } = await withSessions(
      db,
      () => [],
      ({ sessionID, sessions }) =>
        Effect.gen(function* () {
          const other = holder(db, sessionID, gateFile)
          yield* Effect.promise(() => other.lines.next())
          const aborted = yield* sessions.abort(sessionID)
          const last = yield* Effect.promise(() => other.lines.next())
          return { aborted, end: JSON.parse(String(last.value)) as { ended: string }, status: yield* sessions.status(sessionID) }
        })
    )
    expect(value.aborted).toBe("elsewhere")
    expect(value.end.ended).toBe("interrupted")
    expect(value.status.running).toBe(false)
  })

  test("remove of a session another process runs stops that turn first, then deletes the session", async () => {
    const db = path.join(tmp(), "reins.db")
    const gateFile = path.join(tmp(), "go")
    const { value } = await withSessions(
      db,
      () => [],
      ({ sessionID, sessions, store }) =>
        Effect.gen(function* () {
          const other = holder(db, sessionID, gateFile)
          yield* Effect.promise(() => other.lines.next())
          const removed = yield* sessions.remove(sessionID)
          const last = yield* Effect.promise(() => other.lines.next())
          return { removed, end: JSON.parse(String(last.value)) as { ended: string }, after: yield* Effect.flip(store.getSession(sessionID)) }
        })
    )
    expect(value.removed).toMatchObject({ stopped: "elsewhere", session: { title: "start the long job" } })
    expect(value.end.ended).toBe("interrupted")
    expect(value.after.reason).toBe("not-found")
  })
})
