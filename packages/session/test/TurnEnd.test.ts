// A turn's end (the session's time, then idle) is written under its claim, fenced: once its loop released the
// lease it still writes (nobody claimed since), but after another process's claim it writes neither.
import { expect, test } from "bun:test"
import type { SessionRun } from "@reins/domain"
import { EventLog, RunClaims, SessionStore, Storage, WritingClaim } from "@reins/storage"
import { Effect, Layer } from "effect"
import { SessionService } from "../src/index.ts"
import { model, sessionsLayer, textStep } from "./sessions-support.ts"

/** Runs one turn over a memory store that records each session update's claim; `takeOver` claims the session for another process just before the turn's closing update. */
const turnEnd = async (takeOver: boolean) => {
  const claimsSeen: Array<SessionRun | undefined> = []
  const watched = Layer.effect(
    SessionStore,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const claims = yield* RunClaims
      return SessionStore.of({
        ...store,
        updateSession: (session) =>
          Effect.gen(function* () {
            const claim = yield* WritingClaim
            claimsSeen.push(claim)
            // the closing update comes after the loop released the lease
            if (takeOver && claim !== undefined && (yield* claims.get(session.id)) === undefined)
              yield* claims.claim({ sessionID: session.id, holder: "other/2/x", host: "other", pid: 2, takesMessages: true, ttlMs: 60_000 })
            return yield* store.updateSession(session)
          })
      })
    })
  ).pipe(Layer.provideMerge(Storage.layerMemory))
  const { layer } = sessionsLayer([textStep("done")], { store: watched })
  const result = await Effect.runPromise(
    Effect.gen(function* () {
      const service = yield* SessionService
      const session = yield* service.create({ directory: "." })
      const turn = yield* service.prompt({ sessionID: session.id, text: "hi", model })
      const events = yield* (yield* EventLog).read({ after: 0, sessionID: session.id })
      const idle = events.filter((e) => e.event.type === "session.status" && (e.event as { status?: string }).status === "idle")
      return { text: turn.text, idle: idle.length, held: yield* (yield* RunClaims).get(session.id) }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
  return { ...result, claimsSeen }
}

test("the turn's closing update and idle are written under its claim, after its loop released the lease", async () => {
  const result = await turnEnd(false)
  expect(result.text).toBe("done")
  expect(result.claimsSeen.length).toBeGreaterThan(0)
  expect(result.claimsSeen.every((claim) => claim !== undefined)).toBe(true)
  expect(result.idle).toBe(1)
  expect(result.held).toBeUndefined()
})

test("once another process claimed the session, the turn's closing update is refused and no idle follows its busy", async () => {
  const result = await turnEnd(true)
  expect(result.text).toBe("done")
  expect(result.idle).toBe(0)
  expect(result.held?.holder).toBe("other/2/x")
})

test("a failed turn says its error once, before its idle, both in the log under its claim", async () => {
  const { layer } = sessionsLayer([])
  const result = await Effect.runPromise(
    Effect.gen(function* () {
      const service = yield* SessionService
      const session = yield* service.create({ directory: "." })
      const failed = yield* Effect.flip(service.prompt({ sessionID: session.id, text: "hi", model }))
      const events = yield* (yield* EventLog).read({ after: 0, sessionID: session.id })
      const closing = events
        .map((e) => e.event)
        .filter((e) => e.type === "session.error" || (e.type === "session.status" && e.status === "idle"))
        .map((e) => e.type)
      return { failed: failed._tag, closing }
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
  expect(result.failed).toBe("ProviderError")
  expect(result.closing).toEqual(["session.error", "session.status"])
})
