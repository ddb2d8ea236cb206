// The interactive session's turns under a real pty: Ctrl+C stops a running command (no orphan, the
// session resumable, the UI usable), a message typed mid-turn is queued into it, a resize re-flows.
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import { ensureBuilt, events, gate, projects, reins, waitFor } from "./support.ts"
import { isAlive } from "./pty/index.ts"
import { descendantsRunning, expectScreen, normalise, openTui, procStat, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

describe("reins (interactive): turns", () => {
  test("Ctrl+C interrupts a running sleep: its process is gone, the UI takes the next prompt, and reins -c resumes the session", async () => {
    const p = await project([
      { toolCalls: [{ name: "bash", arguments: { command: "sleep 37 && echo too-late > late.txt" } }] },
      { text: "Stopped; what next?" },
      { text: "Resumed fine." }
    ])
    {
      await using pty = await openTui(p, ["--yolo"])
      await send(pty, "run the slow thing")
      await pty.waitFor("sleep 37")
      // the command is running under reins
      let sleeps: Array<number> = []
      await pty.waitUntil(() => (sleeps = descendantsRunning(pty.pid, "sleep 37")).length > 0, "the sleep process")
      await pty.press("ctrl-c")
      await settled(pty, "interrupted")
      // the turn ends once its command's process group is killed: nothing is left behind (the kill lands at once,
      // the kernel may take a moment to finish the process off under load)
      await pty.waitUntil(() => sleeps.every((pid) => !isAlive(pid)), `the sleep killed (still there: ${sleeps.filter(isAlive).map(procStat).join("; ")})`)
      expect(descendantsRunning(pty.pid, "sleep 37")).toEqual([])
      expectScreen("interrupted", normalise(pty.screen(), p))
      // still usable: the next prompt is a new turn of the same session
      await send(pty, "what happened?")
      await settled(pty, "Stopped; what next?")
      await send(pty, "/exit")
      expect(await pty.waitExit()).toBe(0)
    }
    // the model saw the interrupted call's result
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toMatch(/interrupt/i)
    await using again = await openTui(p, ["-c"])
    // the resumed transcript shows the history
    await again.waitFor("run the slow thing")
    await again.waitFor("Stopped; what next?")
    await send(again, "and now?")
    await again.waitFor("Resumed fine.")
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("run the slow thing")
    await send(again, "/exit")
    expect(await again.waitExit()).toBe(0)
  })

  test("a message typed while the turn runs is queued into it and answered in the same turn", async () => {
    // the command runs until the message is queued
    const held = gate()
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "Noted the README too." }])
    fs.writeFileSync(path.join(p.cwd, "README.md"), "README-CONTENT-MARKER\n")
    await using pty = await openTui(p, ["--yolo"])
    await send(pty, "start working")
    await pty.waitFor("while [ ! -e go ]")
    await pty.waitFor("Enter queues your message")
    await send(pty, "also check the @README.md")
    await pty.waitFor("also check the @README.md (queued)")
    held.open(p)
    await settled(pty, "Noted the README too.")
    // one turn, two model calls: the second carried the queued message, with the file it mentions attached
    expect(p.server.requests.length).toBe(2)
    const second = JSON.stringify(p.server.requests[1]!.body.messages)
    expect(second).toContain("also check the @README.md")
    expect(second).toContain("README-CONTENT-MARKER")
    expect(pty.screen()).toContain("also check the @README.md")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("resizing the terminal prints the transcript again at the new width", async () => {
    const long = "This answer is long enough to wrap differently at sixty columns than it does at a hundred columns wide."
    const p = await project([{ text: long }])
    await using pty = await openTui(p)
    await send(pty, "say something long")
    await settled(pty, "at a hundred")
    await pty.resize(60, 30)
    // the answer re-flowed: no line wider than the terminal, all of its words still there
    await pty.waitUntil((s) => s.split("\n").every((l) => l.length <= 60) && s.includes("say something long"), "the transcript at 60 columns")
    const words = pty.screen().replace(/\s+/g, " ")
    expect(words).toContain(long.slice(0, 40))
    expect(words).toContain("hundred columns wide.")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("Ctrl+O prints the transcript again with tool results whole, and again collapsed", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 30" } }] }, { text: "Counted." }])
    await using pty = await openTui(p, ["--yolo"], { cols: 80, rows: 50 })
    await send(pty, "count")
    await settled(pty, "Counted.")
    const lines = (s: string) => s.split("\n").map((l) => l.trim())
    // collapsed: the last lines only
    expect(lines(pty.screen())).not.toContain("5")
    await pty.press("ctrl-o")
    await pty.waitUntil((s) => lines(s).includes("5") && lines(s).includes("17"), "every line of the output")
    await pty.press("ctrl-o")
    await pty.waitUntil((s) => !lines(s).includes("5") && s.includes("Counted."), "the output collapsed again")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("a message to a session another reins process is running is queued for that process's turn", async () => {
    // the other process's command runs until the message is queued
    const held = gate()
    const p = await project([
      { text: "started" },
      { toolCalls: [{ name: "bash", arguments: { command: held.command } }] },
      { text: "The other process saw it." }
    ])
    const first = await reins(["run", "--format", "json", "begin"], p)
    const sessionID = events(first.stdout).find((e) => e.type === "session.created")!.session.id as string
    // another process runs a long turn of the session
    const other = reins(["run", "--yolo", "--session", sessionID, "keep going"], p)
    await using pty = await openTui(p, ["--session", sessionID])
    await pty.waitFor("started")
    await waitFor(() => p.server.requests.length === 2, "the other process's turn")
    await send(pty, "a note from the terminal")
    await pty.waitFor("your message was queued")
    held.open(p)
    const done = await other
    expect(done.code).toBe(0)
    expect(done.stdout).toContain("The other process saw it.")
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("a note from the terminal")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })
})
