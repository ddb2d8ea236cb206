// The todo tools through the built CLI: a plan written in one run is read back by the next process on the session,
// listed by `reins sessions show`, and drawn in the interactive session as a checklist.
import { beforeAll, expect, test } from "bun:test"
import { ensureBuilt, events, lastToolResult, projects, reins } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const todos = [
  { id: "1", content: "find the bug", status: "completed", priority: "high" },
  { id: "2", content: "fix the parser", status: "in_progress", priority: "high" },
  { id: "3", content: "update the docs", status: "pending", priority: "low" }
]

test("a plan written in one run is read back by the next process, and shown by sessions show", async () => {
  const p = await setup([
    { toolCalls: [{ name: "todowrite", arguments: { todos } }] },
    { text: "planned" },
    { toolCalls: [{ name: "todoread", arguments: {} }] },
    { text: "read it" }
  ])
  const first = await reins(["run", "--format", "json", "plan the fix"], p)
  expect(first.code).toBe(0)
  const sessionID = events(first.stdout)[0]!.session.id as string
  const again = await reins(["run", "--session", sessionID, "what is left?"], p)
  expect(again.code).toBe(0)
  expect(lastToolResult(p.server.requests)).toContain("[~] fix the parser (high)  {id: 2}\n[ ] update the docs  {id: 3}\n\n1 of 3 done, 2 open.")
  const shown = await reins(["sessions", "show", sessionID], p)
  expect(shown.stdout).toMatch(/todowrite .*1\/3 done/)
  expect(shown.stdout).toMatch(/todoread .*1\/3 done/)
})

test("the interactive session draws the plan as a checklist under the call", async () => {
  const p = await setup([{ toolCalls: [{ name: "todowrite", arguments: { todos } }] }, { text: "The plan is set." }])
  await using pty = await openTui(p)
  await send(pty, "plan the fix")
  await settled(pty, "The plan is set.")
  const screen = pty.screen()
  expect(screen).toContain("[x] find the bug")
  expect(screen).toContain("[~] fix the parser")
  expect(screen).toContain("[ ] update the docs")
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
})
