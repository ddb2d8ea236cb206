// Leases (issue 27): a turn whose process was frozen (SIGSTOP) past its lease, while another process
// took the session over, writes nothing once it runs again (the fence); an abort asked from another
// process ends a turn running in this one. And item 7: a command left running by a dead reins is
// stopped by the next turn on the session, if it is still the same process. Against the SQLite store
// and real processes: the turn runs in test/fixtures/turn-process.ts, the test is the other process.
import { afterEach, describe, expect, test } from "bun:test"
import { Database as SqliteFile } from "bun:sqlite"
import { Effect, Layer } from "effect"
import { isOpenTool, type Part, type Session, type ToolPart } from "@reins/domain"
import { RunSettings, SessionRuns, SessionService } from "@reins/session"
import { RunClaims, SessionStore, Storage, type MessageWithParts } from "@reins/storage"
import { eventually, startScriptedServer, waitFor, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { ProcessGroup } from "@reins/tool"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { aliveIn, tmp } from "./support.ts"

const model = { providerID: "local", modelID: "m" }
const TURN_PROCESS = path.join(import.meta.dir, "fixtures", "turn-process.ts")
let server: ScriptedServer | undefined
const groups: Array<number> = []
const children: Array<ChildProcess> = []
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGCONT")
    child.kill("SIGKILL")
  }
  await server?.stop()
  server = undefined
  for (const pgid of groups.splice(0)) ProcessGroup.killGroup(pgid)
})

/** A runtime on a scripted server with the SQLite store; `timing` is REINS_TEST_RUN_TIMING. */
const setup = async (steps: ReadonlyArray<ScriptedStep>, timing: string) => {
  server = await startScriptedServer(steps)
  const cwd = tmp()
  const dataDir = tmp()
  const layer = makeRuntime({
    cwd,
    dataDir,
    env: { REINS_TEST_RUN_TIMING: timing },
    config: {
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } }
    } as RuntimeOptions["config"],
    store: Storage.layerSqlite(path.join(dataDir, "reins.db")),
    permission: { yolo: true }
  })
  return { server, cwd, dataDir, layer }
}

const toolParts = (messages: ReadonlyArray<MessageWithParts>) => messages.flatMap((m) => m.parts.filter((p): p is ToolPart => p.type === "tool"))

const runningCommand = (store: SessionStore["Service"], sessionID: string) =>
  eventually(
    Effect.map(store.messages(sessionID), (messages) =>
      toolParts(messages).find((p) => p.state.status === "running" && ProcessGroup.recordOf(p.state.metadata) !== undefined)
    ),
    "the command to run"
  )

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] })

/** This test process's view of the data dir: the store, and a SessionRuns of its own (another holder than the turn's process). */
const otherProcess = (dataDir: string) =>
  SessionRuns.layer.pipe(
    Layer.provideMerge(Storage.layerSqlite(path.join(dataDir, "reins.db"))),
    Layer.provide(Layer.succeed(RunSettings, { heartbeatMs: 50, ttlMs: 500 }))
  )

/** A turn on `sessionID` in a process of its own; its exit code and what it printed once it ends. */
const turnProcess = (dataDir: string, cwd: string, sessionID: string, timing: string) => {
  const child = spawn(process.execPath, [TURN_PROCESS, dataDir, cwd, server!.url, sessionID, timing, "run it"], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<{ code: number | null; out: string }>((resolve) => child.on("exit", (code) => resolve({ code, out })))
  return { child, exited }
}

/** A new session in the store, for a turn process to run. */
const newSession = (cwd: string) =>
  Effect.gen(function* () {
    const session: Session = { id: `ses_${Date.now().toString(36)}lease`, title: "New session", directory: cwd, time: { created: 1, updated: 1 } }
    yield* (yield* SessionStore).createSession(session)
    return session.id
  })

/** How many message and part rows a session has, counted in the database file itself. */
const rows = (dataDir: string, sessionID: string) => {
  const db = new SqliteFile(path.join(dataDir, "reins.db"), { readonly: true })
  try {
    const count = (table: string) => (db.query(`SELECT COUNT(*) AS n FROM ${table} WHERE session_id = ?`).get(sessionID) as { n: number }).n
    return { messages: count("message"), parts: count("part") }
  } finally {
    db.close()
  }
}

describe("a turn whose process was frozen past its lease", () => {
  test("another process takes the session over; resumed (SIGCONT), the frozen one writes nothing and says why", async () => {
    // The command ends only once the test lets it, after the takeover: its result is what the frozen turn would write.
    const { cwd, dataDir } = await setup([bash("until [ -e go-on ]; do sleep 0.01; done; touch finished-marker"), { text: "never asked" }], "50,500")
    const layer = otherProcess(dataDir)
    const sessionID = await Effect.runPromise(newSession(cwd).pipe(Effect.provide(layer)))
    const turn = turnProcess(dataDir, cwd, sessionID, "50,500")
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const claims = yield* RunClaims
        const part = yield* runningCommand(store, sessionID)
        const before = yield* claims.get(sessionID)
        turn.child.kill("SIGSTOP")
        // this process takes the session over once the frozen one's lease has expired in the database's time
        const taken = yield* eventually(
          Effect.map(
            claims.claim({ sessionID, holder: "other-box/424242/test", host: "other-box", pid: 424242, takesMessages: true, ttlMs: 600_000 }),
            (r) => r._tag === "claimed" && r.run
          ),
          "the frozen process's lease to expire"
        )
        const atTakeover = yield* store.messages(sessionID)
        const countedAtTakeover = rows(dataDir, sessionID)
        // the command (not frozen: it is not in the reins process's group) finishes; the frozen turn would store its result
        fs.writeFileSync(path.join(cwd, "go-on"), "")
        yield* Effect.promise(() => waitFor(() => fs.existsSync(path.join(cwd, "finished-marker")), "the command to finish"))
        turn.child.kill("SIGCONT")
        const exit = yield* Effect.promise(() => turn.exited)
        return {
          part,
          before,
          taken,
          atTakeover,
          countedAtTakeover,
          exit,
          after: yield* store.messages(sessionID),
          counted: rows(dataDir, sessionID),
          holder: yield* claims.get(sessionID)
        }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.before).toMatchObject({ pid: turn.child.pid, epoch: 1 })
    expect(out.taken.epoch).toBe(2)
    expect(out.exit.code).toBe(1)
    expect(out.exit.out).toContain(
      `Session ${sessionID} was taken over by another reins process (pid 424242 on other-box) while this one (pid ${turn.child.pid}) was stopped or unresponsive; this turn stopped without writing.`
    )
    // not one row more, not one row changed
    expect(out.counted).toEqual(out.countedAtTakeover)
    expect(out.after).toEqual(out.atTakeover)
    expect(toolParts(out.after).map((p) => p.state.status)).toEqual(["running"])
    // the new holder keeps the session; the model was asked once
    expect(out.holder).toMatchObject({ pid: 424242, epoch: 2 })
    expect(server!.requests).toHaveLength(1)
    groups.push(ProcessGroup.recordOf((out.part.state as { metadata?: unknown }).metadata)!.pgid)
  }, 120_000)
})

describe("an abort asked from another process", () => {
  test("ends the turn running in the first (its command killed, the turn recorded as interrupted) and frees the session", async () => {
    const { cwd, dataDir } = await setup([bash("until [ -e go-on ]; do sleep 0.01; done; touch finished-marker"), { text: "never asked" }], "50,500")
    const layer = otherProcess(dataDir)
    const sessionID = await Effect.runPromise(newSession(cwd).pipe(Effect.provide(layer)))
    // a heartbeat far longer than the wait: the turn sees the abort by its cheap check of its lease, not by a renewal
    const turn = turnProcess(dataDir, cwd, sessionID, "600000,6000000")
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const runs = yield* SessionRuns
        const part = yield* runningCommand(store, sessionID)
        const aborted = yield* runs.abort(sessionID)
        const exit = yield* Effect.promise(() => turn.exited)
        return {
          part,
          aborted,
          exit,
          after: yield* store.messages(sessionID),
          lease: yield* (yield* RunClaims).get(sessionID),
          again: yield* runs.abort(sessionID)
        }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.aborted).toBe("elsewhere")
    expect(out.exit.code).toBe(130)
    const pgid = ProcessGroup.recordOf((out.part.state as { metadata?: unknown }).metadata)!.pgid
    groups.push(pgid)
    expect(await waitFor(() => aliveIn(pgid).length === 0, `the command's group ${pgid} to be gone`)).toBe(true)
    expect(fs.existsSync(path.join(cwd, "finished-marker"))).toBe(false)
    // recorded as a local Ctrl+C is: the tool part interrupted, the step's message with the interrupted error
    expect(toolParts(out.after)[0]!.state).toMatchObject({ status: "error", interrupted: true })
    const assistant = out.after.find((m) => m.info.role === "assistant")!.info
    expect(assistant).toMatchObject({ error: { reason: "interrupted" } })
    expect(out.lease).toBeUndefined()
    expect(out.again).toBe("idle")
    expect(server!.requests).toHaveLength(1)
  }, 120_000)
})

/** A detached group (as bash spawns it) whose leader and child sleep; its record as bash stores it. */
const detachedGroup = async () => {
  const sleep = `sleep 3${Math.floor(Math.random() * 100000)}.5`
  const child = spawn("/bin/sh", ["-c", `${sleep} & ${sleep}`], { detached: true, stdio: "ignore" })
  child.unref()
  groups.push(child.pid!)
  const record = await Effect.runPromise(ProcessGroup.identify(child.pid!))
  return { pgid: child.pid!, record: record!, sleep }
}

/** A session whose last turn died with a bash part still running, recording `record`. */
const orphanedTurn = (sessionID: string, record: ProcessGroup.GroupRecord) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const user = { id: "msg_000000000001", sessionID, role: "user" as const, time: { created: 1 } }
    const assistant = {
      id: "msg_000000000002",
      sessionID,
      role: "assistant" as const,
      parentID: user.id,
      model,
      time: { created: 2 },
      usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      cost: 0
    }
    yield* store.putMessage(user)
    yield* store.putPart({ id: "prt_000000000001", sessionID, messageID: user.id, type: "text", text: "start it" })
    yield* store.putMessage(assistant)
    const part: Part = {
      id: "prt_000000000002",
      sessionID,
      messageID: assistant.id,
      type: "tool",
      callID: "call_1",
      tool: "bash",
      state: { status: "running", input: { command: "sleep" }, metadata: { tail: "", outputBytes: 0, process: record }, time: { start: 3 } }
    }
    yield* store.putPart(part)
    // the dead process's lease, lapsed (it renews no more)
    yield* (yield* RunClaims).claim({ sessionID, holder: "box/2000000000/dead", host: "box", pid: 2_000_000_000, takesMessages: true, ttlMs: 0 })
  })

describe("a command left running by a reins that died", () => {
  for (const [name, same] of [
    ["the next turn kills its group and marks the part interrupted", true],
    ["a recorded pid now used by another process (another start time) is not killed", false]
  ] as const) {
    test(name, async () => {
      const { cwd, layer } = await setup([{ text: "next answer" }], "20,1000")
      const group = await detachedGroup()
      const record = same ? group.record : { ...group.record, start: group.record.start - 7 }
      const out = await Effect.runPromise(
        Effect.gen(function* () {
          const sessions = yield* SessionService
          const store = yield* SessionStore
          const session = yield* sessions.create({ directory: cwd })
          yield* orphanedTurn(session.id, record)
          const turn = yield* sessions.prompt({ sessionID: session.id, text: "go on", model })
          return { turn, parts: toolParts(yield* store.messages(session.id)) }
        }).pipe(Effect.provide(layer), Effect.scoped)
      )
      expect(out.turn.text).toBe("next answer")
      expect(out.parts.some(isOpenTool)).toBe(false)
      expect(out.parts[0]!.state).toMatchObject({ status: "error", interrupted: true })
      const error = (out.parts[0]!.state as { error: string }).error
      expect(error.startsWith("The tool call was interrupted before it finished.")).toBe(true)
      expect(error.includes("has now been killed")).toBe(same)
      if (same) expect(await waitFor(() => aliveIn(group.pgid).length === 0, `the group ${group.pgid} to be gone`)).toBe(true)
      else {
        // wall time: a group that was not to be killed is still there a while later (it is a wait for nothing)
        await Bun.sleep(100)
        expect(aliveIn(group.pgid)).not.toEqual([])
      }
    })
  }
})
