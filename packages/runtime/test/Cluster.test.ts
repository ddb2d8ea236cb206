// reins runners on one PostgreSQL database (issue 28): a prompt sent through the cluster runs its turn on the runner
// that owns the session; that runner killed -9 mid-command, the next owner resumes the turn by itself.
import { afterAll, describe, expect, test } from "bun:test"
import { ClusterTesting, clientOnPostgres, SessionEntity } from "@reins/cluster"
import { EventLog, RunClaims, SessionStore, Storage } from "@reins/storage"
import { eventually, startScriptedServer } from "@reins/testkit"
import { Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const pgUrl = process.env.REINS_TEST_PG_URL || undefined
const timing = ClusterTesting.testTiming
const cleanups: Array<() => unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

interface RunnerLine {
  readonly runner: string
  readonly ready?: boolean
  readonly pid?: number
}

const startRunner = (database: string, cwd: string, baseURL: string) => {
  const runner = `127.0.0.1:${ClusterTesting.freePort()}`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-runner-"))
  const proc = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "runner-process.ts"), database, runner, cwd, dataDir, baseURL], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe"
  })
  cleanups.push(() => proc.kill(9))
  return { runner, proc, ...ClusterTesting.jsonLines<RunnerLine>(proc, `runner ${runner}`) }
}

describe.skipIf(pgUrl === undefined)("reins runners on PostgreSQL", () => {
  test("a prompt through the cluster runs on the session's owner; killed -9 mid-command, the other runner resumes the turn: the done step not run again, the command closed as interrupted", async () => {
    const db = await ClusterTesting.freshDatabase(pgUrl!)
    cleanups.push(db.drop)
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "reins-cluster-project-"))
    const marker = path.join(cwd, "marker")
    const gateFile = path.join(cwd, "gate")
    cleanups.push(() => fs.writeFileSync(gateFile, ""))
    const server = await startScriptedServer([
      { toolCalls: [{ name: "bash", arguments: { command: `echo STEP-ONE >> ${marker}` } }] },
      // a command that outlasts its runner: only the next owner's repair stops it (or, if the test fails first, its gate)
      { toolCalls: [{ name: "bash", arguments: { command: `while [ ! -e ${gateFile} ]; do sleep 0.1; done` } }] },
      { text: "resumed on the other runner" }
    ])
    cleanups.push(() => server.stop())

    const a = startRunner(db.url, cwd, server.url)
    const b = startRunner(db.url, cwd, server.url)
    const [readyA, readyB] = await Promise.all([a.said((l) => l.ready === true), b.said((l) => l.ready === true)])
    await ClusterTesting.settled(db.url, [a.runner, b.runner], 300, timing.lockRefreshMs)

    const store = Storage.layerPostgres(db.url)
    const client = clientOnPostgres(db.url, timing, { secret: ClusterTesting.secret })
    const value = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sessions = yield* SessionStore
          const claims = yield* RunClaims
          const sessionID = `ses_${Date.now().toString(16)}cluster`
          const now = Date.now()
          yield* sessions.createSession({ id: sessionID, title: "New session", directory: cwd, time: { created: now, updated: now } })
          const promptID = `prm_${now.toString(16)}`
          const prompt = yield* Effect.forkChild(
            (yield* SessionEntity.client)(sessionID).Prompt({
              sessionID,
              promptID,
              text: "run the two commands",
              model: { providerID: "local", modelID: "m" }
            })
          )
          // the second command runs on the owner: kill that runner outright
          const owner = yield* eventually(
            Effect.gen(function* () {
              const parts = (yield* sessions.messages(sessionID)).flatMap((m) => m.parts).filter((p) => p.type === "tool")
              const second = parts[1]
              return second?.type === "tool" && second.state.status === "running" ? yield* claims.get(sessionID) : undefined
            }),
            "the owner's second command to run"
          )
          const victim = owner.pid === readyA.pid ? a : b
          const survivor = victim === a ? b : a
          victim.proc.kill(9)
          const killed = performance.now()
          const reply = yield* Fiber.join(prompt)
          const moved = performance.now() - killed
          const messages = yield* sessions.messages(sessionID)
          // the turn's end is on the event log for the clients of any node (appended just after the reply at the latest)
          const log = yield* EventLog
          const finished = yield* eventually(
            Effect.map(log.read({ after: 0, sessionID }), (events) => events.filter((e) => e.event.type === "turn.finished").length || undefined),
            "turn.finished on the event log"
          )
          return { reply, moved, messages, promptID, finished, survivor: survivor.runner, pids: [readyA.pid, readyB.pid] }
        }).pipe(Effect.provide(Layer.merge(store, client)))
      )
    )
    console.log(`a turn resumed on the other runner ${(value.moved / 1000).toFixed(1)} s after its runner was killed`)
    expect(value.reply).toMatchObject({ outcome: "finished", runner: value.survivor, result: { text: "resumed on the other runner" } })
    expect(value.reply.error).toBeUndefined()
    expect(value.finished).toBe(1)
    // the first command ran once, on the runner that died; three model calls in all
    expect(fs.readFileSync(marker, "utf8")).toBe("STEP-ONE\n")
    expect(server.requests).toHaveLength(3)
    const tools = value.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool")
    expect(tools.map((p) => (p.type === "tool" ? p.state.status : ""))).toEqual(["completed", "error"])
    expect(value.messages.flatMap((m) => (m.info.role === "user" ? [m.info.metadata?.request] : []))).toEqual([value.promptID])
    const last = value.messages.at(-1)!
    expect(last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")).toBe("resumed on the other runner")
  }, 90_000)
})
