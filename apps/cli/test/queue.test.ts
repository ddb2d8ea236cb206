// T5 across processes: `reins run --session ID` while another reins process runs that session
// queues the message for the running turn, says so, and exits 0; the running turn shows it to the
// model at its next step inside a system reminder and answers it.
import { beforeAll, describe, expect, test } from "bun:test"
import { ensureBuilt, events, gate, projects, reins, waitFor } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("a message for a session that another process is running", () => {
  test("is queued by the second process (exit 0) and read by the first at its next step", async () => {
    // The first turn's tool waits until the test says the second process is done.
    const held = gate()
    const p = await setup([{ text: "hello" }, { toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "ANSWERED both" }])
    const first = events((await reins(["run", "--format", "json", "hi"], p)).stdout)
    const sessionID = first[0]!.session.id as string

    const running = reins(["run", "--session", sessionID, "--format", "json", "start the long job"], p)
    // the tool is running: the first process holds the session
    await waitFor(() => p.server.requests.length === 2, "the running turn's second request")
    const queued = await reins(["run", "--session", sessionID, "QUEUED-MARKER: also update the changelog"], p)
    const queuedJson = await reins(["run", "--session", sessionID, "--format", "json", "SECOND-QUEUED"], p)
    held.open(p)
    const done = await running

    expect(queued.code).toBe(0)
    expect(queued.stderr).toContain(`Session ${sessionID} is running in another reins process`)
    expect(queued.stderr).toContain("your message was queued")
    expect(queued.stdout).toBe("")
    expect(queuedJson.code).toBe(0)
    expect(events(queuedJson.stdout).find((e) => e.type === "message.queued")).toMatchObject({ sessionID })

    expect(done.code).toBe(0)
    expect(p.server.requests).toHaveLength(3)
    const next = JSON.stringify(p.server.requests[2]!.body.messages)
    expect(next).toContain("<system-reminder>")
    expect(next).toContain("QUEUED-MARKER: also update the changelog")
    expect(next).toContain("SECOND-QUEUED")
    expect(
      events(done.stdout)
        .filter((e) => e.type === "part.updated" && e.part.type === "text")
        .at(-1)?.part.text
    ).toBe("ANSWERED both")

    // stored as written, flagged queued; the session is free again afterwards
    const exported = JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)
    const texts = exported.messages.filter((m: any) => m.info.metadata?.queued).map((m: any) => m.parts[0].text)
    expect(texts).toEqual(["QUEUED-MARKER: also update the changelog", "SECOND-QUEUED"])
  })

  test("a session nobody runs is not queued: the message starts a turn", async () => {
    const p = await setup([{ text: "first" }, { text: "second answer" }])
    const first = events((await reins(["run", "--format", "json", "hi"], p)).stdout)
    const sessionID = first[0]!.session.id as string
    const again = await reins(["run", "--session", sessionID, "go on"], p)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("second answer")
    expect(again.stderr).not.toContain("queued")
  })
})
