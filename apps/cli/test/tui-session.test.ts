// The interactive session under a real pty against the scripted model server: a turn streamed with a
// tool line and its diff, the footer's tokens, a permission answered with the keyboard, slash commands, leaving.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, reins } from "./support.ts"
import { READY, expectScreen, normalise, openTui, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

/** The footer: the last line of the screen. */
const footer = (screen: string) => screen.trimEnd().split("\n").at(-1) ?? ""

describe("reins (interactive) on a terminal", () => {
  test("a prompt streams its answer, the edit's tool line and diff show, and the footer's token count grows", async () => {
    const p = await project([
      {
        toolCalls: [{ name: "edit", arguments: { filePath: "notes.txt", oldString: "old line", newString: "new line" } }],
        usage: { prompt_tokens: 1200, completion_tokens: 40 }
      },
      { text: "I replaced **old line** with new line in notes.txt.", textChunks: 8, chunkDelayMs: 30, usage: { prompt_tokens: 1500, completion_tokens: 60 } }
    ])
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "first\nold line\nlast\n")
    await using pty = await openTui(p, ["--yolo"])
    const before = footer(pty.screen())
    expect(before).toContain("local/scripted")
    expect(normalise(before, p)).toContain("<cwd>")

    await send(pty, "fix the note")
    await settled(pty, "with new line in notes.txt")
    const screen = pty.screen()
    expect(screen).toContain("fix the note")
    expect(screen).toContain("notes.txt")
    expect(screen).toMatch(/-\s*old line/)
    expect(screen).toMatch(/\+\s*new line/)
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("first\nnew line\nlast\n")
    // the footer counted the turn's tokens
    const after = footer(screen)
    expect(after).not.toBe(before)
    expect(after).toMatch(/[1-9]/)
    expectScreen("turn-with-edit", normalise(screen, p))

    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("a permission question is answered with the keyboard: always allows the command, and the turn goes on", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "touch made-by-bash.txt" } }] }, { text: "The file is made." }], {
      permission: { bash: "ask" }
    })
    await using pty = await openTui(p)
    await send(pty, "make a file")
    await pty.waitFor("touch made-by-bash.txt")
    await pty.waitFor(/a\]?lways/i)
    // the question is drawn at once, the tool's line with a later frame: wait for its settled form
    await pty.waitFor("bash touch made-by-bash.txt · waiting for your answer")
    await pty.waitFor(/tool · /)
    expectScreen("permission-question", normalise(pty.screen(), p))
    expect(fs.existsSync(path.join(p.cwd, "made-by-bash.txt"))).toBe(false)
    pty.type("a")
    await pty.waitFor("The file is made.")
    expect(fs.existsSync(path.join(p.cwd, "made-by-bash.txt"))).toBe(true)
    await pty.press("ctrl-d")
    expect(await pty.waitExit()).toBe(0)
  })

  test("an edit's question shows the change it asks about; reject leaves the file as it was", async () => {
    const p = await project(
      [
        { toolCalls: [{ name: "edit", arguments: { filePath: "app.ts", oldString: "const port = 80", newString: "const port = 8080" } }] },
        { text: "Left it alone." }
      ],
      { permission: { edit: "ask" } }
    )
    fs.writeFileSync(path.join(p.cwd, "app.ts"), "// server\nconst port = 80\nlisten(port)\n")
    await using pty = await openTui(p)
    await send(pty, "change the port")
    await pty.waitFor(/a\]?lways/i)
    await pty.waitFor("+const port = 8080")
    const screen = pty.screen()
    expect(screen).toContain("-const port = 80")
    expect(screen.indexOf("+const port = 8080")).toBeLessThan(screen.lastIndexOf("lways"))
    // the question takes keys from the frame after the one that drew it: wait for the status line's settled form
    await pty.waitFor(/tool · /)
    await pty.settle()
    pty.type("r")
    await pty.waitFor("Tell the agent why")
    await pty.press("enter")
    await pty.waitFor("Left it alone.")
    expect(fs.readFileSync(path.join(p.cwd, "app.ts"), "utf8")).toBe("// server\nconst port = 80\nlisten(port)\n")
    await pty.press("ctrl-d")
    expect(await pty.waitExit()).toBe(0)
  })

  test("typing / lists the commands, Tab completes, /help shows the keys, unknown commands are named", async () => {
    const p = await project([{ text: "unused" }])
    await using pty = await openTui(p)
    pty.type("/")
    await pty.waitFor("/sessions")
    const listed = pty.screen()
    for (const c of ["/new", "/sessions", "/model", "/compact", "/undo", "/redo", "/export", "/copy", "/help", "/exit"]) expect(listed).toContain(c)
    pty.type("he")
    await pty.settle()
    await pty.press("tab")
    await pty.waitFor("/help ")
    await pty.press("enter")
    // the help is printed above the prompt: on a loaded machine a frame may still draw the command list below it, and
    // the terminal scrolls the keys' first lines out of the 30 rows (a person scrolls back to them)
    await pty.waitUntil(() => pty.scrollback().includes("Ctrl+C twice on an empty prompt"), "the help's keys (on the screen or scrolled above it)")
    expect(pty.scrollback()).toContain("Commands:")
    await send(pty, "/bogus")
    await pty.waitFor("Unknown command /bogus")
    // nothing was sent to the model
    expect(p.server.requests.length).toBe(0)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("/export writes the session as Markdown and says where; /copy sends the answer as OSC 52", async () => {
    const p = await project([{ text: "The answer to copy." }])
    await using pty = await openTui(p)
    await send(pty, "question")
    await settled(pty, "The answer to copy.")
    await send(pty, "/export")
    await pty.waitFor("Exported the session as Markdown to")
    const file = fs.readdirSync(p.cwd).find((f) => /^reins-ses_.*\.md$/.test(f))
    expect(file).toBeDefined()
    const md = fs.readFileSync(path.join(p.cwd, file!), "utf8")
    expect(md).toContain("## User")
    expect(md).toContain("question")
    expect(md).toContain("The answer to copy.")
    await send(pty, "/copy")
    await pty.waitFor("Copied the last answer")
    expect(pty.output()).toContain(`\x1b]52;c;${Buffer.from("The answer to copy.").toString("base64")}\x07`)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("/undo takes back the last turn's files (a shell command's too) and its messages on screen; /redo brings them back", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "echo changed > notes.txt && rm gone.txt" } }] }, { text: "UNDO-ME-ANSWER" }])
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "original\n")
    fs.writeFileSync(path.join(p.cwd, "gone.txt"), "keep me\n")
    await using pty = await openTui(p, ["--yolo"])
    await send(pty, "change the notes")
    await settled(pty, "UNDO-ME-ANSWER")
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("changed\n")
    await send(pty, "/undo")
    await pty.waitFor("Undid 1 message and 2 files (gone.txt, notes.txt).")
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("original\n")
    expect(fs.readFileSync(path.join(p.cwd, "gone.txt"), "utf8")).toBe("keep me\n")
    // the transcript is printed again without the undone turn
    await pty.settle()
    expect(pty.screen()).not.toContain("UNDO-ME-ANSWER")
    await send(pty, "/redo")
    await pty.waitFor("Redid 1 message and 2 files")
    await pty.waitFor("UNDO-ME-ANSWER")
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("changed\n")
    expect(fs.existsSync(path.join(p.cwd, "gone.txt"))).toBe(false)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("Esc Esc opens the rewind picker: the message picked is undone with every turn after it, and comes back in the prompt", async () => {
    const p = await project([
      { toolCalls: [{ name: "bash", arguments: { command: "echo one > notes.txt" } }] },
      { text: "FIRST-ANSWER" },
      { toolCalls: [{ name: "bash", arguments: { command: "echo two >> notes.txt && touch made.txt" } }] },
      { text: "SECOND-ANSWER" }
    ])
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "original\n")
    await using pty = await openTui(p, ["--yolo"])
    await send(pty, "FIRST-PROMPT write one")
    await settled(pty, "FIRST-ANSWER")
    await send(pty, "SECOND-PROMPT add two")
    await settled(pty, "SECOND-ANSWER")
    await pty.press("esc")
    await pty.waitFor("Press Esc again to rewind")
    await pty.press("esc")
    await pty.waitFor("Rewind: undo back to before a message you sent")
    // newest first: the second prompt, then the first
    const listed = pty.screen().slice(pty.screen().indexOf("Rewind: undo back"))
    expect(listed.indexOf("SECOND-PROMPT add two")).toBeGreaterThan(-1)
    expect(listed.indexOf("SECOND-PROMPT add two")).toBeLessThan(listed.indexOf("FIRST-PROMPT write one"))
    // the picker takes keys once its frame is drawn and its effects ran
    await pty.settle()
    await pty.press("down")
    await pty.press("enter")
    await pty.waitFor("Undid 2 messages and 2 files (made.txt, notes.txt).")
    expect(fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")).toBe("original\n")
    expect(fs.existsSync(path.join(p.cwd, "made.txt"))).toBe(false)
    await pty.settle()
    const screen = pty.screen()
    expect(screen).not.toContain("FIRST-ANSWER")
    expect(screen).not.toContain("SECOND-ANSWER")
    // the message picked is in the prompt, to edit and send again
    await pty.waitFor("❯ FIRST-PROMPT write one")
    await pty.press("ctrl-c")
    await pty.press("ctrl-d")
    expect(await pty.waitExit()).toBe(0)
  })

  test("Enter on the rewind picker and a new message in one burst: the message goes once the rewind is done, and the rewound one is not put back over it", async () => {
    const p = await project([{ text: "FIRST-ANSWER" }, { text: "ANSWER-AFTER-REWIND" }])
    await using pty = await openTui(p)
    await send(pty, "FIRST-PROMPT")
    await settled(pty, "FIRST-ANSWER")
    await pty.press("esc")
    await pty.waitFor("Press Esc again to rewind")
    await pty.press("esc")
    await pty.waitFor("Rewind: undo back to before a message you sent")
    pty.type("\rSECOND-PROMPT\r")
    await settled(pty, "ANSWER-AFTER-REWIND")
    // sent after the undo: the conversation it continues no longer holds the first prompt
    const body = JSON.stringify(p.server.requests[1]!.body.messages)
    expect(body).toContain("SECOND-PROMPT")
    expect(body).not.toContain("FIRST-PROMPT")
    expect(pty.screen()).not.toContain("❯ FIRST-PROMPT")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("a paste right after /sessions in a project with no session reaches the prompt as pasted", async () => {
    const p = await project([{ text: "unused" }])
    await using pty = await openTui(p)
    pty.type("/sessions\r\u001b[200~line one\nline two\u001b[201~")
    await pty.waitFor("No stored session in this project yet.")
    await pty.waitUntil((s) => s.includes("❯ line one") && s.includes("line two") && !s.includes("line one line two"), "the paste in the prompt, two lines")
    expect(p.server.requests.length).toBe(0)
    await pty.press("ctrl-c")
    await pty.press("ctrl-d")
    expect(await pty.waitExit()).toBe(0)
  })

  test("Ctrl+C twice on an empty prompt exits; Up brings back the previous prompt, also in the next session", async () => {
    const p = await project([{ text: "first answer" }])
    {
      await using pty = await openTui(p)
      await send(pty, "remember this prompt")
      await settled(pty, "first answer")
      await pty.press("ctrl-c")
      await pty.waitFor("Press Ctrl+C again to exit")
      await pty.press("ctrl-c")
      expect(await pty.waitExit()).toBe(0)
    }
    await using again = await openTui(p)
    await again.press("up")
    await again.waitFor("remember this prompt")
    // Ctrl+C clears the prompt, Ctrl+D on the empty prompt leaves
    await again.press("ctrl-c")
    await again.waitUntil((s) => !s.includes("remember this prompt"), "the prompt cleared")
    await again.press("ctrl-d")
    expect(await again.waitExit()).toBe(0)
  })

  test("without a terminal, reins alone prints the help (no prompt, no hang) and reins chat says it needs one", async () => {
    const p = await project([])
    const help = await reins([], p)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("chat")
    expect(help.stdout).toContain("run")
    const chat = await reins(["chat"], p)
    expect(chat.code).toBe(2)
    expect(chat.stderr).toContain("needs a terminal")
  })

  test("NO_COLOR and a C locale degrade cleanly: no colour, ASCII glyphs and borders only", async () => {
    const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "Done **bold**." }])
    await using pty = await openTui({ ...p, env: { ...p.env, LANG: "C", NO_COLOR: "1" } }, ["--yolo"])
    await send(pty, "go")
    await settled(pty, "Done bold.")
    const screen = pty.screen()
    expect(screen).toContain("+----")
    expect(screen).toContain("| >")
    expect(screen).toMatch(/bash echo hi \| exit 0/)
    expectScreen("ascii-no-color", normalise(screen, p))
    // the slash commands' completions and the sessions picker are drawn too
    pty.type("/se")
    await pty.waitFor("/sessions")
    pty.type("ssions")
    await pty.press("enter")
    await pty.waitFor("type to filter")
    await pty.press("escape")
    await pty.waitUntil(() => !pty.screen().includes("type to filter"), "the picker closed")
    await pty.waitFor(READY)
    // the raw bytes: no SGR colour or dim at all (what tmux capture-pane -e would show); only the
    // cursor's inverse cell (7/27) and cursor movement
    const sgr = [...pty.output().matchAll(/\x1b\[([0-9;:]*)m/g)].map((m) => m[1])
    expect(sgr.filter((codes) => codes !== "7" && codes !== "27")).toEqual([])
    expect(pty.output().replace(/[\x00-\x7f]/g, "")).toBe("")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("multi-line input: Alt+Enter, a trailing backslash and the kitty protocol's Shift+Enter insert newlines; Enter sends it whole", async () => {
    const p = await project([{ error: { status: 400, message: "bad request from the scripted server" } }, { text: "Three lines received." }])
    await using pty = await openTui(p)
    // a failed turn says why once, and the prompt is usable again
    await send(pty, "fail please")
    await settled(pty, "bad request from the scripted server")
    expect(pty.screen().split("bad request from the scripted server").length - 1).toBe(1)
    pty.type("line one")
    await pty.press("alt-enter")
    pty.type("line two\\")
    await pty.settle()
    await pty.press("enter")
    pty.type("line three\x1b[13;2uline four")
    await pty.waitFor("line four")
    expect(p.server.requests.length).toBe(1)
    await pty.press("enter")
    await pty.waitFor("Three lines received.")
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("line one\\nline two\\nline three\\nline four")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })
})
