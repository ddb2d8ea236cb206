// `reins compact`: a manual compaction of an idle session through the real CLI and the scripted server.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import type { ScriptedStep } from "@reins/testkit"
import { ensureBuilt, events, projects, reins, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** Three turns: the first runs a tool whose output is pruned by the compaction, then the summary call. */
const threeTurns: ReadonlyArray<ScriptedStep> = [
  { toolCalls: [{ name: "bash", arguments: { command: "echo OLD-OUTPUT-MARKER" } }] },
  { text: "ok one" },
  { text: "ok two" },
  { text: "ok three" }
]
const SUMMARY = "## Objective\nSUMMARY-MARKER: finish the task"

/** Runs the three turns on one session; returns its id. */
const runThreeTurns = async (p: Project) => {
  const first = await reins(["run", "--yolo", "--format", "json", "TASK-MARKER: build it"], p)
  expect(first.code).toBe(0)
  const sessionID = events(first.stdout)[0]!.session.id as string
  for (const text of ["second", "third"]) expect((await reins(["run", "--session", sessionID, text], p)).code).toBe(0)
  return sessionID
}

const requestText = (p: { server: { requests: Array<{ body: any }> } }, index: number) => JSON.stringify(p.server.requests[index]!.body.messages)

describe("reins compact", () => {
  test("stores a summary of the older turns: sessions show marks it, the next run sends it instead of the head", async () => {
    const p = await setup([...threeTurns, { text: SUMMARY }, { text: "FINAL-ANSWER" }])
    const sessionID = await runThreeTurns(p)

    const r = await reins(["compact", "--session", sessionID], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(new RegExp(`^compacting session ${sessionID} \\(~[\\d,]+ tokens\\)…\\n$`))
    const [line, blank, ...summary] = r.stdout.trimEnd().split("\n")
    expect(line).toMatch(new RegExp(`^compacted ${sessionID}: [\\d,]+ → [\\d,]+ tokens; 2 messages summarised, 1 tool output pruned$`))
    expect(blank).toBe("")
    expect(summary.join("\n")).toBe(SUMMARY)

    // the summary call: no tools, the head's transcript (the pinned task is context, not summarised away)
    const call = p.server.requests[4]!.body
    expect(call.tools ?? []).toEqual([])
    expect(JSON.stringify(call.messages)).toContain("ok one")

    const shown = await reins(["sessions", "show", sessionID], p)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(
      "── compacted (manual): 2 messages summarised, 1 tool output pruned ──\nsummary:\n  ## Objective\n  SUMMARY-MARKER: finish the task"
    )
    expect(shown.stdout).toMatch(/^✓ bash echo OLD-OUTPUT-MARKER · exit 0 · (?:\d+ms|\d+\.\ds|\d+m \d\ds) \(pruned for the model\)$/m)
    // the summary is not shown as an ordinary answer
    expect(shown.stdout.match(/── assistant /g)).toHaveLength(4)

    const next = await reins(["run", "--session", sessionID, "fourth"], p)
    expect(next.code).toBe(0)
    expect(next.stdout.trim()).toBe("FINAL-ANSWER")
    const after = requestText(p, 5)
    expect(after).toContain("SUMMARY-MARKER") // the summary stands for the head
    expect(after).toContain("TASK-MARKER: build it") // the first request is pinned
    expect(after).toContain("third") // the tail, verbatim
    expect(after).not.toContain("ok one") // the summarised head
    expect(after).not.toContain("OLD-OUTPUT-MARKER") // the pruned, summarised output
    expect(requestText(p, 3)).toContain("OLD-OUTPUT-MARKER") // it was there before
  })

  test("--format json: one object with the ids, the token counts and the summary; without --session the latest session", async () => {
    const p = await setup([...threeTurns, { text: SUMMARY }])
    const sessionID = await runThreeTurns(p)
    const r = await reins(["compact", "--format", "json"], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const lines = r.stdout.trim().split("\n")
    expect(lines).toHaveLength(1)
    const result = JSON.parse(lines[0]!)
    expect(Object.keys(result).sort()).toEqual(["pruned", "sessionID", "summarised", "summary", "summaryMessageID", "tokensAfter", "tokensBefore"])
    expect(result.sessionID).toBe(sessionID)
    expect(result.summary).toBe(SUMMARY)
    expect(result.pruned).toHaveLength(1)
    expect(result.summarised).toHaveLength(2)
    expect(result.tokensBefore).toBeGreaterThan(0)
    expect(result.tokensAfter).toBeGreaterThan(0)

    // the ids are the stored ones: the summary message, the pruned tool part, the summarised messages
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    const stored = exported.messages.find((m: any) => m.info.id === result.summaryMessageID)
    expect(stored.info.summary).toMatchObject({ auto: false, summarised: result.summarised })
    expect(stored.parts[0].text).toBe(SUMMARY)
    const part = exported.messages.flatMap((m: any) => m.parts).find((x: any) => x.id === result.pruned[0])
    expect(part.tool).toBe("bash")
    expect(part.state.time.compacted).toBeGreaterThan(0)
    expect(part.state.output).toContain("OLD-OUTPUT-MARKER") // the store keeps the output
  })

  test("a session with nothing to summarise: exit 1 with the reason, no model call, nothing stored", async () => {
    const p = await setup([{ text: "ok one" }])
    const first = await reins(["run", "--format", "json", "hello"], p)
    const sessionID = events(first.stdout)[0]!.session.id as string
    const r = await reins(["compact", "-s", sessionID], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("reins: Nothing to summarise")
    expect(r.stdout).toBe("")
    expect(p.server.requests).toHaveLength(1)
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    expect(exported.messages.some((m: any) => m.info.summary !== undefined)).toBe(false)
  })

  test("an empty summary from the model: exit 1, the session is left as it was", async () => {
    const p = await setup([...threeTurns, { text: "" }])
    const sessionID = await runThreeTurns(p)
    const r = await reins(["compact", "--session", sessionID], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("reins: The model returned an empty summary")
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    expect(exported.messages.some((m: any) => m.info.summary !== undefined)).toBe(false)
  })

  test("a provider error during the summary call: exit 1 with the provider's message", async () => {
    const p = await setup([...threeTurns, { error: { status: 401, message: "bad key for the summary" } }], { retry: { attempts: 1 } })
    const sessionID = await runThreeTurns(p)
    const r = await reins(["compact", "--session", sessionID], p)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("bad key for the summary")
  })

  test("unknown session, no session in the directory, a missing template: usage errors (exit 2)", async () => {
    const p = await setup([])
    const unknown = await reins(["compact", "--session", "ses_missing"], p)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe("reins: No session ses_missing: see reins sessions list\n")

    const none = await reins(["compact"], p)
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("reins run")

    const config = JSON.parse(fs.readFileSync(p.configFile, "utf8"))
    fs.writeFileSync(p.configFile, JSON.stringify({ ...config, compaction: { template: "missing-template.md" } }))
    const template = await reins(["compact"], p)
    expect(template.code).toBe(2)
    expect(template.stderr).toContain("missing-template.md")
    expect(p.server.requests).toHaveLength(0)
  })
})
