// The `task` tool's port reaches the sub-agent runner of the turn that calls it: provided per turn, none outside one.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { emptyUsage } from "@reins/domain"
import { SubAgents, type SubAgentRequest, type ToolContext } from "@reins/tool"
import { TurnSubAgents, layerSubAgents } from "../src/agent/SubAgentRunner.ts"

const request: SubAgentRequest = { description: "look", prompt: "find it", agent: "explore" }
const ctx: ToolContext = { sessionID: "ses_parent", messageID: "msg_1", callID: "c1", cwd: "/" }

const callTask = (turn: (run: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown, unknown>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const port = yield* SubAgents
      return yield* Effect.result(turn(port.run(request, ctx)))
    }).pipe(Effect.provide(layerSubAgents))
  )

describe("sub-agents per turn", () => {
  test("outside a turn the port fails with a message saying what to do", async () => {
    const result = await callTask((run) => run)
    expect(result._tag).toBe("Failure")
    expect(result._tag === "Failure" && String((result.failure as Error).message)).toContain("only inside a turn")
  })

  test("inside a turn the runner provided to it runs the call; two turns can have different runners", async () => {
    const runner = (name: string) => ({
      run: (r: SubAgentRequest, c: ToolContext) =>
        Effect.succeed({ sessionID: `ses_child_of_${c.sessionID}`, agent: r.agent, text: `${name}: ${r.prompt}`, steps: 1, usage: emptyUsage, cost: 0 })
    })
    const first = await callTask((run) => Effect.provideService(run, TurnSubAgents, runner("first")))
    const second = await callTask((run) => Effect.provideService(run, TurnSubAgents, runner("second")))
    expect(first._tag === "Success" && first.success).toMatchObject({ sessionID: "ses_child_of_ses_parent", text: "first: find it" })
    expect(second._tag === "Success" && second.success).toMatchObject({ text: "second: find it" })
  })

  test("the port lists the sub-agents of the catalogue, not the primary ones", async () => {
    const agents = await Effect.runPromise(Effect.map(SubAgents, (port) => port.agents).pipe(Effect.provide(layerSubAgents)))
    expect(agents.map((a) => a.name)).toContain("explore")
    expect(agents.map((a) => a.name)).not.toContain("build")
  })
})
