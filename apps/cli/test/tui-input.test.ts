// The pure parts of the interactive session: prompt editing, history, slash completion, export target, the permission bridge.
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Fiber } from "effect"
import * as E from "../src/tui/Editor.ts"
import { loadHistory, remember, saveHistory, startCursor, step } from "../src/tui/History.ts"
import { complete, matches, parseSlash } from "../src/tui/Slash.ts"
import { exportTarget } from "../src/tui/Export.ts"
import { makePermissionBridge } from "../src/tui/Bridge.ts"
import { osc52 } from "../src/tui/Clipboard.ts"

describe("prompt editing", () => {
  test("Enter sends; a trailing backslash becomes a newline instead", () => {
    expect(E.enter(E.withText("hello"))).toEqual({ send: "hello" })
    expect(E.enter(E.withText("first\\"))).toEqual({ edit: { text: "first\n", cursor: 6 } })
    // a backslash before the cursor's end is text
    expect(E.enter({ text: "a\\b", cursor: 2 })).toEqual({ send: "a\\b" })
  })

  test("editing keys work on the cursor's line", () => {
    let s = E.withText("one\ntwo words")
    s = E.killWord(s)
    expect(s.text).toBe("one\ntwo ")
    s = E.home(s)
    expect(s.cursor).toBe(4)
    s = E.vertical(s, -1)
    expect(s.cursor).toBe(0)
    expect(E.onFirstLine(s)).toBe(true)
    s = E.end(s)
    expect(s.cursor).toBe(3)
    s = E.killToStart(s)
    expect(s).toEqual({ text: "\ntwo ", cursor: 0 })
    s = E.insert(s, "1")
    expect(E.backspace(s)).toEqual({ text: "\ntwo ", cursor: 0 })
    expect(E.killToEnd(E.vertical(s, 1))).toEqual({ text: "1\nt", cursor: 3 })
  })
})

describe("prompt history", () => {
  test("Up walks back, Down forward, and the draft being typed comes back", () => {
    const history = ["first", "second"]
    const up1 = step(history, startCursor, "draft", -1)!
    expect(up1.text).toBe("second")
    const up2 = step(history, up1.cursor, up1.text, -1)!
    expect(up2.text).toBe("first")
    expect(step(history, up2.cursor, up2.text, -1)).toBeUndefined()
    const down = step(history, up2.cursor, up2.text, 1)!
    expect(down.text).toBe("second")
    expect(step(history, down.cursor, down.text, 1)!.text).toBe("draft")
  })

  test("is kept per project, without repeats or empty lines, and survives a bad file", async () => {
    expect(remember(["a"], "a")).toEqual(["a"])
    expect(remember(["a"], "  ")).toEqual(["a"])
    expect(remember(["a"], "b")).toEqual(["a", "b"])
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-history-"))
    const file = path.join(dir, "history", "p.json")
    await saveHistory(file, ["x", "y"])
    expect(await loadHistory(file)).toEqual(["x", "y"])
    fs.writeFileSync(file, "{not json")
    expect(await loadHistory(file)).toEqual([])
    expect(await loadHistory(path.join(dir, "missing.json"))).toEqual([])
  })
})

describe("slash commands", () => {
  test("typing / lists the commands that start so; Tab completes one or the common prefix", () => {
    expect(matches("/").length).toBe(11)
    expect(matches("/s").map((c) => c.name)).toEqual(["sessions"])
    expect(matches("/u").map((c) => c.name)).toEqual(["undo"])
    expect(matches("/e").map((c) => c.name)).toEqual(["export", "exit"])
    expect(matches("/exit now")).toEqual([])
    expect(matches("hello")).toEqual([])
    expect(complete("/se")).toBe("/sessions ")
    expect(complete("/e")).toBe("/ex")
    expect(complete("/ex")).toBeUndefined()
    expect(complete("/zzz")).toBeUndefined()
  })

  test("a line is a command when it starts with one slash", () => {
    expect(parseSlash("/export json out.json")).toEqual({ name: "export", args: ["json", "out.json"] })
    expect(parseSlash("  /HELP ")).toEqual({ name: "help", args: [] })
    expect(parseSlash("//not a command")).toBeUndefined()
    expect(parseSlash("/")).toBeUndefined()
    expect(parseSlash("path /etc/hosts")).toBeUndefined()
  })

  test("/export writes Markdown to reins-<session>.md in the project unless told otherwise", () => {
    expect(exportTarget([], "/p", "ses_1")).toEqual({ format: "md", file: "/p/reins-ses_1.md" })
    expect(exportTarget(["json"], "/p", "ses_1")).toEqual({ format: "json", file: "/p/reins-ses_1.json" })
    expect(exportTarget(["out/s.json"], "/p", "ses_1")).toEqual({ format: "json", file: "/p/out/s.json" })
    expect(exportTarget(["md", "/tmp/x.txt"], "/p", "ses_1")).toEqual({ format: "md", file: "/tmp/x.txt" })
  })

  test("/copy's OSC 52 is wrapped for tmux", () => {
    expect(osc52("hi", {})).toBe("\x1b]52;c;aGk=\x07")
    expect(osc52("hi", { TMUX: "/tmp/tmux" })).toBe("\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\")
  })
})

describe("the permission bridge", () => {
  const request = (id: string) => ({ id, permission: "bash", patterns: ["ls"], always: ["ls *"], sessionID: "ses_1" }) as const

  test("questions wait in order for the UI's answers; an interrupted question leaves the queue", async () => {
    const bridge = makePermissionBridge()
    const shown: Array<string | undefined> = []
    bridge.subscribe((q) => shown.push(q?.request.id))
    const first = Effect.runFork(bridge.prompter.ask(request("per_1")))
    const second = Effect.runFork(bridge.prompter.ask(request("per_2")))
    const third = Effect.runFork(bridge.prompter.ask(request("per_3")))
    await Effect.runPromise(Effect.yieldNow)
    expect(shown.at(-1)).toBe("per_1")
    // the second is interrupted (its turn stopped): it is no longer waiting
    await Effect.runPromise(Fiber.interrupt(second))
    let open: { answer: (a: { reply: "once" | "always" | "reject"; message?: string }) => void } | undefined
    const unsubscribe = bridge.subscribe((q) => (open = q))
    open!.answer({ reply: "once" })
    expect(await Effect.runPromise(Fiber.join(first))).toEqual({ reply: "once" })
    expect(shown.at(-1)).toBe("per_3")
    open!.answer({ reply: "reject", message: "no" })
    expect(await Effect.runPromise(Fiber.join(third))).toEqual({ reply: "reject", message: "no" })
    expect(shown.at(-1)).toBeUndefined()
    unsubscribe()
  })
})
