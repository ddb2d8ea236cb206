// `reins run` text output for a person (issue 15, item 2), under a real pty and on pipes: colour and the
// spinner only on a terminal, NO_COLOR and FORCE_COLOR honoured, one result line per tool, a closing line
// whose figures are the session's, and after Ctrl+C how to continue.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import { sumUsage, usageLine } from "../src/present/Usage.ts"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, gate, projects, reins, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
/** A spinner frame followed by what it waits for. */
const spinner = (label: string) => new RegExp(`[${FRAMES}] ${escaped(label)}`)
/** A duration as the tool lines show it: `820ms`, `1.5s`. */
const DURATION = String.raw`(?:\d+ms|\d+\.\ds)`
/** The seconds of a `1.5s` duration at the end of a line. */
const seconds = (line: string | undefined) => Number(/ · (\d+\.\d)s$/.exec(line ?? "")?.[1])
const SGR_COLOUR = /\x1b\[(?:3\d|9\d|1|2)m/
const ERASE_LINE = "\r\x1b[2K"

/** The project's env without NO_COLOR (support.ts sets it for every other test). */
const envOf = (p: Project, extra: Record<string, string> = {}) => {
  const { NO_COLOR: _, ...rest } = p.env
  return { ...rest, LANG: "C.UTF-8", ...extra }
}

const onTty = (p: Project, args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  spawnPty([BIN, ...args], { cwd: p.cwd, env: { ...envOf(p, extra), TERM: "xterm-256color" }, cols: 120, rows: 30 })

const doors: Array<{ stop: (force: boolean) => Promise<void> }> = []
afterAll(async () => {
  for (const door of doors) await door.stop(true)
})
/**
 * The project's model behind a door: its requests wait there until the test calls `open()`, so the model is
 * thinking for as long as the test needs, however slow the machine.
 */
const heldModel = (p: Project & { readonly server: { readonly url: string } }) => {
  let open = () => {}
  const opened = new Promise<void>((resolve) => (open = resolve))
  const model = new URL(p.server.url)
  const door = Bun.serve({
    port: 0,
    idleTimeout: 0,
    fetch: async (req) => {
      const body = await req.arrayBuffer()
      await opened
      const url = new URL(req.url)
      return fetch(`${model.origin}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body })
    }
  })
  doors.push(door)
  const file = p.configFile!
  const config = JSON.parse(fs.readFileSync(file, "utf8"))
  config.provider.local.baseURL = `http://127.0.0.1:${door.port}${model.pathname}`
  fs.writeFileSync(file, JSON.stringify(config))
  return { open }
}

const sessionOf = async (p: Project) => JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout)[0].id as string

const exported = async (p: Project, sessionID: string) => JSON.parse((await reins(["sessions", "export", sessionID], p)).stdout)

/** A command on a pipe: a second and a half of sleep, so its line shows seconds. */
const SLEPT = "sleep 1.5 && echo slept"
/** A command on a terminal: held until the test has seen its spinner (a fixed sleep could end first on a busy machine). */
const held = gate()

/** A model that writes a file, runs `command`, then answers; each step's usage as a provider with a cache reports it. */
const steps = (command = SLEPT) => [
  {
    toolCalls: [{ name: "write", arguments: { filePath: "notes.txt", content: "alpha\nbeta\n" } }],
    usage: { prompt_tokens: 2000, completion_tokens: 40, cached_tokens: 1500 }
  },
  {
    toolCalls: [{ name: "bash", arguments: { command } }],
    usage: { prompt_tokens: 2400, completion_tokens: 30, cached_tokens: 2000 }
  },
  { text: "All done: notes written.", usage: { prompt_tokens: 2600, completion_tokens: 12, cached_tokens: 2400 } }
]

describe("reins run on a terminal", () => {
  test("colour, a spinner while a tool runs (erased), one line per tool, the closing line; stdout has the answer", async () => {
    const p = await setup(steps(held.command))
    await using pty = onTty(p, ["run", "--yolo", "make notes"])
    // while bash runs, the spinner names it with its elapsed time
    await pty.waitFor(spinner(`bash ${held.command} ·`))
    held.open(p)
    expect(await pty.waitExit()).toBe(0)
    await pty.settle()
    const screen = pty.screen()
    expect(screen).toContain("✓ write notes.txt · +2 −0 · ")
    expect(screen).toMatch(new RegExp(`✓ bash ${escaped(held.command)} · exit 0 · ${DURATION}\n`))
    expect(screen).toContain("All done: notes written.")
    // the spinner was erased before each line: none is left on the screen
    expect(screen).not.toMatch(new RegExp(`[${FRAMES}]`))
    const raw = pty.output()
    expect(raw).toMatch(SGR_COLOUR)
    expect(raw).toContain(`\x1b[32m✓\x1b[39m`)
    expect(raw).toContain(ERASE_LINE)

    // the closing line's figures are the session's: three steps, their tokens and cache reads as stored
    const sessionID = await sessionOf(p)
    const stored = (await exported(p, sessionID)).messages.filter((m: any) => m.info.role === "assistant").map((m: any) => m.info)
    const figures = usageLine(sumUsage(stored))
    expect(figures).toBe("3 steps · 7k in / 82 out · $0.00 · cache 84%")
    const closing = screen.split("\n").find((l) => l.startsWith(`session ${sessionID} · `))
    expect(closing).toStartWith(`session ${sessionID} · ${figures} · `)
    expect(closing).toMatch(new RegExp(` · ${DURATION}$`))
  })

  test("NO_COLOR: no colour codes, the spinner still shows", async () => {
    const p = await setup(steps(held.command))
    await using pty = onTty(p, ["run", "--yolo", "make notes"], { NO_COLOR: "1" })
    await pty.waitFor(spinner(`bash ${held.command}`))
    held.open(p)
    expect(await pty.waitExit()).toBe(0)
    await pty.settle()
    expect(pty.output()).not.toMatch(SGR_COLOUR)
    expect(pty.screen()).toContain(`✓ bash ${held.command} · exit 0`)
  })

  test("TERM=dumb: no colour and no spinner", async () => {
    const p = await setup(steps())
    await using pty = spawnPty([BIN, "run", "--yolo", "make notes"], { cwd: p.cwd, env: { ...envOf(p), TERM: "dumb" }, cols: 120, rows: 30 })
    expect(await pty.waitExit()).toBe(0)
    await pty.settle()
    expect(pty.output()).not.toContain("\x1b[")
    expect(pty.output()).not.toMatch(new RegExp(`[${FRAMES}]`))
    expect(pty.screen()).toContain("✓ bash sleep 1.5 && echo slept · exit 0")
  })

  test("a spinner while the model thinks; none over a permission question, which stays whole until answered", async () => {
    const p = await setup(
      [
        { text: "Looking.", toolCalls: [{ name: "bash", arguments: { command: "touch x.txt" } }] },
        // streamed slowly: the spinner would have time to tick between the answer's lines
        { text: "Made x.txt.\n\nIt is empty.\nNothing else changed.\n", textChunks: 12, chunkDelayMs: 120 }
      ],
      { permission: { bash: "ask" } }
    )
    // the model thinks until the test has seen the spinner say so
    const door = heldModel(p)
    await using pty = onTty(p, ["run", "make x"])
    await pty.waitFor(spinner("thinking ·"))
    door.open()
    await pty.waitFor("[o]nce  [a]lways  [r]eject:")
    // a few spinner ticks later the question is still the last line: nothing erased or drew over it (a window of
    // wall time: this asserts that something does not happen)
    await Bun.sleep(400)
    await pty.settle()
    expect(pty.screen().split("\n").at(-1)).toBe("[o]nce  [a]lways  [r]eject:")
    expect(pty.screen()).toContain("Permission needed: bash")
    pty.type("o\r")
    expect(await pty.waitExit()).toBe(0)
    await pty.settle()
    expect(pty.screen()).toMatch(/\[o\]nce {2}\[a\]lways {2}\[r\]eject: o\n✓ bash touch x\.txt · exit 0 · /)
    expect(pty.screen()).toContain("Made x.txt.\n\nIt is empty.\nNothing else changed.\n\nsession ")
    // while the answer streamed to this same terminal, no spinner was drawn between its lines
    expect(pty.output()).not.toContain("writing")
  })

  test("Ctrl+C during a command: the call is marked interrupted, and the way to continue is printed", async () => {
    // an hour's sleep: only Ctrl+C ends it
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "sleep 3600" } }] }, { text: "continued fine" }])
    await using pty = onTty(p, ["run", "--yolo", "nap"])
    await pty.waitFor(spinner("bash sleep 3600 ·"))
    await pty.press("ctrl-c")
    expect(await pty.waitExit()).toBe(130)
    await pty.settle()
    const sessionID = await sessionOf(p)
    const screen = pty.screen()
    expect(screen).toMatch(/✗ bash sleep 3600 · interrupted after \d+(\.\d)?m?s\n✗ interrupted after /)
    expect(screen).toContain(`Continue with: reins run --session ${sessionID} "…"\n           or: reins run -c "…" (the latest session here)`)
    expect(screen).not.toMatch(new RegExp(`[${FRAMES}]`))
    // the hint works: the session goes on
    const next = await reins(["run", "--session", sessionID, "go on"], p)
    expect(next.code).toBe(0)
    expect(next.stdout.trim()).toBe("continued fine")
  })
})

describe("reins run on a pipe", () => {
  test("no colour, no spinner, no escapes at all; the same lines; stdout is the answer only", async () => {
    const p = await setup(steps())
    const r = await reins(["run", "--yolo", "make notes"], { ...p, env: envOf(p) })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("All done: notes written.\n")
    expect(r.stderr).not.toContain("\x1b")
    expect(r.stderr).not.toContain("\r")
    const lines = r.stderr.split("\n")
    expect(lines[0]).toMatch(/^✓ write notes\.txt · \+2 −0 · (?:\d+ms|\d+\.\ds|\d+m \d\ds)$/)
    // the command's line shows how long it ran: at least its sleep
    expect(lines[1]).toMatch(/^✓ bash sleep 1\.5 && echo slept · exit 0 · \d+\.\ds$/)
    expect(seconds(lines[1])).toBeGreaterThanOrEqual(1.5)
    expect(lines[3]).toMatch(/^session ses_\w+ · 3 steps · 7k in \/ 82 out · \$0\.00 · cache 84% · [\d.]+m?s$/)
  })

  test("FORCE_COLOR colours the lines on a pipe, but draws no spinner", async () => {
    const p = await setup(steps())
    const r = await reins(["run", "--yolo", "make notes"], { ...p, env: envOf(p, { FORCE_COLOR: "1" }) })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("All done: notes written.\n")
    expect(r.stderr).toContain("\x1b[32m✓\x1b[39m \x1b[1mbash\x1b[22m")
    expect(r.stderr).not.toContain(ERASE_LINE)
    expect(r.stderr).not.toMatch(new RegExp(`[${FRAMES}]`))
  })

  test("a failing command and a tool error each get their line", async () => {
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "exit 3" } }] },
      { toolCalls: [{ name: "read", arguments: { filePath: "missing.txt" } }] },
      { text: "ok" }
    ])
    const r = await reins(["run", "--yolo", "try"], p)
    expect(r.code).toBe(0)
    const lines = r.stderr.split("\n")
    expect(lines[0]).toMatch(/^✗ bash exit 3 · exit 3 · (?:\d+ms|\d+\.\ds|\d+m \d\ds)$/)
    expect(lines[1]).toMatch(/^✗ read missing\.txt · File not found: /)
  })
})
