import { describe, expect, test } from "bun:test"
import { Effect, Layer, type Scope } from "effect"
import { Bus, Ids, type Event } from "@reins/domain"
import { Permission, PermissionSettings, type Prompter } from "../src/Permission.ts"
import { defaultRules, fromConfig } from "../src/Rules.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Permission | Bus | Scope.Scope>, settings: PermissionSettings) =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(Permission.layer.pipe(Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)))),
      Effect.provideService(PermissionSettings, settings),
      Effect.scoped
    )
  )

const req = (patterns: Array<string>, always: Array<string> = []) => ({ sessionID: "ses_1", permission: "bash", patterns, always })

describe("Permission", () => {
  test("deny rule fails with a message for the model", async () => {
    const rules = [...defaultRules, ...fromConfig({ bash: { "rm *": "deny" } })]
    const result = await run(Effect.flip(Effect.gen(function* () { return yield* (yield* Permission).ask(req(["rm -rf x"])) })), { rules, nonInteractive: "allow" })
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
    const allowed = await run(Effect.gen(function* () { return yield* (yield* Permission).ask(req(["ls"])) }), { rules, nonInteractive: "allow" })
    expect(allowed).toBeUndefined()
  })
  test("always grants only the approved pattern for the session", async () => {
    const asked: Array<string> = []
    const prompter: Prompter = {
      ask: (r) => Effect.sync(() => {
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
