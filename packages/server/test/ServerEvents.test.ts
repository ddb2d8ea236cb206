import { describe, expect, test } from "bun:test"
import { Bus, type Session } from "@reins/domain"
import { EventAppender } from "@reins/session"
import { EventLog, SessionStore, Storage, type EventToAppend } from "@reins/storage"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { HubLimits } from "../src/EventHub.ts"
import { ServerEvents } from "../src/ServerEvents.ts"
import { ServerInfo } from "../src/ServerInfo.ts"

const tmp = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `reins-events-${name}-`))

/** Two projects sharing one SQLite database: this server's (`here`) and another (`there`). */
const setup = () => {
  const here = tmp("here")
  const there = tmp("there")
  const storage = EventAppender.layer.pipe(Layer.provideMerge(Bus.layer), Layer.provideMerge(Storage.layerSqlite(path.join(tmp("db"), "reins.db"))))
  const session = (id: string, directory: string, parentID?: string): Session => ({
    id,
    title: id,
    directory,
    ...(parentID === undefined ? {} : { parentID }),
    time: { created: 1, updated: 1 }
  })
  const sessions = { mine: session("ses_mine", here), theirs: session("ses_theirs", there), theirSub: session("ses_theirsub", there, "ses_theirs") }
  const created = (s: Session): EventToAppend => ({
    sessionID: s.id,
    rootSessionID: s.parentID ?? s.id,
    time: 1,
    event: { type: "session.created", session: s }
  })
  const delta = (s: Session, text: string): EventToAppend => ({
    sessionID: s.id,
    rootSessionID: s.parentID ?? s.id,
    time: 1,
    event: { type: "part.delta", sessionID: s.id, partID: "prt_1", partType: "text", delta: text }
  })
  const server = (limits: Partial<HubLimits> = {}) =>
    ServerEvents.layer.pipe(
      Layer.provide(Layer.succeed(HubLimits, { ...HubLimits.defaultValue(), ...limits })),
      Layer.provide(Layer.succeed(ServerInfo, { directory: here, version: "0", config: {}, models: {}, resolveModel: () => Effect.fail("no model") }))
    )
  return { storage, sessions, created, delta, server }
}

/** The ids and types of SSE frames. */
const parse = (frames: ReadonlyArray<string>) =>
  frames.map((f) => ({ id: /^id: (\d+)/.exec(f)?.[1], type: /event: (.*)/.exec(f)![1]!, data: JSON.parse(/data: (.*)/.exec(f)![1]!) }))

describe("ServerEvents: another project's sessions on the same database", () => {
  test("are not streamed, replayed, or subscribable; this project's events all arrive", async () => {
    const { storage, sessions, created, delta, server } = setup()
    await Effect.runPromise(
      Effect.gen(function* () {
        const log = yield* EventLog
        const store = yield* SessionStore
        for (const s of Object.values(sessions)) yield* store.createSession(s)
        yield* log.append([created(sessions.mine), created(sessions.theirs), created(sessions.theirSub)])
        yield* log.append([delta(sessions.theirs, "secret"), delta(sessions.mine, "one"), delta(sessions.theirSub, "secret sub")])
        const mineIds = [1, 5]
        yield* Effect.gen(function* () {
          const hub = yield* ServerEvents
          // replay of everything (from the log) without a filter: this project's events only
          const client = yield* hub.subscribe({ lastEventId: 0 })
          const replay = parse(yield* client.take)
          expect(replay.map((f) => f.type)).toEqual(["server.connected", "session.created", "part.delta"])
          expect(replay.filter((f) => f.id !== undefined).map((f) => Number(f.id))).toEqual(mineIds)
          expect(JSON.stringify(replay)).not.toContain("secret")
          // live: another project's event logged before this project's one never reaches the client
          yield* log.append([delta(sessions.theirs, "secret live")])
          yield* log.append([delta(sessions.mine, "two")])
          const live = parse(yield* client.take)
          expect(live.map((f) => f.data.delta)).toEqual(["two"])
          client.close()
          // a replay from the ring (the events this process read live) is filtered too
          const again = parse(yield* (yield* hub.subscribe({ lastEventId: 5 })).take)
          expect(again.map((f) => f.data.delta ?? f.type)).toEqual(["server.connected", "two"])
          // another project's session, and a sub-agent of it: not found, as the session routes say
          for (const id of [sessions.theirs.id, sessions.theirSub.id]) {
            const failed = yield* Effect.flip(hub.subscribe({ sessionID: id, lastEventId: 0 }))
            expect(failed.reason).toBe("not-found")
          }
          const own = parse(yield* (yield* hub.subscribe({ sessionID: sessions.mine.id, lastEventId: 0 })).take)
          expect(own.map((f) => f.data.delta ?? f.type)).toEqual(["server.connected", "session.created", "one", "two"])
        }).pipe(Effect.provide(server()))
      }).pipe(Effect.provide(storage), Effect.scoped)
    )
  }, 60_000)
})

describe("ServerEvents: a replay from an old Last-Event-ID", () => {
  for (const filtered of [true, false])
    test(`reads at most backfill events per connection, and reconnecting from server.disconnected gets every event once, in order (${filtered ? "one session" : "no filter"})`, async () => {
      const { storage, sessions, created, delta, server } = setup()
      const backfill = 25
      await Effect.runPromise(
        Effect.gen(function* () {
          const log = yield* EventLog
          const store = yield* SessionStore
          for (const s of Object.values(sessions)) yield* store.createSession(s)
          yield* log.append([created(sessions.mine), created(sessions.theirs)])
          for (let i = 0; i < 300; i += 30)
            yield* log.append(Array.from({ length: 30 }, (_, j) => delta(j % 3 === 0 ? sessions.theirs : sessions.mine, `${i + j}`)))
          const expected = (yield* log.read({ after: 0, rootSessionID: sessions.mine.id })).map((e) => e.id)
          yield* Effect.gen(function* () {
            const hub = yield* ServerEvents
            const got: Array<number> = []
            let from = 0
            let connections = 0
            for (;;) {
              connections++
              expect(connections).toBeLessThan(100)
              const client = yield* hub.subscribe({ lastEventId: from, ...(filtered ? { sessionID: sessions.mine.id } : {}) })
              const frames: Array<ReturnType<typeof parse>[number]> = []
              // the replay: read until the client ends (cut) or it has everything
              for (;;) {
                const batch = parse(yield* client.take)
                frames.push(...batch)
                const ids = frames.filter((f) => f.id !== undefined).length
                if (batch.at(-1)?.type === "server.disconnected" || got.length + ids >= expected.length) break
              }
              client.close()
              const events = frames.filter((f) => f.id !== undefined)
              expect(events.length).toBeLessThanOrEqual(backfill)
              got.push(...events.map((f) => Number(f.id)))
              const last = frames.at(-1)!
              if (last.type !== "server.disconnected") break
              expect(last.data.lastEventId).toBeGreaterThan(from)
              from = last.data.lastEventId
            }
            expect(got).toEqual(expected)
            expect(connections).toBeGreaterThan(expected.length / backfill)
          }).pipe(Effect.provide(server({ replay: 5, backfill })))
        }).pipe(Effect.provide(storage), Effect.scoped)
      )
    }, 60_000)
})

describe("ServerEvents: this process's own events", () => {
  test("reach the hub as the appender stores them, with no read of the log; another process's event in between keeps its place", async () => {
    const here = tmp("here")
    const file = path.join(tmp("db"), "reins.db")
    const storage = EventAppender.layer.pipe(Layer.provideMerge(Bus.layer), Layer.provideMerge(Storage.layerSqlite(file)))
    const mine: Session = { id: "ses_mine", title: "mine", directory: here, time: { created: 1, updated: 1 } }
    const delta = (text: string) => ({ type: "part.delta" as const, sessionID: mine.id, partID: "prt_1", partType: "text" as const, delta: text })
    const info = Layer.succeed(ServerInfo, { directory: here, version: "0", config: {}, models: {}, resolveModel: () => Effect.fail("no model") })
    await Effect.runPromise(
      Effect.gen(function* () {
        const log = yield* EventLog
        const appender = yield* EventAppender
        yield* (yield* SessionStore).createSession(mine)
        // another process on the same database: its appends wake this one only through the log
        const other = yield* Layer.build(Storage.layerSqlite(file))
        yield* Effect.gen(function* () {
          const hub = yield* ServerEvents
          const client = yield* hub.subscribe({ sessionID: mine.id })
          expect(parse(yield* client.take).map((f) => f.type)).toEqual(["server.connected"])
          yield* appender.offer({ type: "session.created", session: mine })
          yield* appender.offer(delta("one"))
          yield* appender.flush
          // handed over by the appender itself: the log's reader has not run (no fiber ran since the flush)
          const last = yield* log.last()
          expect(hub.latest()).toBe(last)
          expect(parse(yield* client.take).map((f) => f.data.delta ?? f.type)).toEqual(["session.created", "one"])
          // another process appends, then this one: this one's event waits for the reader, which gives both in order
          yield* Effect.provideContext(
            EventLog.use((otherLog) => otherLog.append([{ sessionID: mine.id, rootSessionID: mine.id, time: 1, event: delta("theirs") }])),
            other
          )
          yield* appender.offer(delta("two"))
          yield* appender.flush
          const got: Array<string> = []
          while (got.length < 2) got.push(...parse(yield* client.take).map((f) => f.data.delta))
          expect(got).toEqual(["theirs", "two"])
        }).pipe(Effect.provide(Layer.provide(ServerEvents.layer, info)))
      }).pipe(Effect.provide(storage), Effect.scoped)
    )
  }, 60_000)
})
