// The "always" permission grants kept per project (what `reins permissions` lists and revokes).
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { Grants } from "../src/Grants.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { grant, implementations, run, session } from "./support.ts"

for (const [name, makeLayer] of implementations) {
  describe(`Grants (${name})`, () => {
    test("grants list by project, then creation time, then id; a project filter keeps only its own", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const grants = yield* Grants
          const empty = yield* grants.list()
          yield* grants.add(grant("grt_c", { created: 300 }))
          yield* grants.add(grant("grt_b", { created: 100, project: "/work/other" }))
          yield* grants.add(grant("grt_a", { created: 300 }))
          yield* grants.add(grant("grt_d", { created: 200 }))
          return {
            empty,
            all: yield* grants.list(),
            project: yield* grants.list("/work/project"),
            other: yield* grants.list("/work/other"),
            none: yield* grants.list("/nowhere")
          }
        })
      )
      expect(result.empty).toEqual([])
      expect(result.all.map((g) => g.id)).toEqual(["grt_b", "grt_d", "grt_a", "grt_c"])
      expect(result.project.map((g) => g.id)).toEqual(["grt_d", "grt_a", "grt_c"])
      expect(result.other).toEqual([grant("grt_b", { created: 100, project: "/work/other" })])
      expect(result.none).toEqual([])
    })

    test("adding the same grant again keeps the first row; a reused id for another grant fails", async () => {
      const first = grant("grt_1", { permission: "bash", pattern: "git status*", created: 100 })
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const grants = yield* Grants
          yield* grants.add(first)
          yield* grants.add(first)
          yield* grants.add({ ...first, id: "grt_2", time: { created: 200 } })
          // Same (project, permission, pattern) wins over the id: still a no-op.
          yield* grants.add(grant("grt_1", { permission: "bash", pattern: "git status*", created: 300 }))
          // Another project or another permission is another grant.
          yield* grants.add({ ...first, id: "grt_3", project: "/work/other" })
          yield* grants.add({ ...first, id: "grt_4", permission: "edit" })
          const reused = yield* Effect.flip(grants.add(grant("grt_1", { pattern: "npm test" })))
          return { reused, all: yield* grants.list() }
        })
      )
      expect(result.all).toEqual([{ ...first, id: "grt_3", project: "/work/other" }, first, { ...first, id: "grt_4", permission: "edit" }])
      expect(result.reused.reason).toBe("io")
      expect(result.reused.message).toContain("grt_1")
      expect(result.reused.message).toContain("already stored")
    })

    test("revoke deletes those ids and says how many it deleted", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const grants = yield* Grants
          yield* grants.add(grant("grt_a"))
          yield* grants.add(grant("grt_b"))
          yield* grants.add(grant("grt_c", { project: "/work/other" }))
          const nothing = yield* grants.revoke([])
          const two = yield* grants.revoke(["grt_a", "grt_c", "grt_a", "grt_missing"])
          const again = yield* grants.revoke(["grt_a"])
          const left = yield* grants.list()
          // The same grant can be added again once revoked.
          yield* grants.add(grant("grt_a2", { pattern: "pattern of grt_a" }))
          return { nothing, two, again, left, readded: yield* grants.list("/work/project") }
        })
      )
      expect(result.nothing).toBe(0)
      expect(result.two).toBe(2)
      expect(result.again).toBe(0)
      expect(result.left.map((g) => g.id)).toEqual(["grt_b"])
      expect(result.readded.map((g) => g.id)).toEqual(["grt_a2", "grt_b"])
    })

    test("grants and sessions are independent", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const grants = yield* Grants
          yield* store.createSession(session("ses_a"))
          yield* grants.add(grant("grt_a"))
          yield* store.deleteSession("ses_a")
          const kept = yield* grants.list()
          yield* store.createSession(session("ses_b"))
          yield* grants.revoke(["grt_a"])
          return { kept, sessions: yield* store.listSessions() }
        })
      )
      expect(result.kept.map((g) => g.id)).toEqual(["grt_a"])
      expect(result.sessions.map((s) => s.id)).toEqual(["ses_b"])
    })
  })
}
