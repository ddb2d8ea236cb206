// The event log and the stored permission questions — the same behaviour from every database.
import type { PermissionAsked } from "@reins/domain"
import { describe, expect, test } from "bun:test"
import { Effect, Fiber, Stream } from "effect"
import * as path from "node:path"
import { WritingClaim } from "../src/Claim.ts"
import { EventLog, type EventToAppend } from "../src/EventLog.ts"
import { PendingQuestions } from "../src/PendingQuestions.ts"
import { RunClaims } from "../src/RunClaims.ts"
import * as Storage from "../src/Storage.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { claim, claimed, implementations, run, session, tempDir } from "./support.ts"

const status = (sessionID: string, root = sessionID, time = 1): EventToAppend => ({
  sessionID,
  rootSessionID: root,
  time,
  event: { type: "session.status", sessionID, status: "busy" }
})

const asked = (id: string, sessionID: string): PermissionAsked => ({
  type: "permission.asked",
  id,
  sessionID,
  permission: "bash",
  patterns: ["rm x"],
  always: []
})

for (const [name, makeLayer] of implementations) {
  describe(`EventLog (${name})`, () => {
    test("ids increase across sessions, seq counts per session from 1; read from any position, of a session or a tree, in id order", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const log = yield* EventLog
          const empty = { last: yield* log.last(), first: yield* log.first() }
          const first = yield* log.append([status("ses_a"), status("ses_b"), status("ses_a")])
          const second = yield* log.append([status("ses_child", "ses_a"), status("ses_b")])
          // 12 batches more: ids past 9 must still come in numeric order
          for (let i = 0; i < 12; i++) yield* log.append([status("ses_a")])
          const all = yield* log.read({ after: 0 })
          const replays = yield* Effect.forEach([0, 1, 4, 9, 16, 17], (after) => log.read({ after }))
          return {
            empty,
            first,
            second,
            all,
            replays,
            session: yield* log.read({ after: 0, sessionID: "ses_b" }),
            tree: yield* log.read({ after: 2, rootSessionID: "ses_a", limit: 3 }),
            bounds: { last: yield* log.last(), first: yield* log.first() }
          }
        })
      )
      expect(result.empty).toEqual({ last: 0, first: 0 })
      expect(result.first.map((e) => [e.id, e.sessionID, e.seq])).toEqual([
        [1, "ses_a", 1],
        [2, "ses_b", 1],
        [3, "ses_a", 2]
      ])
      expect(result.second.map((e) => [e.id, e.sessionID, e.rootSessionID, e.seq])).toEqual([
        [4, "ses_child", "ses_a", 1],
        [5, "ses_b", "ses_b", 2]
      ])
      expect(result.all.map((e) => e.id)).toEqual(Array.from({ length: 17 }, (_, i) => i + 1))
      expect(result.all.filter((e) => e.sessionID === "ses_a").map((e) => e.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1))
      expect(result.all[0]!.event).toEqual({ type: "session.status", sessionID: "ses_a", status: "busy" })
      for (const [i, after] of [0, 1, 4, 9, 16, 17].entries())
        expect(result.replays[i]!.map((e) => e.id)).toEqual(result.all.filter((e) => e.id > after).map((e) => e.id))
      expect(result.session.map((e) => e.id)).toEqual([2, 5])
      expect(result.tree.map((e) => [e.id, e.sessionID])).toEqual([
        [3, "ses_a"],
        [4, "ses_child"],
        [6, "ses_a"]
      ])
      expect(result.bounds).toEqual({ last: 17, first: 1 })
    })

    test("prune deletes what is older than a time; first() then says where the log starts; seq goes on", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const log = yield* EventLog
          yield* log.append([status("ses_a", "ses_a", 10), status("ses_a", "ses_a", 20), status("ses_a", "ses_a", 30)])
          const pruned = yield* log.prune(25)
          const next = yield* log.append([status("ses_a", "ses_a", 40)])
          return { pruned, first: yield* log.first(), last: yield* log.last(), next, left: yield* log.read({ after: 0 }) }
        })
      )
      expect(result.pruned).toBe(2)
      expect(result.first).toBe(3)
      expect(result.last).toBe(4)
      expect(result.next.map((e) => [e.id, e.seq])).toEqual([[4, 4]])
      expect(result.left.map((e) => e.id)).toEqual([3, 4])
    })

    test("under a WritingClaim the append is fenced: the holder appends, a taken-over holder appends nothing (taken-over)", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          const log = yield* EventLog
          yield* store.createSession(session("ses_a"))
          // a lease that lapses at once, so another process can take the session over
          const mine = yield* Effect.flatMap(claims.claim(claim("ses_a", 100, { ttlMs: 0 })), claimed)
          const held = yield* log.append([status("ses_a")]).pipe(Effect.provideService(WritingClaim, mine))
          yield* Effect.flatMap(claims.claim(claim("ses_a", 200)), claimed)
          const stale = yield* Effect.flip(log.append([status("ses_a"), status("ses_b")]).pipe(Effect.provideService(WritingClaim, mine)))
          // a long batch (events kept after failed appends) is fenced the same
          const long = Array.from({ length: 100 }, (_, i) => status(i % 2 === 0 ? "ses_a" : "ses_b"))
          const staleLong = yield* Effect.flip(log.append(long).pipe(Effect.provideService(WritingClaim, mine)))
          return { held, stale, staleLong, all: yield* log.read({ after: 0 }) }
        })
      )
      expect(result.held.map((e) => e.id)).toEqual([1])
      expect(result.stale.reason).toBe("taken-over")
      expect(result.stale.message).toContain("pid 200")
      expect(result.staleLong.reason).toBe("taken-over")
      expect(result.all.map((e) => e.id)).toEqual([1])
    })

    test("batches of every length (a step's few events, a full batch, more kept after failures): in order, each session's seq gapless", async () => {
      const lengths = [1, 2, 3, 63, 64, 65, 150]
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const log = yield* EventLog
          const appended = []
          for (const length of lengths) appended.push(yield* log.append(Array.from({ length }, (_, i) => status(i % 3 === 0 ? "ses_b" : "ses_a", "ses_a", i))))
          return { appended, all: yield* log.read({ after: 0 }) }
        })
      )
      const total = lengths.reduce((a, b) => a + b, 0)
      // what append returned is what was stored, in batch order
      expect(result.appended.flat()).toEqual([...result.all])
      expect(result.all.map((e) => e.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
      expect(result.all.map((e) => e.time)).toEqual(lengths.flatMap((length) => Array.from({ length }, (_, i) => i)))
      for (const id of ["ses_a", "ses_b"]) {
        const seqs = result.all.filter((e) => e.sessionID === id).map((e) => e.seq)
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1))
      }
    })

    test("wakeups emits after an append", async () => {
      const woke = await run(
        makeLayer(),
        Effect.gen(function* () {
          const log = yield* EventLog
          const fiber = yield* Effect.forkChild(Stream.runHead(log.wakeups))
          // appends until the subscription has started and seen one (the stream starts asynchronously)
          while (fiber.pollUnsafe() === undefined) {
            yield* log.append([status("ses_a")])
            yield* Effect.sleep(5)
          }
          return yield* Fiber.join(fiber)
        })
      )
      expect(woke._tag).toBe("Some")
    })

    test("a removed session's events and questions go with it", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const log = yield* EventLog
          const questions = yield* PendingQuestions
          yield* store.createSession(session("ses_a"))
          yield* log.append([status("ses_a"), status("ses_b")])
          yield* questions.put({ id: "per_1", sessionID: "ses_a", rootSessionID: "ses_a", time: { created: 1 }, asked: asked("per_1", "ses_a") })
          yield* store.deleteSession("ses_a")
          return { events: yield* log.read({ after: 0 }), questions: yield* questions.list() }
        })
      )
      expect(result.events.map((e) => e.sessionID)).toEqual(["ses_b"])
      expect(result.questions).toEqual([])
    })
  })

  describe(`PendingQuestions (${name})`, () => {
    test("a claim of a session drops the questions left by a holder that died (nobody can answer them); other sessions' stay", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          const questions = yield* PendingQuestions
          yield* store.createSession(session("ses_q"))
          yield* questions.put({ id: "per_dead", sessionID: "ses_q", rootSessionID: "ses_q", time: { created: 1 }, asked: asked("per_dead", "ses_q") })
          yield* store.createSession(session("ses_o"))
          yield* claimed(yield* claims.claim(claim("ses_o", 3)))
          yield* questions.put({ id: "per_other", sessionID: "ses_o", rootSessionID: "ses_o", time: { created: 2 }, asked: asked("per_other", "ses_o") })
          yield* claimed(yield* claims.claim(claim("ses_q", 2)))
          return (yield* questions.list()).map((q) => q.id)
        })
      )
      expect(result).toEqual(["per_other"])
    })

    test("a dead sub-agent's question (its lease lapsed or released) is neither listed nor answered; deleting the root deletes it", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const claims = yield* RunClaims
          const questions = yield* PendingQuestions
          yield* store.createSession(session("ses_root"))
          yield* store.createSession(session("ses_child", { parentID: "ses_root" }))
          const child = yield* claimed(yield* claims.claim(claim("ses_child", 1)))
          yield* questions.put({ id: "per_1", sessionID: "ses_child", rootSessionID: "ses_root", time: { created: 1 }, asked: asked("per_1", "ses_child") })
          const whileLive = (yield* questions.list({ rootSessionID: "ses_root" })).map((q) => q.id)
          // the process dies; the next turn claims the root
          yield* claims.release(child, Number.MAX_SAFE_INTEGER)
          yield* claimed(yield* claims.claim(claim("ses_root", 2)))
          const listed = yield* questions.list({ rootSessionID: "ses_root" })
          const answered = yield* questions.answer("per_1", { reply: "once" })
          // a live sibling's question: deleting the root removes its tree's questions
          yield* store.createSession(session("ses_sib", { parentID: "ses_root" }))
          yield* claimed(yield* claims.claim(claim("ses_sib", 3)))
          yield* questions.put({ id: "per_2", sessionID: "ses_sib", rootSessionID: "ses_root", time: { created: 2 }, asked: asked("per_2", "ses_sib") })
          const before = (yield* questions.list()).length
          yield* store.deleteSession("ses_root")
          return { whileLive, listed: listed.length, answered, before, after: (yield* questions.list()).length }
        })
      )
      expect(result).toEqual({ whileLive: ["per_1"], listed: 0, answered: false, before: 1, after: 0 })
    })

    test("listed by session and tree; answered once; the owner takes the answers of its session once, and they are gone", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const questions = yield* PendingQuestions
          const store = yield* SessionStore
          const claims = yield* RunClaims
          // questions are listed and answered while the asking session's lease is live
          for (const id of ["ses_a", "ses_child", "ses_b"]) {
            yield* store.createSession(session(id, id === "ses_child" ? { parentID: "ses_a" } : {}))
            yield* claimed(yield* claims.claim(claim(id, 1)))
          }
          yield* questions.put({ id: "per_1", sessionID: "ses_a", rootSessionID: "ses_a", time: { created: 1 }, asked: asked("per_1", "ses_a") })
          yield* questions.put({ id: "per_2", sessionID: "ses_child", rootSessionID: "ses_a", time: { created: 2 }, asked: asked("per_2", "ses_child") })
          yield* questions.put({ id: "per_3", sessionID: "ses_b", rootSessionID: "ses_b", time: { created: 3 }, asked: asked("per_3", "ses_b") })
          const lists = {
            all: yield* questions.list(),
            session: yield* questions.list({ sessionID: "ses_child" }),
            tree: yield* questions.list({ rootSessionID: "ses_a" })
          }
          const answers = [
            yield* questions.answer("per_2", { reply: "reject", message: "no" }),
            yield* questions.answer("per_2", { reply: "once" }),
            yield* questions.answer("per_9", { reply: "once" })
          ]
          const none = yield* questions.takeAnswers("ses_a")
          const taken = yield* questions.takeAnswers("ses_child")
          const again = yield* questions.takeAnswers("ses_child")
          yield* questions.remove("per_3")
          return { lists, answers, none, taken, again, left: yield* questions.list() }
        })
      )
      expect(result.lists.all.map((q) => q.id)).toEqual(["per_1", "per_2", "per_3"])
      expect(result.lists.session.map((q) => q.id)).toEqual(["per_2"])
      expect(result.lists.tree.map((q) => q.id)).toEqual(["per_1", "per_2"])
      expect(result.lists.all[1]!.asked).toEqual(asked("per_2", "ses_child"))
      expect(result.answers).toEqual([true, false, false])
      expect(result.none).toEqual([])
      expect(result.taken.map((q) => [q.id, q.reply])).toEqual([["per_2", { reply: "reject", message: "no" }]])
      expect(result.again).toEqual([])
      expect(result.left.map((q) => q.id)).toEqual(["per_1"])
    })
  })
}

describe("EventLog (sqlite, two processes)", () => {
  test("two processes appending to one file at once: every id once, in order; each session's seq gapless", async () => {
    const file = path.join(tempDir(), "reins.db")
    // the schema first, so the two do not race to migrate
    await run(Storage.layerSqlite(file), Effect.void)
    const fixture = path.join(import.meta.dir, "fixtures", "append-many.ts")
    const procs = ["p1", "p2"].map((tag) => Bun.spawn(["bun", fixture, file, tag, "500", "2"], { stdout: "inherit", stderr: "inherit" }))
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0])
    const all = await run(
      Storage.layerSqlite(file),
      Effect.flatMap(EventLog, (log) => log.read({ after: 0 }))
    )
    expect(all.length).toBe(2 * 500 * 3)
    expect(all.map((e) => e.id)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1))
    for (const sessionID of ["p1-a", "p2-a", "both"]) {
      const seqs = all.filter((e) => e.sessionID === sessionID).map((e) => e.seq)
      expect(seqs).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    }
    // the batches interleaved (each process's three events stay together: one transaction each)
    const owners = all.filter((e) => e.sessionID !== "both").map((e) => e.sessionID)
    for (let i = 0; i < owners.length; i += 2) expect(owners[i]).toBe(owners[i + 1]!)
    // a reader from any position sees the rest in order
    const tail = await run(
      Storage.layerSqlite(file),
      Effect.flatMap(EventLog, (log) => log.read({ after: 2_450, limit: 10_000 }))
    )
    expect(tail.map((e) => e.id)).toEqual(Array.from({ length: 550 }, (_, i) => i + 2_451))
  })
})
