// Stopping a turn's stream stops its commands for good: when the consumer is back from the
// interrupt, the bash tool's shell has been collected and no process of its group is alive, also
// when the stream runs inside the caller's own long-lived scope (issue 14, item 1: the same
// guarantees as Ctrl+C).
import { describe, expect, test } from "bun:test"
import { Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as fs from "node:fs"
import { isOpenTool, type SessionEvent, type ToolPart } from "@reins/domain"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { ProcessGroup } from "@reins/tool"
import { aliveIn, scriptedRuntimes } from "./support.ts"

const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }

const toolOf = (e: SessionEvent): ToolPart | undefined => (e.type === "part.updated" && e.part.type === "tool" ? e.part : undefined)
const groupOf = (e: SessionEvent) => {
  const part = toolOf(e)
  return part?.state.status === "running" ? ProcessGroup.recordOf(part.state.metadata) : undefined
}

/** The state letter of a process (Z: dead, not yet collected), or undefined once it is gone from the table. */
const stateOf = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
  } catch {
    return undefined
  }
}

/** What the process table holds of the group right when the consumer is back. */
const snapshot = (pgid: number) => ({ shell: stateOf(pgid), alive: aliveIn(pgid) })

const commands = [
  ["one command", (n: string) => `sleep ${n}`],
  ["a command with a background child", (n: string) => `sleep ${n} & sleep ${n}`],
  ["a command whose child ignores SIGTERM and SIGHUP", (n: string) => `trap '' TERM HUP; sleep ${n} & wait`]
] as const

describe("interrupting a turn's stream kills its commands before the consumer is back", () => {
  for (const [name, command] of commands) {
    test(`Stream.take at the first running command: ${name}`, async () => {
      const n = `3${Math.floor(Math.random() * 90000) + 10000}.5`
      const { cwd, layer } = await runtime([{ toolCalls: [{ name: "bash", arguments: { command: command(n) } }] }, { text: "picked up again" }])
      const out = await Effect.runPromise(
        Effect.gen(function* () {
          const sessions = yield* SessionService
          const session = yield* sessions.create({ directory: cwd })
          const taken = yield* sessions.stream({ sessionID: session.id, text: "sleep", model }).pipe(
            Stream.filter((e) => groupOf(e) !== undefined),
            Stream.take(1),
            Stream.runCollect
          )
          const group = groupOf(taken[0]!)!
          // at once: nothing may have been given time to die after the stream ended
          const left = snapshot(group.pgid)
          const parts = (yield* (yield* SessionStore).messages(session.id)).flatMap((m) => m.parts)
          const next = yield* sessions.prompt({ sessionID: session.id, text: "again", model })
          return { left, parts, next }
        }).pipe(Effect.provide(layer), Effect.scoped)
      )
      // the shell was collected (not left a zombie or still dying) and nothing of its group runs
      expect(out.left).toEqual({ shell: undefined, alive: [] })
      expect(out.parts.filter(isOpenTool)).toEqual([])
      expect(out.next.text).toBe("picked up again")
    })
  }

  test("a consumer fiber interrupted inside the caller's long-lived scope, as an interactive client runs it", async () => {
    const n = `3${Math.floor(Math.random() * 90000) + 10000}.5`
    const { cwd, layer } = await runtime([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} && echo too-late > late.txt` } }] }, { text: "x" }])
    // the app's scope: the runtime is built in it and stays open across turns
    const app = Effect.runSync(Scope.make())
    const services = await Effect.runPromise(Layer.build(layer).pipe(Scope.provide(app)))
    const program = Effect.gen(function* () {
      const sessions = yield* SessionService
      const session = yield* sessions.create({ directory: cwd })
      const running = yield* Deferred.make<void>()
      let group: ProcessGroup.GroupRecord | undefined
      const consumer = yield* sessions.stream({ sessionID: session.id, text: "sleep", model }).pipe(
        Stream.runForEach((e) => Effect.suspend(() => ((group ??= groupOf(e)) ? Deferred.succeed(running, undefined) : Effect.void))),
        Effect.forkIn(app)
      )
      yield* Deferred.await(running)
      yield* Fiber.interrupt(consumer)
      const left = snapshot(group!.pgid)
      const parts = (yield* (yield* SessionStore).messages(session.id)).flatMap((m) => m.parts)
      return { left, parts }
    })
    const out = await Effect.runPromise(Effect.provideContext(program, services).pipe(Scope.provide(app)))
    await Effect.runPromise(Scope.close(app, Exit.void))
    expect(out.left).toEqual({ shell: undefined, alive: [] })
    expect(out.parts.filter(isOpenTool)).toEqual([])
    expect(fs.existsSync(`${cwd}/late.txt`)).toBe(false)
  })
})
