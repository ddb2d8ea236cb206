// Resuming sessions in the interactive session under a real pty: the /sessions picker (newest first),
// `reins --session ID` with its history rendered, /new, /model.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, events, projects, reins } from "./support.ts"
import { expectScreen, normalise, openTui, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

describe("reins (interactive): sessions", () => {
  test("/sessions lists this project's sessions newest first, and picking one shows its history and continues it", async () => {
    const p = await project([{ text: "Answer about apples." }, { text: "Answer about pears." }, { text: "More on apples." }])
    const first = events((await reins(["run", "--format", "json", "tell me about apples"], p)).stdout).find((e) => e.type === "session.created")!.session
      .id as string
    const second = events((await reins(["run", "--format", "json", "tell me about pears"], p)).stdout).find((e) => e.type === "session.created")!.session
      .id as string
    expect(first).not.toBe(second)

    await using pty = await openTui(p)
    await send(pty, "/sessions")
    await pty.waitFor("Resume a session")
    const picker = pty.screen()
    // newest first
    expect(picker.indexOf("tell me about pears")).toBeGreaterThan(-1)
    expect(picker.indexOf("tell me about pears")).toBeLessThan(picker.indexOf("tell me about apples"))
    expectScreen("sessions-picker", normalise(picker, p))
    // the picker takes keys once its frame is drawn and its input handler attached: a key moves the choice and back
    pty.type("\u001b[B")
    await pty.waitUntil((s) => s.includes("❯ tell me about apples"), "the picker to take a key")
    pty.type("\u001b[A")
    await pty.waitUntil((s) => s.includes("❯ tell me about pears"), "the picker to take a key")
    // Down and Enter in one burst (as fast typing or a paste sends them): Enter picks what Down chose
    pty.type("\u001b[B\r")
    await settled(pty, "Answer about apples.")
    expect(pty.screen()).not.toContain("Answer about pears.")
    // the next message continues that session: the model gets its history
    await send(pty, "and green ones?")
    await pty.waitFor("More on apples.")
    const body = JSON.stringify(p.server.requests[2]!.body.messages)
    expect(body).toContain("tell me about apples")
    expect(body).not.toContain("tell me about pears")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)

    // reins --session ID opens that session with its history rendered
    await using again = await openTui(p, ["--session", second])
    await again.waitFor("Answer about pears.")
    expect(again.screen()).toContain("tell me about pears")
    await again.press("ctrl-d")
    expect(await again.waitExit()).toBe(0)
  })

  test("keys typed right after /sessions or /model, in one burst, are the picker's: nothing reaches the prompt", async () => {
    const p = await project(
      [{ text: "Answer about apples." }, { text: "Answer about pears." }, { text: "More on apples." }, { text: "From the other model." }],
      {
        provider: {
          local: { type: "openai-compatible", baseURL: "", models: { scripted: { context: 32000, output: 4000 }, other: { context: 64000, output: 4000 } } }
        }
      }
    )
    const config = JSON.parse(await Bun.file(p.configFile!).text())
    config.provider.local.baseURL = p.server.url
    await Bun.write(p.configFile!, JSON.stringify(config))
    await reins(["run", "tell me about apples"], p)
    await reins(["run", "tell me about pears"], p)

    await using pty = await openTui(p)
    // the picker opens after the sessions are read: Down and Enter come before it is drawn. In the prompt they would
    // bring back the last message sent and send it again; held for the picker, they pick the second session. What
    // follows the Enter that picks, in the same burst, is the prompt's: a message to the session resumed
    pty.type("/sessions\r\u001b[B\rand green ones?\r")
    await settled(pty, "More on apples.")
    expect(pty.screen()).not.toContain("Answer about pears.")
    expect(p.server.requests.length).toBe(3)
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("tell me about apples")
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("and green ones?")
    // the model picker: its choices in the config's order (scripted, other); Down and Enter pick the other
    pty.type("/model\r\u001b[B\r")
    await pty.waitFor("Model: local/other for the next turns")
    await send(pty, "one more")
    await settled(pty, "From the other model.")
    expect(p.server.requests[3]!.body.model).toBe("other")
    expect(p.server.requests.length).toBe(4)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("a picker opened again before the last pick finished takes the keys; a paste while one opens is its filter", async () => {
    // with a variant, a pick from the model picker waits for the model's check: the next /model opens meanwhile
    const models = {
      scripted: { context: 32000, output: 4000, variants: { deep: { temperature: 0.1 } } },
      other: { context: 64000, output: 4000, variants: { deep: { temperature: 0.2 } } }
    }
    const p = await project([{ text: "Answer about apples." }, { text: "Answer about pears." }, { text: "After the pick." }])
    const config = JSON.parse(await Bun.file(p.configFile!).text())
    config.provider.local.models = models
    await Bun.write(p.configFile!, JSON.stringify(config))
    await reins(["run", "tell me about apples"], p)
    await reins(["run", "tell me about pears"], p)

    await using pty = await openTui(p, ["--variant", "deep"])
    await send(pty, "/model")
    await pty.waitFor("Model for the next turns")
    // Enter picks; Backspace (an event of its own) and /model Enter reach the prompt and open the picker again
    pty.type("\r\u007f/model\r")
    await pty.waitFor("Model: local/scripted")
    await pty.waitFor("Model for the next turns")
    pty.type("\u001b[B")
    await pty.waitUntil((s) => s.includes("❯ local/other"), "the new picker to take a key")
    await pty.press("esc")
    await pty.waitUntil((s) => !s.includes("Model for the next turns"), "the picker closed")
    // a bracketed paste right after /sessions: the picker's filter, and Enter picks what it leaves
    pty.type("/sessions\r\u001b[200~apples\u001b[201~\r")
    await pty.waitUntil((s) => s.includes("tell me about apples") && !s.includes("Resume a session"), "the session about apples resumed")
    await send(pty, "go on")
    await settled(pty, "After the pick.")
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("tell me about apples")
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).not.toContain("tell me about pears")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("reins --session with an unknown id says so (exit 2); /new starts afresh; /model switches the model for the next turn", async () => {
    const p = await project([{ text: "From the first model." }, { text: "From the other model." }], {
      provider: {
        local: { type: "openai-compatible", baseURL: "", models: { scripted: { context: 32000, output: 4000 }, other: { context: 64000, output: 4000 } } }
      }
    })
    // the extra config above replaced the provider: point it at the scripted server again
    const config = JSON.parse(await Bun.file(p.configFile!).text())
    config.provider.local.baseURL = p.server.url
    await Bun.write(p.configFile!, JSON.stringify(config))

    // on a terminal, an unknown session is one line and exit 2, before any screen
    {
      await using unknown = spawnPty([BIN, "--session", "ses_nope"], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" } })
      expect(await unknown.waitExit()).toBe(2)
      expect(unknown.screen()).toContain("No session ses_nope")
    }

    await using pty = await openTui(p)
    await send(pty, "first question")
    await settled(pty, "From the first model.")
    await send(pty, "/model")
    await pty.waitFor("Model for the next turns")
    expect(pty.screen()).toContain("local/other")
    pty.type("other")
    await pty.settle()
    await pty.press("enter")
    await pty.waitFor("Model: local/other for the next turns")
    await send(pty, "/new")
    await pty.waitFor("New session")
    expect(pty.screen()).not.toContain("From the first model.")
    await send(pty, "second question")
    await pty.waitFor("From the other model.")
    expect(p.server.requests[1]!.body.model).toBe("other")
    // a new session: the first question is not in its history
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).not.toContain("first question")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })

  test("/compact summarises the session now and says so; a multi-line paste stays one message", async () => {
    const p = await project([
      { text: "ok one" },
      { text: "ok two" },
      { text: "ok three" },
      { text: "## Objective\nSUMMARY-MARKER" },
      { text: "after the paste" }
    ])
    await using pty = await openTui(p)
    for (const [text, answer] of [
      ["TASK-MARKER: build it", "ok one"],
      ["second", "ok two"],
      ["third", "ok three"]
    ] as const) {
      await send(pty, text)
      await settled(pty, answer)
    }
    await send(pty, "/compact")
    await settled(pty, "compacted")
    // the summary request was the fourth call
    expect(JSON.stringify(p.server.requests[3]!.body.messages)).toContain("TASK-MARKER")
    // a bracketed paste with newlines is inserted, not sent line by line
    pty.type("\x1b[200~line one\nline two\x1b[201~")
    await pty.waitFor("line two")
    expect(p.server.requests.length).toBe(4)
    await pty.press("enter")
    await pty.waitFor("after the paste")
    expect(JSON.stringify(p.server.requests[4]!.body.messages)).toContain("line one\\nline two")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })
})
