import { describe, expect, test } from "bun:test"
import { Deferred, Effect, Fiber, Layer, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { eventually, it } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Bus, Ids, type Event } from "@reins/domain"
import { scanBash } from "../src/BashScan.ts"
import {
  type Answer,
  Permission,
  PermissionGrants,
  PermissionQuestions,
  PermissionSettings,
  type GrantStore,
  type Prompter,
  type QuestionStore
} from "../src/Permission.ts"
import { defaultRules, fromConfig, type Rule } from "../src/Rules.ts"

/** Gives an effect the Permission service (and its Bus) with these settings. */
const withPermission =
  (settings: PermissionSettings, grants?: GrantStore) =>
  <A, E>(effect: Effect.Effect<A, E, Permission | Bus | Scope.Scope>) =>
    effect.pipe(
      Effect.provide(Permission.layer.pipe(Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)))),
      Effect.provideService(PermissionSettings, settings),
      Effect.provideService(PermissionGrants, grants),
      Effect.scoped
    )

const run = <A, E>(effect: Effect.Effect<A, E, Permission | Bus | Scope.Scope>, settings: PermissionSettings, grants?: GrantStore) =>
  Effect.runPromise(withPermission(settings, grants)(effect))

const req = (patterns: Array<string>, always: Array<string> = []) => ({ sessionID: "ses_1", permission: "bash", patterns, always })

describe("Permission", () => {
  // The prompter's answer settles the question in the fiber that races the question's other waiters: completing the
  // question wakes the race at once, which ends that fiber, so what settling does for the session's other questions
  // must be done before the question is completed.
  const cascade = async (first: Answer, options: { readonly failingListener?: boolean } = {}) => {
    const asked: Array<string> = []
    // the answer comes once both questions wait (a person answers later, from the terminal's callback)
    const bothAsked = Effect.runSync(Deferred.make<void>())
    const prompter: Prompter = {
      ask: (r) =>
        Effect.andThen(
          Deferred.await(bothAsked),
          Effect.sync(() => {
            asked.push(r.patterns[0]!)
            return first
          })
        )
    }
    const results = await run(
      Effect.gen(function* () {
        let waiting = 0
        let replied = 0
        yield* (yield* Bus).listen((e) => (e.type === "permission.asked" && ++waiting === 2 ? Deferred.succeed(bothAsked, undefined) : Effect.void))
        // a listener that dies on the second answer (the cascaded one): the questions still end
        if (options.failingListener)
          yield* (yield* Bus).listen((e) => (e.type === "permission.replied" && ++replied === 2 ? Effect.die(new Error("listener failed")) : Effect.void))
        const permission = yield* Permission
        return yield* Effect.all([Effect.result(permission.ask(req(["ls a"], ["ls *"]))), Effect.result(permission.ask(req(["ls b"], ["ls *"])))], {
          concurrency: 2
        })
      }),
      { rules: fromConfig({ bash: "ask" }), nonInteractive: "deny", prompter }
    )
    return { asked, results }
  }
  test("the user's always, given through the prompter, approves the session's other questions it covers: asked once", async () => {
    const { asked, results } = await cascade({ reply: "always" })
    expect(asked).toEqual(["ls a"])
    expect(results.map((r) => r._tag)).toEqual(["Success", "Success"])
  })
  test("a failure while an answer cascades still ends the question answered: it is rejected, not left waiting", async () => {
    const { asked, results } = await cascade({ reply: "reject", message: "not now" }, { failingListener: true })
    expect(asked).toEqual(["ls a"])
    const first = results[0]!
    expect(first._tag).toBe("Failure")
    expect(first._tag === "Failure" ? first.failure.message : "").toContain("not now")
  })
  test("the user's reject, given through the prompter, rejects the session's other questions with it: asked once", async () => {
    const { asked, results } = await cascade({ reply: "reject", message: "not now" })
    expect(asked).toEqual(["ls a"])
    const second = results[1]!
    expect(second._tag).toBe("Failure")
    expect(second._tag === "Failure" ? second.failure.message : "").toContain("Rejected together with another call the user rejected: not now")
  })
  test("deny rule fails with a message for the model", async () => {
    const rules = [...defaultRules, ...fromConfig({ bash: { "rm *": "deny" } })]
    const result = await run(
      Effect.flip(
        Effect.gen(function* () {
          return yield* (yield* Permission).ask(req(["rm -rf x"]))
        })
      ),
      { rules, nonInteractive: "allow" }
    )
    expect(result.reason).toBe("denied")
    expect(result.message).toContain("rm -rf x")
  })
  test("ask without a person follows the non-interactive policy and publishes events", async () => {
    const rules = fromConfig({ bash: "ask" })
    const events: Array<Event["type"]> = []
    const program = Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.listen((e) => Effect.sync(() => void events.push(e.type)))
      const permission = yield* Permission
      const denied = yield* Effect.flip(permission.ask(req(["ls"])))
      return denied
    })
    const denied = await run(program, { rules, nonInteractive: "deny" })
    expect(denied.reason).toBe("rejected")
    expect(denied.message).toContain("--permission allow")
    expect(events).toEqual(["permission.asked", "permission.replied"])
    const allowed = await run(
      Effect.gen(function* () {
        return yield* (yield* Permission).ask(req(["ls"]))
      }),
      { rules, nonInteractive: "allow" }
    )
    expect(allowed).toBeUndefined()
  })
  test("always grants only the approved pattern for the session", async () => {
    const asked: Array<string> = []
    const prompter: Prompter = {
      ask: (r) =>
        Effect.sync(() => {
          asked.push(r.patterns.join(","))
          return r.patterns[0] === "git status" ? { reply: "always" as const } : { reply: "reject" as const, message: "no" }
        })
    }
    const program = Effect.gen(function* () {
      const permission = yield* Permission
      yield* permission.ask(req(["git status"], ["git status *"]))
      yield* permission.ask(req(["git status --short"], ["git status *"]))
      return yield* Effect.flip(permission.ask(req(["rm -rf x"], ["rm *"])))
    })
    const error = await run(program, { rules: fromConfig({ bash: "ask" }), nonInteractive: "deny", prompter })
    expect(asked).toEqual(["git status", "rm -rf x"])
    expect(error.message).toContain("no")
  })
})

const scanned = (command: string, cwd: string) =>
  Effect.map(scanBash(command, { cwd }), (requests) => requests.map((r) => ({ ...r, sessionID: "ses_1", command })))

/** Collects the ids of asked questions so a test can reply like a UI would. */
const askedIds = Effect.gen(function* () {
  const bus = yield* Bus
  const ids: Array<string> = []
  yield* bus.listen((e) => Effect.sync(() => void (e.type === "permission.asked" && ids.push(e.id))))
  return ids
})

describe("Permission service with the bash scan", () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "reins-perm-"))

  test("always on git status within `git status && rm -rf x` grants `git status *` only", async () => {
    const asked: Array<string> = []
    const prompter: Prompter = {
      ask: (r) =>
        Effect.sync(() => {
          asked.push(r.patterns[0]!)
          return { reply: r.patterns[0]!.startsWith("git") ? ("always" as const) : ("once" as const) }
        })
    }
    const program = Effect.gen(function* () {
      const permission = yield* Permission
      yield* permission.authorize(yield* scanned("git status && rm -rf x", cwd))
      yield* permission.authorize(yield* scanned("git status -s", cwd))
      yield* permission.authorize(yield* scanned("rm -rf y", cwd))
      return (yield* permission.rulesFor("ses_1")).filter((r) => r.action === "allow" && r.permission === "bash")
    })
    const granted = await run(program, { rules: fromConfig({ bash: "ask" }), nonInteractive: "deny", prompter })
    expect(asked).toEqual(["git status", "rm -rf x", "rm -rf y"])
    expect(granted.map((r) => r.pattern)).toEqual(["git status *"])
  })

  test("a denied request fails the call before anything is asked", async () => {
    let asked = 0
    const prompter: Prompter = {
      ask: () =>
        Effect.sync(() => {
          asked++
          return { reply: "once" as const }
        })
    }
    const rules = fromConfig({ bash: { "*": "ask", "rm *": "deny" } })
    const error = await run(Effect.flip(Effect.flatMap(Permission, (p) => Effect.flatMap(scanned("ls && sudo rm -rf /", cwd), p.authorize))), {
      rules,
      nonInteractive: "deny",
      prompter
    })
    expect(error.reason).toBe("denied")
    expect(error.pattern).toBe("rm -rf /")
    expect(asked).toBe(0)
  })

  test("opaque commands are asked under a broad allow, allowed by a rule that names them", async () => {
    const broad = await run(Effect.flip(Effect.flatMap(Permission, (p) => Effect.flatMap(scanned(`eval "$X"`, cwd), p.authorize))), {
      rules: fromConfig({ bash: "allow" }),
      nonInteractive: "deny"
    })
    expect(broad.reason).toBe("rejected")
    const named = await run(
      Effect.flatMap(Permission, (p) => Effect.flatMap(scanned(`eval "$X"`, cwd), p.authorize)),
      {
        rules: fromConfig({ bash: { "*": "allow", "eval *": "allow" } }),
        nonInteractive: "deny"
      }
    )
    expect(named).toBeUndefined()
  })
})

describe("replies from outside (library callers)", () => {
  test("always resolves the session's other pending asks it covers", async () => {
    const program = Effect.gen(function* () {
      const ids = yield* askedIds
      const permission = yield* Permission
      const first = yield* Effect.forkChild(permission.ask(req(["git status"], ["git status *"])))
      const second = yield* Effect.forkChild(permission.ask(req(["git status --short"], ["git status *"])))
      yield* eventually(
        Effect.sync(() => ids.length === 2),
        "both questions to be asked"
      )
      expect(permission.pending("ses_1").length).toBe(2)
      expect(yield* permission.reply(ids[0]!, { reply: "always" })).toBe(true)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(permission.pending().length).toBe(0)
      return yield* permission.reply(ids[1]!, { reply: "once" })
    })
    expect(await run(program, { rules: fromConfig({ bash: "ask" }), nonInteractive: "deny", timeoutMs: 60_000 })).toBe(false)
  })

  test("reject with a message fails this ask with it and rejects the session's other pending asks", async () => {
    const program = Effect.gen(function* () {
      const ids = yield* askedIds
      const permission = yield* Permission
      const first = yield* Effect.forkChild(Effect.flip(permission.ask(req(["make deploy"]))))
      const second = yield* Effect.forkChild(Effect.flip(permission.ask(req(["make release"]))))
      const other = yield* Effect.forkChild(permission.ask({ ...req(["ls"]), sessionID: "ses_2" }))
      yield* eventually(
        Effect.sync(() => ids.length === 3),
        "the three questions to be asked"
      )
      yield* permission.reply(ids[0]!, { reply: "reject", message: "not on Fridays" })
      const a = yield* Fiber.join(first)
      const b = yield* Fiber.join(second)
      expect(permission.pending("ses_2").length).toBe(1)
      yield* permission.reply(ids[2]!, { reply: "once" })
      yield* Fiber.join(other)
      return [a, b]
    })
    const [a, b] = await run(program, { rules: fromConfig({ bash: "ask" }), nonInteractive: "allow", timeoutMs: 60_000 })
    expect(a!.message).toContain("not on Fridays")
    expect(b!.reason).toBe("rejected")
    expect(b!.message).toContain("not on Fridays")
  })

  // virtual time: the hour-long timeout passes when the test moves the clock, once the question waits
  it.effect("no reply within the timeout: the non-interactive policy decides", () =>
    Effect.gen(function* () {
      const silent: Prompter = { ask: () => Effect.never }
      const unanswered = <A, E>(ask: Effect.Effect<A, E, Permission>, nonInteractive: "allow" | "deny") =>
        Effect.gen(function* () {
          const permission = yield* Permission
          const fiber = yield* Effect.forkChild(ask)
          yield* eventually(
            Effect.sync(() => permission.pending("ses_1").length === 1),
            "the question to be asked"
          )
          yield* TestClock.adjust("1 hour")
          return yield* Fiber.join(fiber)
        }).pipe(withPermission({ rules: fromConfig({ bash: "ask" }), nonInteractive, prompter: silent, timeoutMs: 3_600_000 }))
      const denied = yield* unanswered(Effect.flip(Effect.flatMap(Permission, (p) => p.ask(req(["ls"])))), "deny")
      expect(denied.message).toContain("nobody answered")
      const allowed = yield* unanswered(
        Effect.flatMap(Permission, (p) => p.ask(req(["ls"]))),
        "allow"
      )
      expect(allowed).toBeUndefined()
    })
  )
})

describe("project grants", () => {
  test("permission_persist project: an always in one runtime allows in the next, other projects unaffected", async () => {
    const saved = new Map<string, Array<Rule>>()
    const store: GrantStore = {
      load: (project) => Effect.sync(() => saved.get(project) ?? []),
      save: (project, rules) => Effect.sync(() => void saved.set(project, [...(saved.get(project) ?? []), ...rules]))
    }
    const always: Prompter = { ask: () => Effect.succeed({ reply: "always" }) }
    const settings = (project: string, prompter?: Prompter): PermissionSettings => ({
      rules: fromConfig({ bash: "ask" }),
      nonInteractive: "deny",
      persist: "project",
      project,
      ...(prompter ? { prompter } : {})
    })
    const ask = (command: string) => Effect.flatMap(Permission, (p) => p.ask(req([command], [`${command} *`])))
    await run(ask("make test"), settings("/p1", always), store)
    expect(saved.get("/p1")?.map((r) => r.pattern)).toEqual(["make test *"])
    expect(await run(ask("make test"), settings("/p1"), store)).toBeUndefined()
    const other = await run(Effect.flip(ask("make test")), settings("/p2"), store)
    expect(other.reason).toBe("rejected")
  })
})

describe("Permission with a shared question store", () => {
  test("answers stored by another process for two questions of one session both settle (one poll takes both)", async () => {
    const stored = new Map<string, { readonly sessionID: string; answer?: Answer }>()
    const questions: QuestionStore = {
      put: (asked) => Effect.sync(() => void stored.set(asked.id, { sessionID: asked.sessionID })),
      remove: (id) => Effect.sync(() => void stored.delete(id)),
      list: () => Effect.succeed([]),
      answer: (id, answer) =>
        Effect.sync(() => {
          const question = stored.get(id)
          if (question === undefined || question.answer !== undefined) return false
          question.answer = answer
          return true
        }),
      takeAnswers: (sessionID) =>
        Effect.sync(() => {
          const taken = [...stored.entries()].flatMap(([id, q]) => (q.sessionID === sessionID && q.answer ? [{ id, answer: q.answer }] : []))
          for (const { id } of taken) stored.delete(id)
          return taken
        })
    }
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const permission = yield* Permission
        const first = yield* Effect.forkChild(permission.ask(req(["make a"])))
        const second = yield* Effect.forkChild(permission.ask(req(["make b"])))
        yield* eventually(
          Effect.sync(() => (stored.size === 2 ? true : undefined)),
          "both questions stored"
        )
        for (const id of [...stored.keys()]) yield* questions.answer(id, { reply: "once" })
        return [yield* Fiber.join(first), yield* Fiber.join(second)]
      }).pipe(
        Effect.provide(Permission.layer.pipe(Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)))),
        Effect.provideService(PermissionSettings, { rules: fromConfig({ bash: "ask" }), nonInteractive: "deny", timeoutMs: 60_000 }),
        Effect.provideService(PermissionQuestions, questions),
        Effect.scoped
      )
    )
    expect(result).toEqual([undefined, undefined])
  })
})
