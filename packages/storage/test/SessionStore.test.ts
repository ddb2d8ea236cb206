import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { SessionStore } from "../src/SessionStore.ts"
import { assistantMessage, implementations, run, session, shape, textPart, toolPart, userMessage } from "./support.ts"

// One behavioural suite, run against every implementation: they must not drift apart.
for (const [name, makeLayer] of implementations) {
  describe(`SessionStore (${name})`, () => {
    test("lists sessions newest updated first, filters by directory, limits", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a", { updated: 100 }))
          yield* store.createSession(session("ses_b", { updated: 300, directory: "/other" }))
          yield* store.createSession(session("ses_c", { updated: 200 }))
          yield* store.createSession(session("ses_d", { updated: 200 }))
          return {
            all: yield* store.listSessions(),
            none: yield* store.listSessions({}),
            project: yield* store.listSessions({ directory: "/work/project" }),
            limited: yield* store.listSessions({ limit: 2 }),
            got: yield* store.getSession("ses_c")
          }
        })
      )
      // Equal update times fall back to the id, descending.
      expect(result.all.map((s) => s.id)).toEqual(["ses_b", "ses_d", "ses_c", "ses_a"])
      expect(result.none.map((s) => s.id)).toEqual(["ses_b", "ses_d", "ses_c", "ses_a"])
      expect(result.project.map((s) => s.id)).toEqual(["ses_d", "ses_c", "ses_a"])
      expect(result.limited.map((s) => s.id)).toEqual(["ses_b", "ses_d"])
      expect(result.got).toEqual(session("ses_c", { updated: 200 }))
    })

    test("updateSession replaces the session and reorders the list", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a", { updated: 100 }))
          yield* store.createSession(session("ses_b", { updated: 200 }))
          yield* store.updateSession(session("ses_a", { title: "renamed", time: { created: 100, updated: 900 } }))
          return {
            list: yield* store.listSessions(),
            got: yield* store.getSession("ses_a"),
            missing: yield* Effect.flip(store.updateSession(session("ses_zzz")))
          }
        })
      )
      expect(result.list.map((s) => s.id)).toEqual(["ses_a", "ses_b"])
      expect(result.got.title).toBe("renamed")
      expect(result.got.time).toEqual({ created: 100, updated: 900 })
      expect(result.missing.reason).toBe("not-found")
    })

    test("latestSession picks the newest parent-less session of the directory", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const empty = yield* store.latestSession("/work/project")
          yield* store.createSession(session("ses_a", { updated: 100 }))
          yield* store.createSession(session("ses_b", { updated: 200 }))
          yield* store.createSession(session("ses_child", { updated: 500, parentID: "ses_a" }))
          yield* store.createSession(session("ses_elsewhere", { updated: 900, directory: "/elsewhere" }))
          return {
            empty,
            latest: yield* store.latestSession("/work/project"),
            elsewhere: yield* store.latestSession("/elsewhere"),
            child: yield* store.getSession("ses_child")
          }
        })
      )
      expect(result.empty).toBeUndefined()
      expect(result.latest?.id).toBe("ses_b")
      expect(result.elsewhere?.id).toBe("ses_elsewhere")
      expect(result.child.parentID).toBe("ses_a")
    })

    test("a missing session is not-found and says how to list the ids", async () => {
      const error = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          return yield* Effect.flip(store.getSession("ses_nope"))
        })
      )
      expect(error._tag).toBe("StoreError")
      expect(error.reason).toBe("not-found")
      expect(error.message).toContain("ses_nope")
      expect(error.message).toContain("reins sessions list")
    })

    test("creating a session twice fails and keeps the first", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a", { title: "first" }))
          const error = yield* Effect.flip(store.createSession(session("ses_a", { title: "second" })))
          return { error, kept: yield* store.getSession("ses_a") }
        })
      )
      expect(result.error.reason).toBe("io")
      expect(result.kept.title).toBe("first")
    })

    test("messages come back ordered by id with their parts ordered by id", async () => {
      const user = userMessage("msg_001", "ses_a")
      const reply = assistantMessage("msg_002", "ses_a", "msg_001")
      const rows = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          yield* store.putMessage(reply)
          yield* store.putMessage(user)
          yield* store.putMessage(userMessage("msg_003", "ses_b"))
          yield* store.putPart(textPart("prt_003", reply, "third"))
          yield* store.putPart(toolPart("prt_002", reply))
          yield* store.putPart(textPart("prt_001", user, "hello"))
          yield* store.putPart(textPart("prt_009", userMessage("msg_003", "ses_b"), "other session"))
          return yield* store.messages("ses_a")
        })
      )
      expect(shape(rows)).toEqual([
        ["msg_001", ["prt_001"]],
        ["msg_002", ["prt_002", "prt_003"]]
      ])
      expect(rows[0]?.info).toEqual(user)
      expect(rows[1]?.info).toEqual(reply)
      expect(rows[1]?.parts[0]).toEqual(toolPart("prt_002", reply))
    })

    test("putPart replaces only that part; putMessage keeps the parts", async () => {
      const user = userMessage("msg_001", "ses_a")
      const rows = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.putMessage(user)
          yield* store.putParts([textPart("prt_001", user, "one"), textPart("prt_002", user, "two")])
          for (const text of ["he", "hell", "hello"]) yield* store.putPart(textPart("prt_001", user, text))
          yield* store.putMessage({ ...user, metadata: { edited: true } })
          return yield* store.messages("ses_a")
        })
      )
      expect(rows).toEqual([
        {
          info: { ...user, metadata: { edited: true } },
          parts: [textPart("prt_001", user, "hello"), textPart("prt_002", user, "two")]
        }
      ])
    })

    test("putParts saves all parts or none", async () => {
      const user = userMessage("msg_001", "ses_a")
      const orphan = userMessage("msg_missing", "ses_a")
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.putMessage(user)
          yield* store.putParts([])
          const error = yield* Effect.flip(store.putParts([textPart("prt_001", user, "kept?"), textPart("prt_002", orphan, "no message")]))
          return { error, rows: yield* store.messages("ses_a") }
        })
      )
      expect(result.error.reason).toBe("io")
      expect(shape(result.rows)).toEqual([["msg_001", []]])
    })

    test("messages and parts need a stored session and message", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const message = yield* Effect.flip(store.putMessage(userMessage("msg_001", "ses_missing")))
          const part = yield* Effect.flip(store.putPart(textPart("prt_001", userMessage("msg_001", "ses_x"), "x")))
          return { message, part, rows: yield* store.messages("ses_missing") }
        })
      )
      expect(result.message.reason).toBe("io")
      expect(result.part.reason).toBe("io")
      expect(result.rows).toEqual([])
    })

    test("deleteSession removes the session with its messages and parts, and nothing else", async () => {
      const doomed = userMessage("msg_001", "ses_a")
      const kept = userMessage("msg_002", "ses_b")
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_a"))
          yield* store.createSession(session("ses_b"))
          yield* store.putMessage(doomed)
          yield* store.putMessage(kept)
          yield* store.putParts([textPart("prt_001", doomed, "bye"), textPart("prt_002", kept, "stay")])
          yield* store.deleteSession("ses_a")
          return {
            gone: yield* Effect.flip(store.getSession("ses_a")),
            again: yield* Effect.flip(store.deleteSession("ses_a")),
            rows: yield* store.messages("ses_a"),
            list: yield* store.listSessions(),
            other: yield* store.messages("ses_b"),
            // The message id is free again: its old row and parts are really gone.
            reuse: yield* Effect.flip(store.putPart(textPart("prt_003", doomed, "orphan")))
          }
        })
      )
      expect(result.gone.reason).toBe("not-found")
      expect(result.again.reason).toBe("not-found")
      expect(result.rows).toEqual([])
      expect(result.list.map((s) => s.id)).toEqual(["ses_b"])
      expect(shape(result.other)).toEqual([["msg_002", ["prt_002"]]])
      expect(result.reuse.reason).toBe("io")
    })

    test("deleteSession takes the session's sub-agent sessions at every depth with it, and no other session", async () => {
      const result = await run(
        makeLayer(),
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.createSession(session("ses_root"))
          yield* store.createSession(session("ses_child", { parentID: "ses_root" }))
          yield* store.createSession(session("ses_grand", { parentID: "ses_child" }))
          yield* store.createSession(session("ses_other"))
          yield* store.createSession(session("ses_otherchild", { parentID: "ses_other" }))
          const grandMessage = userMessage("msg_g", "ses_grand")
          yield* store.putMessage(grandMessage)
          yield* store.putParts([textPart("prt_g", grandMessage, "deep")])
          const tree = yield* store.sessionTree("ses_root")
          // a cycle of parents (never made by reins, but nothing stops it) lists each once
          yield* store.createSession(session("ses_x", { parentID: "ses_y" }))
          yield* store.createSession(session("ses_y", { parentID: "ses_x" }))
          const cycle = yield* store.sessionTree("ses_x")
          const none = yield* store.sessionTree("ses_nope")
          // a sub-agent session deleted alone leaves its parent
          const leaf = yield* store.deleteSession("ses_otherchild")
          const deleted = yield* store.deleteSession("ses_root")
          const gone = yield* Effect.forEach(["ses_root", "ses_child", "ses_grand"], (id) => Effect.flip(store.getSession(id)))
          return {
            tree,
            cycle,
            none,
            leaf,
            deleted,
            gone: gone.map((e) => e.reason),
            grandRows: yield* store.messages("ses_grand"),
            // the grandchild's message id is free: its row and parts are really gone
            reuse: yield* Effect.flip(store.putPart(textPart("prt_g2", grandMessage, "orphan"))),
            other: (yield* store.getSession("ses_other")).id
          }
        })
      )
      expect(result.tree[0]).toBe("ses_root")
      expect([...result.tree].sort()).toEqual(["ses_child", "ses_grand", "ses_root"])
      expect([...result.cycle].sort()).toEqual(["ses_x", "ses_y"])
      expect(result.none).toEqual([])
      expect(result.leaf).toEqual(["ses_otherchild"])
      expect(result.deleted[0]).toBe("ses_root")
      expect([...result.deleted].sort()).toEqual(["ses_child", "ses_grand", "ses_root"])
      expect(result.gone).toEqual(["not-found", "not-found", "not-found"])
      expect(result.grandRows).toEqual([])
      expect(result.reuse.reason).toBe("io")
      expect(result.other).toBe("ses_other")
    })
  })
}
