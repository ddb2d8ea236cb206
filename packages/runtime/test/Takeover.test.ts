// Item 8 (a turn whose claim was taken over stops and writes nothing more) and item 7 (a command
// left running by a dead reins is stopped by the next turn on the session, if it is still the
// same process), against the SQLite store and real processes.
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { isOpenTool, type Part, type ToolPart } from "@reins/domain"
import { SessionService } from "@reins/session"
import { RunClaims, SessionStore, Storage, type MessageWithParts, type SessionRun } from "@reins/storage"
import { eventually, startScriptedServer, waitFor, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { ProcessGroup } from "@reins/tool"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { aliveIn, tmp } from "./support.ts"

const model = { providerID: "local", modelID: "m" }
let server: ScriptedServer | undefined
const groups: Array<number> = []
afterEach(async () => {
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
  return { server, cwd, layer }
}

const toolParts = (messages: ReadonlyArray<MessageWithParts>) => messages.flatMap((m) => m.parts.filter((p): p is ToolPart => p.type === "tool"))

const runningCommand = (store: SessionStore["Service"], sessionID: string) =>
  eventually(
    Effect.map(store.messages(sessionID), (messages) =>
      toolParts(messages).find((p) => p.state.status === "running" && ProcessGroup.recordOf(p.state.metadata) !== undefined)
    ),
    "the command to run"
  )

/** Another process (another pid and host) takes the session over, judging the current claim stale. */
const takeOver = (sessionID: string) =>
  Effect.gen(function* () {
    const other: SessionRun = { sessionID, pid: 424242, host: "other-box", time: { started: Date.now(), heartbeat: Date.now() }, queued: 0 }
    expect(yield* (yield* RunClaims).claim(other, () => false)).toBeUndefined()
    return other
  })

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] })

describe("a session taken over by another process", () => {
  for (const [name, timing] of [
    ["the heartbeat notices the takeover and stops the turn (the command is killed)", "20,1000"],
    ["with no heartbeat before the end, the first write after the takeover is refused", "600000,6000000"]
  ] as const) {
    test(name, async () => {
      // The command finishes only once the test lets it (after the takeover): with a heartbeat it never
      // is, and only the kill ends it; without one it finishes and writes its marker.
      const { cwd, layer } = await setup(
        [bash("until [ -e go-on ]; do sleep 0.01; done; touch finished-marker"), { text: "written after the takeover" }],
        timing
      )
      const heartbeat = timing.startsWith("20,")
      const out = await Effect.runPromise(
        Effect.gen(function* () {
          const sessions = yield* SessionService
          const store = yield* SessionStore
          const session = yield* sessions.create({ directory: cwd })
          const fiber = yield* Effect.forkChild(sessions.prompt({ sessionID: session.id, text: "run it", model }))
          const part = yield* runningCommand(store, session.id)
          yield* takeOver(session.id)
          // everything stored at the moment of the takeover: the old turn may add nothing to it
          const atTakeover = yield* store.messages(session.id)
          if (!heartbeat) fs.writeFileSync(path.join(cwd, "go-on"), "")
          const exit = yield* Fiber.await(fiber)
          return { part, atTakeover, exit, after: yield* store.messages(session.id), holder: yield* (yield* RunClaims).get(session.id) }
        }).pipe(Effect.provide(layer), Effect.scoped)
      )
      expect(out.exit._tag).toBe("Failure")
      const error = out.exit._tag === "Failure" ? JSON.stringify(out.exit.cause) : ""
      expect(error).toContain("taken-over")
      expect(error).toContain(`was taken over by another reins process (pid 424242 on other-box)`)
      expect(error).toContain("this turn stopped without writing")
      expect(out.after).toEqual(out.atTakeover)
      // the new holder keeps the session; the model was asked once
      expect(out.holder?.pid).toBe(424242)
      expect(server!.requests).toHaveLength(1)
      if (heartbeat) {
        // stopped by the heartbeat: the command was killed before it finished (it never would have)
        const pgid = ProcessGroup.recordOf((out.part.state as { metadata?: unknown }).metadata)!.pgid
        groups.push(pgid)
        expect(await waitFor(() => aliveIn(pgid).length === 0, `the command's group ${pgid} to be gone`)).toBe(true)
        expect(fs.existsSync(path.join(cwd, "finished-marker"))).toBe(false)
      } else {
        // the command finished, but its result was not stored
        expect(fs.existsSync(path.join(cwd, "finished-marker"))).toBe(true)
        expect(toolParts(out.after).map((p) => p.state.status)).toEqual(["running"])
      }
    }, 20_000)
  }
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
    // the dead process's claim
    yield* (yield* RunClaims).claim({ sessionID, pid: 2_000_000_000, host: os.hostname(), time: { started: 1, heartbeat: 1 }, queued: 0 }, () => false)
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
