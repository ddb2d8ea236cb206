// The TUI's presentational components rendered by Ink to a fake terminal: what a person sees.
import { afterEach, beforeAll, describe, expect, test } from "bun:test"
import { renderToString } from "ink"
import { cleanup, render } from "ink-testing-library"
import type { ReactNode } from "react"
import type { SessionEvent } from "@reins/domain"
import { waitFor } from "@reins/testkit"
import { stripAnsi } from "../src/present/Style.ts"
import {
  Footer,
  initialTranscript,
  loadMarkdown,
  makeTheme,
  Markdown,
  PermissionQuestion,
  reduceTranscript,
  ThemeContext,
  Transcript,
  type PermissionAnswer,
  type Theme,
  type TranscriptProps,
  type TranscriptState
} from "../src/tui/view/index.ts"
import { assistant, completed, delta, EDIT_DIFF, running, SESSION, text, tool, updated, user } from "./tui-view-events.ts"

afterEach(() => cleanup())
// the app loads the lexer off the path to its first prompt; these tests load it first
beforeAll(() => loadMarkdown())

const color = makeTheme({ color: true, unicode: true })
const noColor = makeTheme({ color: false, unicode: true })
const ascii = makeTheme({ color: false, unicode: false })

const show = (node: ReactNode, theme: Theme = noColor, columns = 100) => renderToString(<ThemeContext value={theme}>{node}</ThemeContext>, { columns })

/** What the transcript puts on the terminal: the text it printed for good, then its live frame. */
const screen = (props: Omit<TranscriptProps, "print" | "expanded"> & { expanded?: ReadonlySet<string> }, theme: Theme = noColor) => {
  let printed = ""
  const app = render(
    <ThemeContext value={theme}>
      <Transcript expanded={none} {...props} print={(t) => (printed += t)} />
    </ThemeContext>
  )
  const frame = app.lastFrame() ?? ""
  app.unmount()
  return printed + frame
}
const fold = (evs: ReadonlyArray<SessionEvent>) => evs.reduce(reduceTranscript, initialTranscript)
const none: ReadonlySet<string> = new Set()

const bashOutput = ["line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "", "(exit code 3)"].join("\n")
const finished = fold([
  ...user("msg_u", "fix the tests"),
  { type: "message.updated", message: assistant("msg_a") },
  {
    type: "part.updated",
    part: {
      id: "prt_r",
      sessionID: SESSION,
      messageID: "msg_a",
      type: "reasoning",
      text: "First look at the failing test.\nThen fix it.",
      time: { start: 100, end: 2100 }
    }
  },
  updated(tool("prt_b", "msg_a", "bash", completed({ command: "bun test" }, bashOutput, { exitCode: 3, timedOut: false }))),
  updated(tool("prt_e", "msg_a", "edit", completed({ filePath: "/repo/src/a.ts", oldString: "2", newString: "3" }, "Edited.", { diff: EDIT_DIFF }))),
  updated(tool("prt_g", "msg_a", "grep", completed({ pattern: "TODO" }, "...", { matches: 7, files: 3 }))),
  updated(tool("prt_l", "msg_a", "glob", completed({ pattern: "**/*.ts" }, "...", { count: 12 }))),
  updated(tool("prt_w", "msg_a", "write", completed({ filePath: "/repo/new.txt", content: "hello\nworld\n" }, "Created.", { exists: false }))),
  text(
    "prt_t",
    "msg_a",
    "## Fixed\n\nThe test **passes** now; see `a.ts` and [the docs](https://example.com/docs).\n\n- one\n- two\n\n```ts\nconst b = 3 // fixed\n```\n",
    3000
  ),
  { type: "session.status", sessionID: SESSION, status: "idle" }
])

describe("Transcript", () => {
  test("finished tools: bash's exit code and last lines, an edit's coloured diff, grep and glob counts, a new file's lines", () => {
    const out = screen({ state: finished, expanded: none, width: 100, now: 0, cwd: "/repo" })
    expect(out).toContain("› fix the tests")
    expect(out).toContain("✗ bash bun test · exit 3 · 1.2s")
    // the last three lines of the output, not the note for the model
    expect(out).toContain("line 4")
    expect(out).toContain("line 6")
    expect(out).not.toContain("line 3")
    expect(out).not.toContain("(exit code 3)")
    expect(out).toContain("✓ edit src/a.ts · +1 −1")
    expect(out).toContain("-const b = 2")
    expect(out).toContain("+const b = 3")
    // the line names the file: its diff has no file headers
    expect(out).not.toContain("+++")
    expect(out).toContain("✓ grep TODO · 7 matches in 3 files")
    expect(out).toContain("✓ glob **/*.ts · 12 files")
    expect(out).toContain("✓ write new.txt · created")
    expect(out).toContain("+hello")
    // reasoning: one dim line, collapsed
    expect(out).toContain("▸ ∴ thought · 2.0s · First look at the failing test.")
    expect(out).not.toContain("Then fix it.")
  })

  test("the answer as markdown: heading, emphasis without markers, inline code, link with its address, list, code block", () => {
    const out = screen({ state: finished, expanded: none, width: 100, now: 0 })
    expect(out).toContain("## Fixed")
    expect(out).toContain("The test passes now; see `a.ts` and the docs (https://example.com/docs).")
    expect(out).toContain("• one")
    expect(out).toContain("│ const b = 3 // fixed")
    expect(out).not.toContain("```")
  })

  test("expanded: the whole bash output and the reasoning in full", () => {
    const out = screen({ state: finished, expanded: new Set(["prt_b", "prt_r"]), width: 100, now: 0 })
    for (const n of [1, 2, 3, 4, 5, 6]) expect(out).toContain(`line ${n}`)
    expect(out).toContain("▾ line 1")
    expect(out).toContain("Then fix it.")
  })

  test("colour: SGR escapes on; NO_COLOR: none at all, the same text", () => {
    const coloured = screen({ state: finished, expanded: none, width: 100, now: 0 }, color)
    const plain = screen({ state: finished, expanded: none, width: 100, now: 0 }, noColor)
    expect(coloured).toContain("\x1b[32m+const b = 3")
    expect(coloured).toContain("\x1b[31m-const b = 2")
    expect(plain).not.toContain("\x1b")
    // the same text, but for the markers that stand in for colour (a heading's #, inline code's backticks)
    expect(stripAnsi(coloured)).toBe(plain.replace(/^## /m, "").replace(/`a.ts`/, "a.ts"))
  })

  test("ASCII locale: no character outside ASCII anywhere on screen", () => {
    const compacted = reduceTranscript(finished, {
      type: "compaction.completed",
      sessionID: SESSION,
      messageID: "m",
      tokensBefore: 9000,
      tokensAfter: 100,
      pruned: [],
      summarised: [],
      summary: ""
    })
    const out = screen({ state: compacted, expanded: none, width: 100, now: 0 }, ascii)
    expect(out).toContain("x bash bun test | exit 3 | 1.2s")
    expect(out).toContain("+ edit")
    expect(out).toContain("+1 -1")
    expect(out).toContain("compacted: 9,000 -> 100 tokens")
    expect(out).toMatch(/^[\x00-\x7f]*$/)
  })

  test("a running call: spinner, elapsed time from now, bash's live tail, and the question it waits on", () => {
    const state = fold([
      { type: "message.updated", message: assistant("msg_a") },
      updated(tool("prt_b", "msg_a", "bash", running({ command: "make all" }, 1_000, { tail: "cc a.c\ncc b.c\nld app\n" }))),
      { type: "permission.asked", id: "per_1", sessionID: SESSION, permission: "bash", patterns: ["rm -rf build"], always: ["rm *"], callID: "call-prt_x" }
    ])
    const out = screen({ state: state, expanded: none, width: 100, now: 13_500 })
    expect(out).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash make all · 12s/)
    expect(out).toContain("│ cc b.c")
    expect(out).toContain("│ ld app")
    const asking = reduceTranscript(state, {
      type: "permission.asked",
      id: "per_2",
      sessionID: SESSION,
      permission: "bash",
      patterns: ["make all"],
      always: ["make *"],
      callID: "call-prt_b"
    })
    expect(screen({ state: asking, expanded: none, width: 100, now: 13_500 })).toContain("bash make all · waiting for your answer")
    const plain = screen({ state: state, expanded: none, width: 100, now: 13_500 }, ascii)
    expect(plain).toMatch(/[-\\|/] bash make all \| 12s/)
  })

  test("finished items are printed once, paragraphs of a streaming answer as they end; only the live rest is redrawn", async () => {
    const para = (n: number) => `Paragraph ${n} ${"word ".repeat(50).trim()}.`
    let state = fold([...user("msg_u", "hello there"), { type: "message.updated", message: assistant("msg_a") }, text("prt_t", "msg_a", "")])
    let printed = ""
    const view = (s: TranscriptState) => (
      <ThemeContext value={noColor}>
        <Transcript state={s} expanded={none} width={80} now={0} print={(t) => (printed += t)} />
      </ThemeContext>
    )
    const app = render(view(state))
    expect(printed).toContain("› hello there")
    const sizes: Array<number> = []
    for (const piece of [para(1), "\n\n", para(2), "\n\n", para(3)]) {
      for (const bit of piece.match(/[\s\S]{1,16}/g) ?? []) {
        state = reduceTranscript(state, delta("prt_t", bit))
        app.rerender(view(state))
      }
      sizes.push(printed.length)
    }
    await waitFor(() => printed.includes("Paragraph 2") && app.lastFrame()?.includes("Paragraph 3"), "the second paragraph printed, the third drawn")
    // the first two paragraphs were printed while the third still streamed, which is in the frame only
    expect(printed).toContain("Paragraph 1")
    expect(printed).toContain("Paragraph 2")
    expect(printed).not.toContain("Paragraph 3")
    expect(app.lastFrame()).toContain("Paragraph 3")
    expect(app.lastFrame()).not.toContain("Paragraph 2")
    expect(sizes[0]).toBeLessThan(sizes.at(-1)!)
    state = reduceTranscript(state, { type: "session.status", sessionID: SESSION, status: "idle" })
    app.rerender(view(state))
    await waitFor(() => printed.includes("Paragraph 3"), "the last paragraph printed")
    for (const word of ["hello there", "Paragraph 1", "Paragraph 2", "Paragraph 3"]) expect(printed.split(word).length - 1).toBe(1)
    expect(app.lastFrame() ?? "").toBe("")
  })

  test("every line fits the width it is laid out for, in colour or not: long words, code, diffs and tables are cut or wrapped", () => {
    const long = fold([
      ...user("msg_u", `a question with a very-long-word-${"x".repeat(120)} and more`),
      { type: "message.updated", message: assistant("msg_a") },
      updated(tool("prt_b", "msg_a", "bash", completed({ command: `echo ${"y".repeat(200)}` }, `${"z".repeat(300)}\n\n(exit code 0)`, { exitCode: 0 }))),
      updated(
        tool(
          "prt_e",
          "msg_a",
          "edit",
          completed({ filePath: "/repo/src/a.ts" }, "ok", { diff: EDIT_DIFF.replace("const b = 3", `const b = "${"w".repeat(150)}"`) })
        )
      ),
      text(
        "prt_t",
        "msg_a",
        `Para ${"word ".repeat(60)}\n\n- item ${"long ".repeat(40)}\n\n\`\`\`ts\nconst s = "${"q".repeat(140)}"\n\`\`\`\n\n| a | b |\n|---|---|\n| ${"c".repeat(90)} | d |\n`,
        9
      ),
      { type: "session.status", sessionID: SESSION, status: "idle" }
    ])
    for (const theme of [color, ascii]) {
      for (const width of [24, 40, 80]) {
        for (const expanded of [none, new Set(["prt_b", "prt_e"])]) {
          const lines = screen({ state: long, expanded, width, now: 0 }, theme).split("\n")
          const over = lines.filter((l) => Bun.stringWidth(stripAnsi(l)) > width)
          expect(over).toEqual([])
        }
      }
    }
  })

  test("a live part taller than its room shows its last lines under a count of those above", () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n")
    const state = fold([{ type: "message.updated", message: assistant("msg_a") }, text("prt_t", "msg_a", ""), delta("prt_t", `\`\`\`\n${code}\n`)])
    const out = screen({ state, width: 80, now: 0, height: 12 })
    const lines = out.split("\n")
    expect(lines.length).toBe(12)
    expect(lines[0]).toContain("more lines above, printed when done")
    expect(out).toContain("line 40")
    expect(out).not.toContain("line 20\n")
  })

  test("a new session's transcript (fewer items) prints from its start", () => {
    let printed = ""
    const view = (s: TranscriptState) => (
      <ThemeContext value={noColor}>
        <Transcript state={s} expanded={none} width={80} now={0} print={(t) => (printed += t)} />
      </ThemeContext>
    )
    const app = render(view(finished))
    printed = ""
    app.rerender(view(fold(user("msg_n", "a fresh start"))))
    expect(printed).toBe("\n› a fresh start\n")
    app.unmount()
  })
})

describe("the markdown lexer loads lazily", () => {
  test("a resumed answer is printed once marked has loaded, rendered, and never raw before", async () => {
    const proc = Bun.spawn(["bun", "run", `${import.meta.dir}/fixtures/tui-view-lazy.tsx`], { cwd: `${import.meta.dir}/..`, stdout: "pipe", stderr: "pipe" })
    const out = await new Response(proc.stdout).text()
    expect(await proc.exited).toBe(0)
    const { first, last } = JSON.parse(out) as Record<"first" | "last", { printed: string; frame: string }>
    // before: the question printed, the answer shown as written in the frame, not printed
    expect(first.printed).toContain("› hi")
    expect(first.printed).not.toContain("Title")
    expect(first.frame).toContain("Some **bold** text.")
    // after: printed once, rendered; nothing left in the frame
    expect(last.printed).toContain("Some bold text.")
    expect(last.printed).not.toContain("**")
    expect(last.printed.split("Title").length - 1).toBe(1)
    expect(last.frame).toBe("")
  })
})

describe("Footer", () => {
  const usage = { input: 1_000, output: 200, cacheRead: 3_000, cacheWrite: 0, cost: 0.0123, contextTokens: 4_200 }
  test("model, context used and share of the window, session tokens and cost, cache hit rate, cwd and branch", () => {
    const out = show(
      <Footer width={160} info={{ model: "openai/gpt-5", contextWindow: 200_000, usage, cwd: "/home/u/proj", home: "/home/u", branch: "main" }} />,
      noColor,
      160
    )
    expect(out.split("\n").length).toBe(1)
    expect(out).toContain("openai/gpt-5 · context 4.2k/200k (2%) · session 4k in / 200 out · $0.01 · cache 75%")
    expect(out).toContain("~/proj (main)")
  })

  test("no cache figures, no cache rate; a narrow terminal puts the place on its own line; ASCII separators", () => {
    const out = show(<Footer width={50} info={{ model: "local/m", usage: { ...usage, cacheRead: 0 }, cwd: "/srv/app" }} />, ascii, 50)
    expect(out).not.toContain("cache")
    const lines = out.split("\n")
    expect(lines.length).toBe(2)
    expect(lines[0]).toContain("local/m | context 4.2k")
    expect(lines[1]).toBe("/srv/app")
  })
})

describe("PermissionQuestion", () => {
  const request = {
    id: "per_1",
    permission: "bash",
    patterns: ["rm -rf build"],
    always: ["rm *"],
    command: "rm -rf build && make",
    directory: "/repo",
    rule: { permission: "bash", pattern: "rm *", action: "ask" }
  }
  const ask = () => {
    const replies: Array<PermissionAnswer> = []
    const app = render(
      <ThemeContext value={noColor}>
        <PermissionQuestion request={request} onReply={(r) => replies.push(r)} />
      </ThemeContext>
    )
    return { app, replies }
  }
  /** Types `keys`, then waits until the question shows what they did (`done`). */
  const press = async (app: ReturnType<typeof render>, keys: string, done: () => boolean, what: string) => {
    app.stdin.write(keys)
    await waitFor(done, what)
  }

  test("the TTY prompt's content and the three choices", () => {
    const out = ask().app.lastFrame() ?? ""
    expect(out).toContain("Permission needed: bash")
    expect(out).toContain("command: rm -rf build && make")
    expect(out).toContain("asks for: rm -rf build")
    expect(out).toContain("in: /repo")
    expect(out).toContain('rule: bash "rm *" → ask')
    expect(out).toContain('always would allow: bash "rm *"')
    expect(out).toContain("› [o]nce    [a]lways    [r]eject")
  })

  test("o and a answer at once", async () => {
    const once = ask()
    await press(once.app, "o", () => once.replies.length > 0, "the reply to o")
    expect(once.replies).toEqual([{ reply: "once" }])
    const always = ask()
    await press(always.app, "a", () => always.replies.length > 0, "the reply to a")
    expect(always.replies).toEqual([{ reply: "always" }])
  })

  test("arrows move the choice and Enter takes it", async () => {
    const { app, replies } = ask()
    await press(app, "\x1b[C", () => !app.lastFrame()?.includes("› [o]nce"), "the choice to move")
    expect(app.lastFrame()).toContain("› [a]lways")
    await press(app, "\r", () => replies.length > 0, "the reply to Enter")
    expect(replies).toEqual([{ reply: "always" }])
  })

  test("r asks for a message to the model, sent with Enter", async () => {
    const { app, replies } = ask()
    await press(app, "r", () => !app.lastFrame()?.includes("[o]nce"), "the question for a message")
    expect(app.lastFrame()).toContain("Tell the agent why or what to do instead")
    await press(app, "use make clean", () => app.lastFrame()?.includes("use make clean") === true, "the message typed")
    await press(app, "\r", () => replies.length > 0, "the reply to Enter")
    expect(replies).toEqual([{ reply: "reject", message: "use make clean" }])
  })

  test("a message typed fast arrives with its Enter in one chunk: it is sent", async () => {
    const { app, replies } = ask()
    await press(app, "r", () => !app.lastFrame()?.includes("[o]nce"), "the question for a message")
    await press(app, "use make clean\r", () => replies.length > 0, "the reply")
    expect(replies).toEqual([{ reply: "reject", message: "use make clean" }])
  })

  test("Esc rejects, with no message", async () => {
    const { app, replies } = ask()
    // Ink tells a lone Esc from the start of a key's sequence after a pause of its own (wall time): the reply comes then
    await press(app, "\x1b", () => replies.length > 0, "the reply to Esc")
    expect(replies).toEqual([{ reply: "reject" }])
  })
})

describe("Markdown", () => {
  test("a code block's language is highlighted in colour and left plain without; a table lines up", () => {
    const md = "```python\ndef f(x):\n    return 'y'  # note\n```\n\n| name | n |\n|------|--:|\n| a | 10 |\n| bb | 2 |\n"
    const coloured = show(<Markdown text={md} width={80} />, color)
    expect(coloured).toContain("\x1b[35mdef\x1b[39m")
    expect(coloured).toContain("\x1b[32m'y'\x1b[39m")
    expect(coloured).toContain("\x1b[90m# note\x1b[39m")
    const plain = show(<Markdown text={md} width={80} />, noColor)
    expect(plain).toContain("│ def f(x):")
    expect(plain).toContain("name │  n")
    expect(plain).toContain("a    │ 10")
    expect(plain).toContain("bb   │  2")
  })
})
